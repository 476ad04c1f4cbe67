/**
 * Handoff: the session passes from one agent to another. A transfer call the model made (its
 * tool's result asks for it) or the app's request makes a handoff pending; it takes effect
 * once nothing is in flight, on the live connection where both agents share a link, else on
 * a new connection set up for the new agent. Two parts live elsewhere, below or above this
 * module: the turn held for the new agent's announcement (arrival.ts, which turns.ts and
 * carry.ts read), and the cancelling of a transfer turn's other calls (tools.ts,
 * cancelForTransfer: cancelling is the tools module's, and it builds on this one).
 */
import type { ToolOutcome } from "../vocabulary/log-events.js";
import { awaitsArrival } from "./arrival.js";
import { closeTurnOnUpstreamLoss, resumeCarriedTurn } from "./carry.js";
import {
  type CallState,
  type CoreState,
  modelSettled,
  type PendingHandoff,
  policyOf,
} from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";
import { reconnectNow } from "./upstream.js";

/**
 * The app asks for a handoff (not a transfer call): it waits, like one, until nothing is in
 * flight. An agent the session cannot reach, or the one that speaks now, changes nothing.
 */
export function requestHandoff(ctx: StepContext, to: string, reason: string): void {
  const s = ctx.state;
  if (s.ended || s.config.agentTools?.[to] === undefined) {
    ctx.trace("HANDOFF", { to, ignored: true });
    return;
  }
  // A transfer the model made (its result says so) is neither called off nor redirected by
  // the app's backend (the shell refuses such a request with the reason).
  if (s.pendingHandoff?.callId !== undefined) {
    ctx.trace("HANDOFF", { to, ignored: true });
    return;
  }
  // Back to the agent that speaks now: a pending handoff is called off.
  s.pendingHandoff = to === s.agent ? null : { to, reason };
  if (to === s.agent) ctx.trace("HANDOFF", { to, revoked: true });
}

/**
 * New user input while a handoff waits for a turn that has already ended (the transfer turn
 * was cut short by that very input): the new agent answers it, so the handoff goes first and
 * the input waits for the new connection (the outbox). Called before the input is taken.
 */
export function handoffBeforeInput(ctx: StepContext): void {
  const s = ctx.state;
  const pending = s.pendingHandoff;
  // Only between turns (an open one, the transfer turn or any other, ends first), and not
  // while the old connection hears speech it has not answered: that audio went to it, so its
  // answer comes from it, and the handoff follows that turn (never a false speech_lost).
  if (pending === null || s.turn !== null || s.speechDetected) return;
  applyHandoff(ctx, pending);
}

/**
 * A pending handoff takes effect once nothing is in flight: the old agent has said what it
 * owed (its turn ended once), no call runs. The agent changes in the log (a `handoff` frame),
 * and the connection is replaced: a new setup for the new agent, the conversation seeded from
 * the log (a resumption handle would keep the old agent's setup). Not connected: the next
 * connection opens as the new agent.
 */
export function maybeApplyHandoff(ctx: StepContext): void {
  const s = ctx.state;
  const pending = s.pendingHandoff;
  // A turn held for the new agent's announcement (arrival.ts): applied now, or ended as usual.
  const held = awaitsArrival(s.turn);
  const ready =
    pending !== null &&
    !s.ended &&
    (s.turn === null || held) &&
    // Nothing the old agent still says (calls still running are cancelled: the new
    // connection's seeded context closes them so, and a late result is refused, never split
    // from its call).
    modelSettled(s);
  // Calls whose tools say `finish` are waited for (each bounded by its timeout); a held
  // turn goes on waiting with them.
  if (ready && finishing(s)) return;
  if (ready) applyHandoff(ctx, pending, held);
  else if (held) endTurn(ctx, "complete");
}

/** A call still runs whose tool finishes before a handoff (`onHandoff: "finish"`). */
function finishing(s: CoreState): boolean {
  return Object.values(s.calls).some(
    (c) => c.status === "running" && policyOf(s, c.name)?.onHandoff === "finish",
  );
}

function applyHandoff(ctx: StepContext, pending: PendingHandoff, announce = false): void {
  const s = ctx.state;
  s.pendingHandoff = null;
  const from = s.agent;
  const up = s.upstream;
  const links = s.config.agentLinks;
  // One provider link for both agents (OpenAI): the live connection takes the new setup.
  const inPlace =
    up.phase === "live" && links?.[from] !== undefined && links[from] === links[pending.to];
  // Calls still running go with the old agent, said as such (first: the loss below would
  // cancel them as `upstream_lost`).
  ctx.cancelRunningCalls(null, "handoff");
  // What is left of a replaced connection's work goes with it (nothing of a turn: none is
  // open). Kept in place, the connection still answers what it was sent: those answers keep
  // their (ownerless) slots, so that they are absorbed and not taken for the next input's.
  if (!inPlace && (s.generation !== null || s.expected.length > 0 || s.followUpWindow !== null))
    closeTurnOnUpstreamLoss(ctx);
  s.agent = pending.to;
  ctx.record({ kind: "handoff", from, ...pending });
  ctx.trace("HANDOFF", { from, to: pending.to, callId: pending.callId });
  // (The naive relay archives no calls: its transfer call is still in `calls`.)
  const call = pending.callId === undefined ? undefined : s.calls[pending.callId];
  if (!s.config.guards.dedupeResults && call !== undefined) {
    // The naive relay (a measurement arm) hands off as agent frameworks do: the transfer tool
    // answered the call, and the coordinator acknowledges the handoff with a second function
    // result for the same call id (Microsoft agent-framework issue 2711). liveline's one
    // answer is the transfer tool's; its store would refuse a second.
    ctx.record({
      kind: "tool_result",
      turnId: call.turnId,
      callId: call.id,
      name: call.name,
      result: { acknowledged: true, agent: pending.to },
    });
  }
  if (inPlace) {
    // The adapter holds the update while a response is active; the held turn asks at once.
    ctx.emit({ type: "update_upstream", agent: pending.to });
    if (announce && s.turn !== null) {
      s.turn.carried = "pending";
      resumeCarriedTurn(ctx);
    }
    return;
  }
  up.handle = null;
  up.goingAway = false;
  if (up.phase === "live" || up.phase === "connecting" || up.phase === "reconnecting") {
    // The held turn goes on on the new connection: it asks the new agent once it is live.
    if (announce && s.turn !== null) s.turn.carried = "pending";
    reconnectNow(ctx, "handoff");
  } else if (announce) endTurn(ctx, "complete");
}

/**
 * A transfer call answered without error asks for a handoff; it takes effect when nothing is
 * in flight (maybeApplyHandoff). One at a time: a second transfer while one is
 * pending gets its result but changes nothing.
 */
export function noteHandoff(ctx: StepContext, call: CallState, outcome: ToolOutcome): boolean {
  const s = ctx.state;
  if (s.pendingHandoff !== null) return false;
  s.pendingHandoff = transferHandoff(s, call, outcome);
  return s.pendingHandoff !== null;
}

/**
 * The handoff a call's outcome asks for: a transfer tool's result without error, to an
 * agent other than the one that speaks now (also read by restore.ts, from the log), or null.
 */
export function transferHandoff(
  s: CoreState,
  call: Pick<CallState, "id" | "name" | "turnId">,
  outcome: ToolOutcome,
): PendingHandoff | null {
  const to = s.config.handoffTools?.[call.name];
  if (to === undefined || outcome.error !== undefined || to === s.agent) return null;
  const reason = typeof outcome.result?.reason === "string" ? outcome.result.reason : "";
  return { to, reason, callId: call.id, turnId: call.turnId };
}
