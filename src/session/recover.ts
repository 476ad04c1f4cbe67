import { planRestart, type RestartPlan, restoreState } from "../core/restore.js";
import type { CoreConfig, CoreState } from "../core/session-state.js";
import { frameOf } from "../vocabulary/frames.js";
import type { HistoryEvent } from "../vocabulary/log-events.js";
import type { CarryStore } from "./carry-store.js";
import type { HistoryStore } from "./history-store.js";
import type { TraceRow } from "./interpreter-ports.js";

/**
 * What a restart may carry over, from the shell: the speech and the model's handle it kept,
 * the tools' policies.
 */
export interface RecoveryCarry {
  speech: Pick<CarryStore, "read" | "keep" | "readHandle">;
  /** The timeout of a run again of the tool `name`, if it may run again with its key. */
  rerunTimeoutMs(name: string): number | null;
}

/**
 * Restart recovery, in one place: what was in flight when the old instance went away is
 * carried over where it can be (core/restore.ts `planRestart`: the turn whose answer had not
 * begun, calls that may run again, a client's open calls, speech not yet a turn) and closed
 * honestly in the log where it cannot; the core's state is rebuilt from the log. The closing
 * events are written here; the caller sends their frames to the clients still connected and
 * hands the core the plan's runs (`session_restored`). Without `carry`, everything in flight
 * is closed.
 */
export function recoverSession(
  store: Pick<HistoryStore, "readForRestore" | "readAfter" | "lastSeq" | "append" | "trace">,
  config: CoreConfig,
  clients: string[],
  now: number,
  carry: RecoveryCarry | null = null,
): { state: CoreState; closing: HistoryEvent[]; plan: RestartPlan } {
  // Only what a restore needs (calls, outcomes, handoffs, the last status, the last turn):
  // neither the log's text nor its older turns, so a restore costs the session's calls. An
  // open last turn's own events are read too: whether its reply was under way.
  const events = store.readForRestore();
  const lastUser = events.findLast((e) => e.kind === "user");
  const open =
    lastUser !== undefined &&
    !events.some(
      (e) =>
        (e.kind === "turn_complete" || e.kind === "interrupted") && e.turnId === lastUser.turnId,
    );
  const speech = carry?.speech.read() ?? null;
  // The model's handle covers the conversation if nothing but status changes came after it.
  const kept = carry?.speech.readHandle() ?? null;
  const resumeHandle =
    kept !== null && store.readAfter(kept.seq).every((e) => e.kind === "status")
      ? kept.handle
      : null;
  const plan = planRestart(
    config,
    events,
    carry === null
      ? null
      : {
          tail: open ? store.readAfter(lastUser.seq - 1) : [],
          speech,
          rerunTimeoutMs: (name) => carry.rerunTimeoutMs(name),
          resumeHandle,
        },
  );
  let seq = store.lastSeq();
  const closing = plan.closing.map((body) => ({ ...body, seq: ++seq, at: now }) as HistoryEvent);
  if (closing.length > 0)
    store.append(
      closing,
      closing.map((e) => JSON.stringify(frameOf(e))),
    );
  // The timeline says so too, as the core's own rows would.
  const rows = closing.flatMap((e): TraceRow[] => traceOf(e, now));
  if (plan.carriedTurn !== null)
    rows.push({
      at: now,
      kind: "TURN_CARRIED",
      detail: { turnId: plan.carriedTurn, restart: true },
    });
  if (rows.length > 0) store.trace(rows);
  // Kept speech is now a turn (or was said lost): it is not carried twice.
  if (speech !== null) carry?.speech.keep(null, now);
  const state = restoreState(config, [...events, ...closing], seq, plan);
  return { state: { ...state, clients }, closing, plan };
}

function traceOf(e: HistoryEvent, at: number): TraceRow[] {
  switch (e.kind) {
    case "tool_cancelled":
      return [{ at, kind: "TOOL_CANCELLED", detail: { callId: e.callId, reason: e.reason } }];
    case "interrupted":
      return [{ at, kind: "INTERRUPTED", detail: { turnId: e.turnId, reason: e.reason } }];
    case "user":
      return [{ at, kind: "USER", detail: { turnId: e.turnId, source: e.source } }];
    default:
      return [];
  }
}
