import type { HistoryEvent, HistoryEventBody } from "../vocabulary/events.js";

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
