/**
 * A handoff to an agent that announces itself: the turn that asked for it is not ended when
 * the old agent has finished; it is held for the new agent's one line (handoff.ts applies
 * the handoff in the same step and asks the new agent), and ends once, after that line.
 */
import { modelSettled, type TurnState } from "./session-state.js";
import type { StepContext } from "./step-context.js";

/**
 * Called where `turn` would end complete. Holds it (true) when a handoff waits for exactly
 * this moment and its agent announces itself; the handoff then applies in this same step
 * (maybeApplyHandoff), which ends the turn itself if it cannot.
 */
export function keepForArrival(ctx: StepContext, turn: TurnState): boolean {
  const s = ctx.state;
  const pending = s.pendingHandoff;
  if (pending === null || s.ended || turn.announce !== undefined) return false;
  // Its own transfer turn, or any turn for a handoff the app asked for mid-turn.
  if (pending.turnId !== undefined && pending.turnId !== turn.id) return false;
  if ((s.config.agentArrival?.[pending.to] ?? "announce") !== "announce") return false;
  if (!s.config.guards.oneTurnComplete || !s.config.guards.carryTurns) return false;
  // Nothing else in flight (what maybeApplyHandoff waits for): else it ends as usual.
  if (!modelSettled(s)) return false;
  turn.announce = { from: s.agent, to: pending.to, reason: pending.reason };
  turn.modelEnded = true;
  // A turn carried over a lost connection earlier has had its answer: what it waits for now
  // is the handoff alone (which carries it to the new agent's connection).
  turn.carried = undefined;
  return true;
}

/** The held turn waits for nothing but the handoff: it ends as it would have. */
export function awaitsArrival(turn: TurnState | null): boolean {
  return turn !== null && turn.announce !== undefined && turn.carried === undefined;
}

/** What the new agent is asked to do (a hidden user line, as a nudge is). */
export function announceInstruction(a: { from: string; to: string; reason: string }): string {
  const why = a.reason.trim() === "" ? "" : ` (${a.reason.trim()})`;
  return `The conversation has just been handed to you, the ${a.to} agent, by the ${a.from} agent${why}. Introduce yourself to the user in one short sentence and offer your help with what they asked for. Do not call any tool for this.`;
}
