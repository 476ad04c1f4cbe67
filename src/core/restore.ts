import type { HistoryEvent } from "../vocabulary/events.js";
import { archiveSettledCalls } from "./call-archive.js";
import { type CoreConfig, type CoreState, initialState } from "./state.js";
import { transferHandoff } from "./tools.js";

/**
 * The core's state for a session whose log already holds `events` (a restarted object),
 * after the closing events of `closingEventsAfterRestart` were appended: seq and turn
 * numbering go on, and every call the log knows is settled, so a late or repeated result
 * for one is refused as a duplicate rather than taken for an unknown call. Only the
 * structural events are read (RESTORE_KINDS): the log's text is not needed to go on.
 */
export const RESTORE_KINDS = [
  "user",
  "turn_complete",
  "interrupted",
  "tool_call",
  "tool_result",
  "tool_cancelled",
  "status",
  "handoff",
] as const satisfies readonly HistoryEvent["kind"][];

export function restoreState(
  config: CoreConfig,
  events: readonly HistoryEvent[],
  lastSeq: number = events.at(-1)?.seq ?? 0,
): CoreState {
  let turnCount = 0;
  for (const e of events) {
    if (e.kind === "user") turnCount = Math.max(turnCount, Number(e.turnId.slice(1)) || 0);
  }
  const state = initialState(config, lastSeq, turnCount);
  // A session that ended (or failed for good) stays ended across restarts.
  const lastStatus = events.findLast((e) => e.kind === "status");
  if (lastStatus?.kind === "status" && lastStatus.state === "ended") state.ended = true;
  // The agent that speaks now: the last handoff's; a transfer answered but not yet in effect
  // (the object died in between) still takes effect.
  const handedOff = new Set<string>();
  for (const e of events) {
    if (e.kind !== "handoff") continue;
    state.agent = e.to;
    if (e.callId !== undefined) handedOff.add(e.callId);
  }
  for (const e of events) {
    if (e.kind !== "tool_result" || handedOff.has(e.callId)) continue;
    const pending = transferHandoff(state, { id: e.callId, name: e.name, turnId: e.turnId }, e);
    if (pending !== null) state.pendingHandoff = pending;
  }
  for (const e of events) {
    if (e.kind === "tool_call") {
      state.calls[e.callId] = {
        id: e.callId,
        name: e.name,
        turnId: e.turnId,
        runOn: e.runOn,
        followUp: config.tools[e.name]?.followUp ?? "speak",
        status: "cancelled",
        delivery: "withheld",
        batch: "restored",
      };
    } else if (e.kind === "tool_result") {
      const call = state.calls[e.callId];
      if (call) call.status = "answered";
    }
  }
  archiveSettledCalls(state);
  return state;
}
