import type { HistoryEvent, HistoryEventBody, ToolOutcome } from "../vocabulary/log-events.js";
import { archiveSettledCalls } from "./call-archive.js";
import { transferHandoff } from "./handoff.js";
import { type CoreConfig, type CoreState, initialState } from "./session-state.js";

/**
 * Of a log's events, the ones a restore reads: every call, outcome and handoff,
 * the last status, and the last user turn with the turn ends after it. Restoring from these
 * gives the same state and the same closing events as from all of them (turn ids grow, so
 * the last user turn is the highest; only the last status counts; only the last user turn
 * can be open) — a property test holds the two to that. The store reads the same selection
 * through indexes (HistoryStore.readForRestore), so a restore costs the session's calls, not
 * its turns.
 */
export function restoreSelection(events: readonly HistoryEvent[]): HistoryEvent[] {
  const lastUser = events.findLastIndex((e) => e.kind === "user");
  const lastStatus = events.findLastIndex((e) => e.kind === "status");
  return events.filter(
    (e, i) =>
      e.kind === "tool_call" ||
      e.kind === "tool_result" ||
      e.kind === "tool_cancelled" ||
      e.kind === "handoff" ||
      i === lastStatus ||
      i === lastUser ||
      (lastUser >= 0 && i > lastUser && (e.kind === "turn_complete" || e.kind === "interrupted")),
  );
}

/**
 * The core's state for a session whose log already holds `events` (a restarted object),
 * after the closing events of `closingEventsAfterRestart` were appended: seq and turn
 * numbering go on, and every call the log knows is settled, so a late or repeated result
 * for one is refused as a duplicate rather than taken for an unknown call. `events` may be
 * the whole log or its `restoreSelection`: the state is the same.
 */
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
  // The tool-call cap counts every call of the session (the restore reads them all).
  state.toolCallCount = events.filter((e) => e.kind === "tool_call").length;
  // A goodbye under way when the object died (the last turn is the restore's): not a turn
  // the turns cap counts.
  if (events.findLast((e) => e.kind === "user")?.source === "limit") state.limitTurns = 1;
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
    // The logged result as the call's outcome (the log holds exactly one of the two).
    const outcome: ToolOutcome =
      e.error !== undefined ? { error: e.error } : { result: e.result ?? {} };
    const pending = transferHandoff(
      state,
      { id: e.callId, name: e.name, turnId: e.turnId },
      outcome,
    );
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

/**
 * What a session object that restarted (evicted, crashed, redeployed) appends before it goes
 * on: the model connection and every running tool died with the old instance, so the open
 * turn ends with `interrupted` (upstream_lost) and each call without an outcome is recorded
 * as cancelled. The log stays valid and pairable; clients see an honest end, never silence.
 */
export function closingEventsAfterRestart(events: readonly HistoryEvent[]): HistoryEventBody[] {
  const closing: HistoryEventBody[] = [];
  const openCalls = new Map<string, { turnId: string; name: string }>();
  let openTurn: string | null = null;
  for (const e of events) {
    switch (e.kind) {
      case "user":
        openTurn = e.turnId;
        break;
      case "turn_complete":
      case "interrupted":
        if (openTurn === e.turnId) openTurn = null;
        break;
      case "tool_call":
        openCalls.set(e.callId, { turnId: e.turnId, name: e.name });
        break;
      case "tool_result":
      case "tool_cancelled":
        openCalls.delete(e.callId);
        break;
      default:
        break;
    }
  }
  for (const [callId, call] of openCalls) {
    closing.push({
      kind: "tool_cancelled",
      turnId: call.turnId,
      callId,
      name: call.name,
      reason: "restart",
    });
  }
  if (openTurn !== null)
    closing.push({ kind: "interrupted", turnId: openTurn, reason: "upstream_lost" });
  return closing;
}
