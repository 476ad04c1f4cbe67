import { nudgeLeft, owesSlot, sendInput } from "./follow-up.js";
import { type CoreState, capabilitiesOf, type TurnState } from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";

/**
 * The turn watchdog: liveness before every defence, and a slow model is not a silent one. A
 * turn that waits on the model — an answer owed and not started, or a reply that stopped
 * mid-stream — while the model shows no sign of life for `modelTimeoutMs` is looked at:
 * - after tool results with nothing said since (the empty reply seen in the field), and no
 *   sign that a generation has begun, the model is nudged, within the empty-reply budget;
 * - otherwise it may be slow (thinking models take seconds to a first byte): a durable
 *   `model_slow` says so and the wait goes on, SLOW_WAITS more periods; a nudge would cut the
 *   answer it is preparing (on Gemini, new input interrupts the generation);
 * - then, or when the model stopped mid-reply, the turn ends with a durable `model_timeout`.
 * Every model event moves the deadline. The timer is set once per wait and re-arms lazily.
 */
export const SLOW_WAITS = 2;

/**
 * The open turn's utterance, on a turnless model, has been said and may have ended: not while
 * a reply liveline asked for is on its way or still coming on the wire (a quiet voice is then
 * a slow reply).
 */
export function utteranceMayHaveEnded(s: CoreState, turn: TurnState): boolean {
  const gen = s.generation;
  if (gen === null || gen.owner !== turn.id || !gen.hasContent || gen.interrupted) return false;
  if ((s.replyOpen || s.replyAsked) && s.config.guards.openRepliesOutlastQuiet) return false;
  // The agent's record as configured (what capabilitiesOf adjusts, SILENT, is not read): read
  // here, on every model event of a reply, without a call into another module.
  return (s.config.agentCapabilities?.[s.agent] ?? s.config.capabilities).turnless === true;
}

/**
 * The open turn waits for a model connection being opened: the retry policy bounds that wait
 * (it gives up, and ends the turn, within a bounded number of attempts), but a connection that
 * takes long is said to be slow, each period, as a slow model is.
 */
function waitingOnConnection(s: CoreState, turn: TurnState): boolean {
  const phase = s.upstream.phase;
  return (phase === "connecting" || phase === "reconnecting") && owesSlot(s, turn);
}

/** The open turn is waiting on the model, and nothing else bounds the wait. */
export function waitingOnModel(s: CoreState, turn: TurnState): boolean {
  // A follow-up window has its own grace timer; a connection on its way, the retry policy.
  if (s.followUpWindow !== null || s.upstream.phase !== "live") return false;
  if (!owesSlot(s, turn) && s.generation?.owner !== turn.id) return false;
  return !callsHoldReply(s, turn);
}

/**
 * The turn's reply waits on its tools, not on the model: a call the model waits for (a speak
 * call; any call on a blocking-only model, or, for a reply the turn is owed, on a wire whose
 * reply needs every call's output first: GPT-Live's backend) is running or held for its
 * batch. Their timeouts bound it.
 */
export function callsHoldReply(s: CoreState, turn: TurnState): boolean {
  const caps = capabilitiesOf(s);
  const everyCall =
    !caps.nonBlockingCalls || (caps.answersCancelledCalls === true && owesSlot(s, turn));
  for (const call of Object.values(s.calls)) {
    if (call.turnId !== turn.id || (call.followUp !== "speak" && !everyCall)) continue;
    if (call.status === "running" || call.held !== undefined) return true;
  }
  return false;
}

function deadline(s: CoreState, turn: TurnState): number {
  const since = Math.max(s.lastModelSignAt, turn.askedAt, turn.waitedAt);
  if (!utteranceMayHaveEnded(s, turn)) return since + s.config.modelTimeoutMs;
  // Quiet once its speech is over, not once its last piece came (speech-clock.ts).
  return Math.max(since, s.speechClock.endsAt) + s.config.utteranceQuietMs;
}

/**
 * The watchdog fired for a turnless model's utterance that stayed quiet: it is over (the
 * session core ends it as the model's own end would). False when the watchdog handles it.
 */
export function utteranceQuiet(ctx: StepContext): boolean {
  const s = ctx.state;
  const turn = s.turn;
  if (turn === null || s.ended || !utteranceMayHaveEnded(s, turn)) return false;
  if (ctx.now < deadline(s, turn)) return false;
  s.watchdogSet = false;
  ctx.trace("UTTERANCE_QUIET", { turnId: turn.id, quietMs: s.config.utteranceQuietMs });
  return true;
}

