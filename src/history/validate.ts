import type { HistoryEvent } from "../vocabulary/log-events.js";

interface HistoryViolation {
  seq: number;
  rule: string;
  message: string;
}

/**
 * Checks the log's invariants: seqs contiguous; at most one call and one outcome (result
 * or cancellation) per call id; every outcome after its call, in the call's turn; at most
 * one turn end per turn, after the turn's user event. Returns every violation found.
 */
export function validateHistory(events: readonly HistoryEvent[]): HistoryViolation[] {
  const violations: HistoryViolation[] = [];
  const calls = new Map<string, HistoryEvent & { kind: "tool_call" }>();
  const outcomes = new Set<string>();
  const turnsStarted = new Set<string>();
  const turnsEnded = new Set<string>();
  const handoffs = new Set<string>();
  let expectedSeq = events[0]?.seq ?? 1;
  const add = (seq: number, rule: string, message: string) =>
    violations.push({ seq, rule, message });

  for (const event of events) {
    if (event.seq !== expectedSeq) {
      add(event.seq, "seq_contiguous", `expected seq ${expectedSeq}, found ${event.seq}`);
    }
    expectedSeq = event.seq + 1;
    switch (event.kind) {
      case "user":
        if (turnsStarted.has(event.turnId))
          add(event.seq, "one_user_event", `turn ${event.turnId} started twice`);
        turnsStarted.add(event.turnId);
        break;
      case "tool_call":
        if (calls.has(event.callId))
          add(event.seq, "one_call_per_id", `call ${event.callId} recorded twice`);
        else calls.set(event.callId, event);
        break;
      case "tool_result":
      case "tool_cancelled": {
        const call = calls.get(event.callId);
        if (!call)
          add(
            event.seq,
            "outcome_after_call",
            `${event.kind} for ${event.callId} has no earlier call`,
          );
        else if (call.turnId !== event.turnId)
          add(
            event.seq,
            "outcome_same_turn",
            `${event.kind} for ${event.callId} names another turn`,
          );
        if (outcomes.has(event.callId))
          add(event.seq, "one_outcome_per_call", `second outcome for call ${event.callId}`);
        outcomes.add(event.callId);
        break;
      }
      case "turn_complete":
      case "interrupted":
        if (!turnsStarted.has(event.turnId))
          add(event.seq, "turn_end_after_start", `turn ${event.turnId} ended before it started`);
        if (turnsEnded.has(event.turnId))
          add(event.seq, "one_turn_end", `turn ${event.turnId} ended twice`);
        turnsEnded.add(event.turnId);
        break;
      case "handoff":
        // A transfer call is answered before its handoff takes effect, once.
        if (event.callId !== undefined) {
          if (handoffs.has(event.callId))
            add(event.seq, "one_handoff_per_call", `call ${event.callId} handed off twice`);
          handoffs.add(event.callId);
        }
        break;
      case "model_text":
      case "transcript":
      case "status":
      case "error":
      case "delegation":
      case "session_limit":
        break;
      default: {
        const unreachable: never = event;
        throw new Error(`unknown history event ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return violations;
}

/** Calls in the log that have neither a result nor a cancellation. */
export function unansweredCalls(events: readonly HistoryEvent[]): string[] {
  const open = new Map<string, true>();
  for (const event of events) {
    if (event.kind === "tool_call") open.set(event.callId, true);
    else if (event.kind === "tool_result" || event.kind === "tool_cancelled")
      open.delete(event.callId);
  }
  return [...open.keys()];
}
