import type {
  LogRead,
  SessionResource,
  SessionStats,
  TimelineRow,
} from "../contracts/session-api.js";
import { type PriceOverrides, priceFor } from "../metering/prices.js";
import { type SessionReport, sessionReport } from "../metering/session-report.js";
import type { OtlpExporter } from "../telemetry/exporter.js";
import type { HistoryStore } from "./history-store.js";
import type { SessionInterpreter } from "./interpreter.js";
import type { SessionMeta } from "./meta.js";
import type { SessionClosing } from "./session-closing.js";
import type { SubrequestMeter } from "./subrequests.js";
import type { UsageStore } from "./usage-store.js";

/** What the record reads of its running session. */
export interface RecordedSession {
  readonly interpreter: SessionInterpreter;
  /** The model the session's current agent asks for. */
  readonly model: string;
}

/**
 * The session as an operator reads it: its log (GET /history), its timeline, its description
 * (GET /v1/sessions/:id) with what it cost, and its stats. Reads only.
 */
export class SessionRecord {
  constructor(
    private readonly session: RecordedSession,
    private readonly meta: SessionMeta,
    private readonly store: HistoryStore,
    private readonly usage: UsageStore,
    private readonly closing: SessionClosing,
    private readonly subrequests: SubrequestMeter,
    private readonly exporter: OtlpExporter | null,
    /** The app's prices, by model id, over the shipped ones. */
    private readonly prices: PriceOverrides,
    private readonly startedAt: number,
  ) {}

  /** GET /history's JSON body, straight from the log: a page, or the whole log streamed. */
  history(read: LogRead): ReadableStream<Uint8Array> | string {
    if ("page" in read)
      return this.store.historyPage(this.meta.agent, read.page.after, read.page.limit);
    return this.store.historyStream(this.meta.agent);
  }

  /** GET /timeline's rows: a page of them (ms since the session started), with the next cursor. */
  timelinePage(after: number, limit: number): { rows: TimelineRow[]; next: string | null } {
    return this.store.timelinePage(this.startedAt, after, limit);
  }

  /** GET /timeline streamed: `head` (its fields before `rows`), the rows, `tail()` (after them). */
  timelineStream(head: string, tail: () => string): ReadableStream<Uint8Array> {
    return this.store.timelineStream(this.startedAt, head, tail);
  }

  /** Timeline rows the cap dropped (the oldest). */
  timelineDropped(): number {
    return this.store.timelineDropped();
  }

  timeline(): { ms: number; kind: string; detail?: unknown }[] {
    return this.store
      .timeline()
      .map(({ at, kind, detail }) =>
        detail === undefined
          ? { ms: at - this.startedAt, kind }
          : { ms: at - this.startedAt, kind, detail },
      );
  }

  /** The session as an operator sees it (GET /v1/sessions/:id), but for its socket count. */
  describe(): Omit<SessionResource, "clients"> {
    const state = this.session.interpreter.state;
    return {
      sessionId: this.meta.sessionId,
      createdAt: this.meta.createdAt,
      agent: state.agent,
      provider: this.meta.provider,
      model: this.session.model,
      connection: state.ended ? "ended" : state.upstream.phase,
      lastSeq: state.nextSeq - 1,
      usage: this.usage.totals(),
      ...this.report(),
      closing: this.closing.closingRecord(),
    };
  }

  /** What the session cost and how fast it answered, per turn and in total. */
  report(): SessionReport {
    return sessionReport(this.usage.byTurn(), this.timeline(), this.session.model, (model) =>
      priceFor(model, this.prices),
    );
  }

  stats(databaseBytes: number, objectStartedAt: number): SessionStats {
    const { interpreter } = this.session;
    const state = interpreter.state;
    return {
      events: this.store.lastSeq(),
      objectStartedAt,
      transactions: interpreter.transactions,
      modelEvents: interpreter.modelEvents,
      databaseBytes,
      stateBytes: JSON.stringify({ ...state, config: null, archive: null }).length,
      callsInState: Object.keys(state.calls).length,
      audioPassed: { ...interpreter.passed },
      counters: { ...state.counters },
      ...(this.exporter === null ? {} : { traces: { ...this.exporter.counts } }),
      subrequests: this.subrequests.stats(),
    };
  }
}