/** After every step: set the timer when a wait begins. */
export function setWatchdog(ctx: StepContext): void {
  const s = ctx.state;
  if (s.turn === null || s.ended || s.config.modelTimeoutMs <= 0) return;
  // A turnless model's utterance: its quiet deadline moves with every sign of it, so the
  // timer is set again each step (the usual wait re-arms lazily, from a deadline that only
  // grows; this one starts out shorter than the wait it replaces).
  const quiet = utteranceMayHaveEnded(s, s.turn);
  if (s.watchdogSet && !quiet) return;
  if (!waitingOnModel(s, s.turn) && !waitingOnConnection(s, s.turn)) return;
  s.watchdogSet = true;
  ctx.emit({ type: "set_timer", timer: "watchdog", at: deadline(s, s.turn) });
}

export function onWatchdogTimer(ctx: StepContext): void {
  const s = ctx.state;
  s.watchdogSet = false;
  const turn = s.turn;
  if (turn === null || s.ended) return;
  const connecting = waitingOnConnection(s, turn);
  if (!connecting && !waitingOnModel(s, turn)) return;
  const due = deadline(s, turn);
  if (ctx.now < due) {
    // The model showed life since the timer was set: wait the rest.
    s.watchdogSet = true;
    ctx.emit({ type: "set_timer", timer: "watchdog", at: due });
    return;
  }
  if (connecting) {
    // No end from here: the retry policy gives up in bounded time, and ends the turn then.
    waitAnotherPeriod(
      ctx,
      turn,
      `the model connection is not set up after ${ctx.now - turn.askedAt} ms; still trying`,
      { connecting: true },
    );
    return;
  }
  const midReply = s.generation?.owner === turn.id;
  // A generation has begun since the turn asked (the model said it works on it): never cut it.
  const begun = s.lastWorkAt >= turn.askedAt;
  const mayNudge =
    !midReply &&
    !begun &&
    !turn.contentSinceAsk &&
    turn.resultsSinceContent > 0 &&
    s.upstream.phase === "live" &&
    s.config.guards.emptyRetry &&
    turn.emptyRetries < s.config.maxEmptyRetries &&
    nudgeLeft(s, turn);
  if (mayNudge) {
    // The nudge replaces what went unanswered: the turn waits for one answer, not two; the
    // slots it replaced stay in line as optional, so that a slow (not silent) model's late
    // generation is absorbed rather than taken for the next turn's answer. What it said
    // late may then be cut short: so clients are told, durably, that the model stalled.
    turn.optionalSlots = s.expected.filter((owner) => owner === turn.id).length;
    turn.emptyRetries++;
    turn.nudges++;
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
  if (!midReply && turn.slowWaits < SLOW_WAITS) {
    // Slow, perhaps, not silent: its answer still belongs to this turn. Clients are told, each
    // period, that it is still awaited.
    turn.slowWaits++;
    waitAnotherPeriod(
      ctx,
      turn,
      `no answer from the model for ${s.config.modelTimeoutMs * turn.slowWaits} ms; still waiting`,
      { wait: turn.slowWaits },
    );
    return;
  }
  s.counters.modelTimeouts++;
  ctx.trace("MODEL_TIMEOUT", { turnId: turn.id, midReply });
  ctx.recordError(
    "model_timeout",
    midReply
      ? `the model stopped mid-reply for ${s.config.modelTimeoutMs} ms`
      : `the model did not answer within ${s.config.modelTimeoutMs * (turn.slowWaits + 1)} ms`,
    turn.id,
  );
  // What it still sends for this turn is named when it comes (LATE_ANSWER), never dropped unsaid:
  // the rest of the reply it stopped in too.
  s.timedOutTurn = turn.id;
  if (midReply) s.generation!.lateFor = turn.id;
  endTurn(ctx, "complete");
}

/** The turn waits one more period, and clients are told, durably, that it still waits. */
function waitAnotherPeriod(
  ctx: StepContext,
  turn: TurnState,
  message: string,
  detail: Record<string, unknown>,
): void {
  const s = ctx.state;
  turn.waitedAt = ctx.now;
  ctx.trace("WATCHDOG_WAIT", { turnId: turn.id, ...detail });
  ctx.recordError("model_slow", message, turn.id);
  s.watchdogSet = true;
  ctx.emit({ type: "set_timer", timer: "watchdog", at: deadline(s, turn) });
}
