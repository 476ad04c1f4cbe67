/**
 * How long each turn took, read from the session's timeline (its trace rows): from the
 * user's input to the model's first byte and to the turn's end, and each tool call's run.
 * Read when asked (GET /v1/sessions/:id), never on the path of a frame.
 */

/** A timeline row as the session keeps it: milliseconds since the session started. */
export interface TraceRowAt {
  ms: number;
  kind: string;
  detail?: unknown;
}

export interface ToolLatency {
  callId: string;
  name: string;
  /** From the call to its outcome (a result, or its cancellation). */
  ms: number;
  outcome: "result" | "error" | "cancelled";
}

export interface TurnLatency {
  turnId: string;
  /** How the turn began: a typed line, speech, or the model on its own. */
  source: string;
  /**
   * From the end of the user's input to the model's first byte (text or audio). Only for a
   * typed line, whose end the gateway sees; a spoken turn opens when the model's reply
   * shows it heard the speech, so this figure would be the wire's, not the model's (null).
   */
  firstByteMs: number | null;
  /** From the turn's opening (a typed line: its arrival) to its end; null while it is open. */
  turnMs: number | null;
  tools: ToolLatency[];
}

export interface Percentiles {
  count: number;
  p50: number | null;
  p95: number | null;
}

export interface LatencySummary {
  firstByteMs: Percentiles;
  turnMs: Percentiles;
  toolMs: Percentiles;
}

type Detail = Record<string, unknown>;

function detailOf(row: TraceRowAt): Detail {
  return typeof row.detail === "object" && row.detail !== null ? (row.detail as Detail) : {};
}

/** Each turn's latencies, in the order the turns began. */
export function turnLatencies(rows: readonly TraceRowAt[]): TurnLatency[] {
  const turns = new Map<string, TurnLatency & { openedAt: number }>();
  const calls = new Map<string, { at: number; name: string; turnId: string }>();
  for (const row of rows) {
    const d = detailOf(row);
    const turnId = typeof d.turnId === "string" ? d.turnId : undefined;
    const turn = turnId === undefined ? undefined : turns.get(turnId);
    switch (row.kind) {
      case "USER":
        if (turnId !== undefined && turn === undefined)
          turns.set(turnId, {
            turnId,
            source: typeof d.source === "string" ? d.source : "text",
            openedAt: row.ms,
            firstByteMs: null,
            turnMs: null,
            tools: [],
          });
        break;
      case "MODEL_TEXT":
      case "MODEL_AUDIO":
        if (turn !== undefined && turn.source === "text" && turn.firstByteMs === null)
          turn.firstByteMs = row.ms - turn.openedAt;
        break;
      case "TURN_COMPLETE":
      case "INTERRUPTED":
        if (turn !== undefined && turn.turnMs === null) turn.turnMs = row.ms - turn.openedAt;
        break;
      case "TOOL_CALL":
        if (turnId !== undefined && typeof d.callId === "string")
          calls.set(d.callId, { at: row.ms, name: String(d.name ?? ""), turnId });
        break;
      case "TOOL_RESPONSE":
      case "TOOL_CANCELLED": {
        const call = typeof d.callId === "string" ? calls.get(d.callId) : undefined;
        if (call === undefined) break;
        calls.delete(d.callId as string);
        const outcome =
          row.kind === "TOOL_CANCELLED" ? "cancelled" : d.error === true ? "error" : "result";
        turns.get(call.turnId)?.tools.push({
          callId: d.callId as string,
          name: call.name,
          ms: row.ms - call.at,
          outcome,
        });
        break;
      }
    }
  }
  return [...turns.values()].map(({ openedAt: _, ...turn }) => turn);
}

/** Nearest-rank percentiles (no interpolation: every figure is one that was measured). */
export function percentiles(values: readonly number[]): Percentiles {
  if (values.length === 0) return { count: 0, p50: null, p95: null };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
  return { count: sorted.length, p50: rank(50), p95: rank(95) };
}

export function summarise(turns: readonly TurnLatency[]): LatencySummary {
  const known = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);
  return {
    firstByteMs: percentiles(known(turns.map((t) => t.firstByteMs))),
    turnMs: percentiles(known(turns.map((t) => t.turnMs))),
    toolMs: percentiles(turns.flatMap((t) => t.tools.map((tool) => tool.ms))),
  };
}
