/**
 * Input to the model and the follow-up window: what the model owes each turn (slots in
 * line), and input held back while a follow-up to results sent during a generation may
 * still come, so the follow-up is never taken for the answer to that input.
 */
import type { ModelCommand } from "../vocabulary/model.js";
import {
  type CoreState,
  capabilitiesOf,
  type GenerationState,
  type TurnState,
} from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";

/**
 * Send input that the model answers with a generation belonging to `owner`. While a
 * follow-up window is open the input is held back (see FollowUpWindow).
 */
export function sendInput(ctx: StepContext, command: ModelCommand, owner: string): void {
  const s = ctx.state;
  if (s.turn?.id === owner) markAsked(ctx, s.turn);
  if (s.config.guards.oneTurnComplete) {
    const gen = s.generation;
    if (s.followUpWindow === null && gen && (gen.unansweredSpeak || gen.unansweredSilent > 0)) {
      // Hold it until the model shows whether it had the results in time, or a grace passes.
      openWindow(ctx, `hold-${gen.owner ?? "none"}`);
      s.followUpWindow!.absorb = reactionsOwed(gen);
    }
    if (s.followUpWindow !== null) {
      s.held.push({ command, owner });
      return;
    }
  }
  s.expected.push(owner);
  if (s.generation) s.generation.inputSinceStart = true;
  if (command.type === "user_text" && s.upstream.phase !== "live" && s.turn?.id === owner) {
    s.outboxSince ??= s.turn.userSeq;
  }
  // The reply it asks for names its turn (a turnless model's `reply_ready`).
  const asking =
    command.type === "user_text" || command.type === "nudge"
      ? { ...command, turnId: owner }
      : command;
  ctx.sendModel(asking);
}

/**
 * A turn superseded before its text ever reached the model (it waits in the outbox while
 * the connection opens): the text is taken back with its slot, to go to the model with the
 * line that superseded it — every line the user typed reaches the model, in order, and one
 * answer addresses them together. Returns the text taken back, if any.
 */
export function withdrawQueuedText(ctx: StepContext, turn: TurnState): string | undefined {
  const s = ctx.state;
  if (s.upstream.phase === "live" || s.outboxSince === null || turn.userSeq < s.outboxSince)
    return undefined;
  const at = s.outbox.findLastIndex((c) => c.type === "user_text");
  if (at === -1) return undefined;
  const [withdrawn] = s.outbox.splice(at, 1);
  const slot = s.expected.lastIndexOf(turn.id);
  if (slot !== -1) s.expected.splice(slot, 1);
  if (!s.outbox.some((c) => c.type === "user_text")) s.outboxSince = null;
  return withdrawn?.type === "user_text" ? withdrawn.text : undefined;
}

/** A late speak result: the model owes the turn exactly one generation for it. */
export function expectGeneration(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  s.expected.push(turnId);
  if (s.turn?.id === turnId) markAsked(ctx, s.turn);
}

/** The turn sent the model something it owes an answer to: the watchdog counts from now. */
export function markAsked(ctx: StepContext, turn: TurnState): void {
  turn.askedAt = ctx.now;
  turn.contentSinceAsk = false;
  // A new wait: the periods a slow model was given count from here.
  turn.slowWaits = 0;
  turn.awaitingFollowUp = false;
}

/** Is the open turn still owed a generation? */
export function awaitingGeneration(ctx: StepContext, turn: TurnState): boolean {
  return ctx.state.followUpWindow?.turnId === turn.id || owesSlot(ctx.state, turn);
}

/** The model owes the turn a generation in line (not counting slots that may never come). */
export function owesSlot(s: CoreState, turn: TurnState): boolean {
  let slots = 0;
  for (const owner of s.expected) if (owner === turn.id) slots++;
  return slots > turn.optionalSlots;
}

export function openWindow(ctx: StepContext, turnId: string): void {
  ctx.state.followUpWindow = { turnId };
  ctx.emit({
    type: "set_timer",
    timer: `grace:${turnId}`,
    at: ctx.now + ctx.state.config.followUpGraceMs,
  });
}

/** The window closes: a generation started, the grace passed, or the connection was lost. */
export function closeWindow(ctx: StepContext): void {
  const s = ctx.state;
  const window = s.followUpWindow;
  if (!window) return;
  s.followUpWindow = null;
  ctx.emit({ type: "clear_timer", timer: `grace:${window.turnId}` });
  releaseHeld(ctx);
}

