import { owesSlot, sendInput } from "./follow-up.js";
import { type CoreState, capabilitiesOf, type TurnState } from "./state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";

/**
 * The turn watchdog: liveness before every defence. A turn that waits on the model — an
 * answer owed and not started, or a reply that stopped mid-stream — while the model shows no
 * sign of life past `modelTimeoutMs` is nudged (within the empty-reply budget, only if the
 * model has said nothing since it was asked and the connection is live), then ended with a
 * durable `model_timeout` error and its one turn end. Never while content streams: every
 * model event moves the deadline. The timer is set once per wait and re-arms itself lazily.
 */

/** The open turn is waiting on the model, and nothing else bounds the wait. */
export function waitingOnModel(s: CoreState, turn: TurnState): boolean {
  // A follow-up window has its own grace timer; a connection on its way, the upstream retry
  // policy (which gives up, and ends the turn, within a bounded number of attempts).
  if (s.followUpWindow !== null || s.upstream.phase !== "live") return false;
  if (!owesSlot(s, turn) && s.generation?.owner !== turn.id) return false;
  // A call the model waits for (a speak call; any call on a blocking-only model), running or
  // held for its batch, is the tools' wait, bounded by their timeouts.
  const blockingOnly = !capabilitiesOf(s).nonBlockingCalls;
  for (const call of Object.values(s.calls)) {
    if (call.turnId !== turn.id || (call.followUp !== "speak" && !blockingOnly)) continue;
    if (call.status === "running" || call.held !== undefined) return false;
  }
  return true;
}

function deadline(s: CoreState, turn: TurnState): number {
  return Math.max(s.lastModelSignAt, turn.askedAt) + s.config.modelTimeoutMs;
}

/** After every step: set the timer when a wait begins. */
export function armWatchdog(ctx: StepContext): void {
  const s = ctx.state;
  if (s.watchdogArmed || s.turn === null || s.ended || s.config.modelTimeoutMs <= 0) return;
  if (!waitingOnModel(s, s.turn)) return;
  s.watchdogArmed = true;
  ctx.emit({ type: "set_timer", timer: "watchdog", at: deadline(s, s.turn) });
}

export function onWatchdogTimer(ctx: StepContext): void {
  const s = ctx.state;
  s.watchdogArmed = false;
  const turn = s.turn;
  if (turn === null || s.ended || !waitingOnModel(s, turn)) return;
  const due = deadline(s, turn);
  if (ctx.now < due) {
    // The model showed life since the timer was set: wait the rest.
    s.watchdogArmed = true;
    ctx.emit({ type: "set_timer", timer: "watchdog", at: due });
    return;
  }
  const midReply = s.generation?.owner === turn.id;
  const mayNudge =
    !midReply &&
    !turn.contentSinceAsk &&
    s.upstream.phase === "live" &&
    s.config.guards.emptyRetry &&
    turn.emptyRetries < s.config.maxEmptyRetries;
  if (mayNudge) {
    // The nudge replaces what went unanswered: the turn waits for one answer, not two; the
    // slots it replaced stay in line as optional, so that a slow (not silent) model's late
    // generation is absorbed rather than taken for the next turn's answer. What it said
    // late may then be cut short: so clients are told, durably, that the model stalled.
    turn.optionalSlots = s.expected.filter((owner) => owner === turn.id).length;
    turn.emptyRetries++;
    s.counters.emptyRetries++;
    ctx.trace("WATCHDOG_NUDGE", { turnId: turn.id, attempt: turn.emptyRetries });
    ctx.recordError(
      "model_slow",
      `the model was silent for ${s.config.modelTimeoutMs} ms; asked it to continue`,
      turn.id,
    );
    sendInput(ctx, { type: "nudge", text: s.config.nudgeText }, turn.id);
    return;
  }
  s.counters.modelTimeouts++;
  ctx.trace("MODEL_TIMEOUT", { turnId: turn.id, midReply });
  ctx.recordError(
    "model_timeout",
    midReply
      ? `the model stopped mid-reply for ${s.config.modelTimeoutMs} ms`
      : `the model did not answer within ${s.config.modelTimeoutMs} ms`,
    turn.id,
  );
  endTurn(ctx, "complete");
}
