/**
 * A session's turns as traces: each step's timeline rows are noted by turn (a call's rows by
 * its call's turn); a turn that ended, with its calls settled, becomes spans
 * (telemetry/spans.ts), and the exporter sends them in a batch after a short delay — never on
 * a frame's path. A turn whose rows this object did not see from its input (it restarted
 * during the turn) is not traced.
 */
import type { Cost } from "../metering/cost.js";
import type { TraceRowAt } from "../metering/latency.js";
import { OtlpExporter } from "../telemetry/exporter.js";
import { traceExport } from "../telemetry/otel-settings.js";
import { type SpanIds, turnSpans } from "../telemetry/spans.js";
import type { ToolPolicy, UsageTotals } from "../vocabulary/model.js";
import type { Config } from "../worker-config.js";
import type { TraceRow } from "./interpreter-ports.js";
import type { SubrequestMeter } from "./subrequests.js";

/** Spans wait this long for a batch (and a turn's late rows: a silent result, its usage). */
const BATCH_DELAY_MS = 1_000;
/** A turn waits at most this long past its end for a call still running, then is traced. */
const UNSETTLED_CALLS_MS = 30_000;

/** What the tracer reads of its session when it builds a turn's spans. */
export interface TracedSession {
  sessionId: string;
  provider: string;
  agent(): string;
  model(): string;
  usageOf(turnId: string): { usage: UsageTotals; cost: Cost } | null;
  policies(): Readonly<Record<string, ToolPolicy>>;
}

interface OpenTurn {
  rows: TraceRowAt[];
  endedAt: number | null;
  /** Calls made in the turn with no outcome yet. */
  running: Set<string>;
}

const randomHex = (bytes: number): string =>
  [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

const IDS: SpanIds = { traceId: () => randomHex(16), spanId: () => randomHex(8) };

/** A session's exporter and tracer, when a collector is configured (else null). */
export function sessionTracer(
  config: Config,
  subrequests: SubrequestMeter,
  session: TracedSession,
): { exporter: OtlpExporter; tracer: TurnTracer } | null {
  const traces = traceExport(config);
  if (traces === null) return null;
  const exporter = new OtlpExporter(
    traces,
    (m) => console.warn(`liveline: ${m}`),
    subrequests.fetcher("traces", (input, init) => fetch(input, init)),
    // Near the subrequest budget, a batch waits for nothing: it is dropped (and counted).
    () => subrequests.admit("traces"),
  );
  return { exporter, tracer: new TurnTracer(exporter, session) };
}

export class TurnTracer {
  private readonly turns = new Map<string, OpenTurn>();
  private readonly callTurns = new Map<string, string>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly exporter: OtlpExporter,
    private readonly session: TracedSession,
  ) {}

  /** A step's timeline rows (the trace port): noted, nothing more. */
  observe(rows: readonly TraceRow[]): void {
    for (const row of rows) {
      const detail = row.detail ?? {};
      const callId = typeof detail.callId === "string" ? detail.callId : undefined;
      const turnId =
        typeof detail.turnId === "string"
          ? detail.turnId
          : callId === undefined
            ? undefined
            : this.callTurns.get(callId);
      if (turnId === undefined) continue;
      if (row.kind === "USER")
        this.turns.set(turnId, { rows: [], endedAt: null, running: new Set() });
      const turn = this.turns.get(turnId);
      if (turn === undefined) continue;
      turn.rows.push({ ms: row.at, kind: row.kind, detail: row.detail });
      switch (row.kind) {
        case "TOOL_CALL":
          if (callId === undefined) break;
          this.callTurns.set(callId, turnId);
          turn.running.add(callId);
          break;
        case "TOOL_RESPONSE":
        case "TOOL_CANCELLED":
          if (callId !== undefined) turn.running.delete(callId);
          break;
        case "TURN_COMPLETE":
        case "INTERRUPTED":
          turn.endedAt ??= row.at;
          this.schedule();
          break;
      }
    }
  }

  /** Traces every ended turn now and sends what is queued (the session is going away). */
  flushNow(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.build(Number.POSITIVE_INFINITY);
    return this.exporter.flush();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.build(Date.now());
      void this.exporter.flush();
      // A turn still waiting for a call is looked at again.
      if ([...this.turns.values()].some((t) => t.endedAt !== null)) this.schedule();
    }, BATCH_DELAY_MS);
  }

  /** Spans for each ended turn whose calls have settled (or waited long enough). */
  private build(now: number): void {
    for (const [turnId, turn] of this.turns) {
      if (turn.endedAt === null) continue;
      if (turn.running.size > 0 && now - turn.endedAt < UNSETTLED_CALLS_MS) continue;
      this.turns.delete(turnId);
      for (const row of turn.rows)
        if (row.kind === "TOOL_CALL")
          this.callTurns.delete(String((row.detail as { callId?: unknown }).callId));
      const used = this.session.usageOf(turnId);
      this.exporter.add(
        turnSpans(
          {
            sessionId: this.session.sessionId,
            agent: this.session.agent(),
            provider: this.session.provider,
            model: this.session.model(),
            turnId,
            rows: turn.rows,
            usage: used?.usage ?? null,
            cost: used?.cost ?? null,
            policies: this.session.policies(),
          },
          IDS,
        ),
      );
    }
  }
}