/**
 * Results were sent into the running generation: if the model had in fact just ended its
 * turn, it takes them as new input (a speak batch: its follow-up; a side effect on a
 * blocking-only model: its reply again) — unless it cannot end its turn before it has them
 * (it withholds turn_complete).
 */
export function noteResultsSentInGeneration(
  ctx: StepContext,
  followUp: "speak" | "silent" | "quiet",
): void {
  const s = ctx.state;
  if (!s.generation || capabilitiesOf(s).turnCompleteWaitsForResults) return;
  if (followUp === "speak") s.generation.unansweredSpeak = true;
  else if (followUp === "silent") s.generation.unansweredSilent++;
  else s.generation.unansweredQuiet++;
}

/** How many generations the model may still send in reaction to what this one was sent. */
export function reactionsOwed(gen: GenerationState): number {
  return (gen.unansweredSpeak ? 1 : 0) + gen.unansweredSilent + gen.unansweredQuiet;
}

/** A window held for a dead turn (not for the open turn's follow-up) absorbs every reaction. */
export function absorbReactions(ctx: StepContext, gen: GenerationState): void {
  const window = ctx.state.followUpWindow;
  if (window === null) return;
  // Kept for a turn's own window too: should the turn be interrupted before they come.
  window.absorb = Math.max(window.absorb ?? 1, reactionsOwed(gen));
}

/** The model said something after the results it was sent: it had them in time. */
export function resultsAnswered(ctx: StepContext, gen: GenerationState): void {
  if (reactionsOwed(gen) === 0) return;
  gen.unansweredSpeak = false;
  gen.unansweredSilent = 0;
  gen.unansweredQuiet = 0;
  if (ctx.state.followUpWindow?.turnId.startsWith("hold-")) closeWindow(ctx);
}

function releaseHeld(ctx: StepContext): void {
  const s = ctx.state;
  const held = s.held;
  s.held = [];
  for (const { command, owner } of held) sendInput(ctx, command, owner);
}

/** The user spoke while the open turn's follow-up window waited (its model had ended). */
export function spokeAfterTurnEnded(ctx: StepContext): boolean {
  const { followUpWindow: window, turn } = ctx.state;
  return window?.spokenOver === true && turn?.id === window.turnId && turn.modelEnded;
}

/**
 * Held lines wait for the speech's answer from now: when the first is held, and again at each
 * sign the user is still speaking (the speech's end, its detection or transcription) — not
 * only from when they were typed, else they went just before the answer to speech that
 * outlasted the wait, and that answer was suppressed. Bounded: those signs come once per
 * utterance, never with every chunk of an open microphone.
 */
export function setLineWait(ctx: StepContext): void {
  const s = ctx.state;
  if (s.heldLines.length === 0 || s.upstream.phase !== "live") return;
  ctx.emit({ type: "set_timer", timer: "speech", at: ctx.now + s.config.speechAnswerWaitMs });
}

/**
 * A turn's nudges in all, whatever came between them: each answer resets the count in a row,
 * and a model whose answers to nudges call tools again (a nudge that cut a slow answer is
 * answered as a new question) would otherwise be nudged for ever.
 */
export function nudgeLeft(s: CoreState, turn: TurnState): boolean {
  return turn.nudges < 2 * s.config.maxEmptyRetries;
}

/** The empty-reply retry: a nudge clients never see, within the budget; then empty_response. */
export function retryEmpty(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn!;
  if (turn.emptyRetries >= s.config.maxEmptyRetries || !nudgeLeft(s, turn)) {
    ctx.trace("EMPTY_RESPONSE", { turnId: turn.id, retries: turn.emptyRetries });
    ctx.recordError(
      "empty_response",
      `the model stayed silent after ${turn.nudges} retries`,
      turn.id,
    );
    endTurn(ctx, "complete");
    return;
  }
  turn.emptyRetries++;
  turn.nudges++;
  s.counters.emptyRetries++;
  turn.modelEnded = false;
  ctx.trace("RETRY_EMPTY", { turnId: turn.id, attempt: turn.emptyRetries });
  sendInput(ctx, { type: "nudge", text: s.config.nudgeText }, turn.id);
}
