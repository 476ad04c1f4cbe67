import { closingEventsAfterRestart, restoreState } from "../core/restore.js";
import type { CoreConfig, CoreState } from "../core/session-state.js";
import { frameOf } from "../vocabulary/frames.js";
import type { HistoryEvent } from "../vocabulary/log-events.js";
import type { HistoryStore } from "./history-store.js";
import type { TraceRow } from "./interpreter.js";

/**
 * Restart recovery, in one place: what died with the old instance (an open turn, running
 * calls) is closed honestly in the log, and the core's state is rebuilt from the log. The
 * closing events are written here; the caller sends their frames to the clients still
 * connected.
 */
export function recoverSession(
  store: HistoryStore,
  config: CoreConfig,
  clients: string[],
  now: number,
): { state: CoreState; closing: HistoryEvent[] } {
  // Only what a restore needs (calls, outcomes, handoffs, the last status, the last turn):
  // neither the log's text nor its older turns, so a restore costs the session's calls.
  const events = store.readForRestore();
  let seq = store.lastSeq();
  const closing = closingEventsAfterRestart(events).map(
    (body) => ({ ...body, seq: ++seq, at: now }) as HistoryEvent,
  );
  if (closing.length > 0) {
    store.append(
      closing,
      closing.map((e) => JSON.stringify(frameOf(e))),
    );
    // The timeline says so too, as the core's own rows would.
    store.trace(
      closing.flatMap((e): TraceRow[] =>
        e.kind === "tool_cancelled"
          ? [
              {
                at: now,
                kind: "TOOL_CANCELLED",
                detail: { callId: e.callId, reason: e.reason },
              },
            ]
          : e.kind === "interrupted"
            ? [
                {
                  at: now,
                  kind: "INTERRUPTED",
                  detail: { turnId: e.turnId, reason: e.reason },
                },
              ]
            : [],
      ),
    );
  }
  return { state: { ...restoreState(config, [...events, ...closing], seq), clients }, closing };
}
