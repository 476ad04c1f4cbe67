/** How a turn goes on when the model ends a generation, is interrupted, or a grace passes. */

import { awaitsArrival, keepForArrival } from "./arrival.js";
import {
  absorbReactions,
  awaitingGeneration,
  closeWindow,
  openWindow,
  owesSlot,
  retryEmpty,
  spokeAfterTurnEnded,
} from "./follow-up.js";
import {
  canGiveSlotBack,
  currentGeneration,
  cutBeforeAnswering,
  giveSlotBack,
  givesSlotBackAsRepeat,
  returnSlot,
} from "./generations.js";
import { normalizedReply, rememberAnswer, rememberReply } from "./regeneration.js";
import {
  type CoreState,
  capabilitiesOf,
  noteSpeech,
  repliesMarked,
  type TurnState,
} from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";
import { callsHoldReply } from "./watchdog.js";

/**
 * Nothing came after the results the model was sent, and the turn is owed words: an empty
 * reply. Owed after a speak result, or after any result on a turn that said nothing yet. A
 * turn that spoke and since sent only silent results is owed nothing, whatever the model: a
 * blocking-only model (3.1, every call on Vertex) that said all it had before its calls ends
 * the turn right after their results, and a nudge then makes it say its reply again.
 */
export function replyIsEmpty(s: CoreState, turn: TurnState): boolean {
  if (turn.resultsSinceContent === 0) return false;
  if (turn.speakSinceContent || !turn.hasContent) return true;
  return !s.config.guards.silentResultsOweNoWords && capabilitiesOf(s).turnCompleteWaitsForResults;
}

export function onModelTurnComplete(ctx: StepContext): void {
  const s = ctx.state;
  const gen = currentGeneration(ctx);
  s.generation = null;
  ctx.trace("MODEL_TURN_COMPLETE", { owner: gen.owner });
  // What it was working on is over: a sign of work counts for a generation still to come.
  s.lastWorkAt = 0;
  const reply = normalizedReply(gen.text);
  const repeated = givesSlotBackAsRepeat(ctx, gen, reply);
  // Suppressed and interrupted replies count too: the model regenerates what it said, not
  // what we forwarded (and a context rebuilt from the log ends with what was cut short).
  s.recentReplies = rememberReply(s.recentReplies, reply);
  if (repeated) return;
  // What the model said to the inputs it was taken to answer (cut short or not: the same
  // question asked again gets the same words, as far as they went).
  for (const input of gen.answers) s.recentAnswers = rememberAnswer(s.recentAnswers, input, reply);
  if (gen.unansweredSilent > 0 && !gen.unansweredSpeak && s.config.guards.suppressUnsolicited) {
    // It may take each side-effect message as new input and say its reply again: those
    // generations belong to nobody, and new input waits until they show (or a grace passes).
    if (s.followUpWindow === null) openWindow(ctx, `silent-${gen.owner ?? "none"}`);
    absorbReactions(ctx, gen);
  }
  const turn = s.turn;
  if (gen.unansweredSpeak && s.config.guards.oneTurnComplete) {
    // Said nothing after the results: a follow-up may come (even for a turn that has
    // ended since, whose follow-up must then be absorbed, not taken for the next answer).
    const live = gen.owner !== null && turn?.id === gen.owner;
    if (live) turn.modelEnded = true;
    if (live && !s.config.guards.emptyRetry) {
      settleTurn(ctx);
      return;
    }
    if (s.followUpWindow === null) openWindow(ctx, live ? turn.id : `stale-${gen.owner ?? "none"}`);
    else if (live) s.followUpWindow.turnId = turn.id;
    absorbReactions(ctx, gen);
    return;
  }
  if (
    !gen.hasContent &&
    !gen.unansweredSpeak &&
    s.followUpWindow === null &&
    canGiveSlotBack(ctx, gen)
  ) {
    // A generation with nothing in it may not be the answer it was taken for: a model that
    // took a silent result as new input can end such a generation unasked (field report
    // O1, "two empty turnCompletes"). While that is possible, the answer owed is still
    // awaited for a grace (the open turn's slot becomes a follow-up window); if nothing
    // comes, the empty generation was it (and an empty reply after results gets its nudge).
    ctx.trace("EMPTY_GENERATION", { owner: gen.owner });
    giveSlotBack(ctx, gen);
    return;
  }
  if (gen.owner === null || !turn || turn.id !== gen.owner) {
    if (!s.config.guards.oneTurnComplete && gen.owner !== null) {
      // Naive relay: every model turn end is forwarded as the turn's end.
      ctx.record({ kind: "turn_complete", turnId: gen.owner });
    }
    return;
  }
  turn.modelEnded = true;
  if (!s.config.guards.oneTurnComplete) {
    endTurn(ctx, "complete");
    return;
  }
  if (replyIsEmpty(s, turn) && s.config.guards.emptyRetry) {
    if (capabilitiesOf(s).turnCompleteWaitsForResults || s.config.followUpGraceMs <= 0) {
      retryEmpty(ctx);
    } else {
      // The model may have ended its turn before our result reached it (the race): give
      // the follow-up generation a moment to start before calling the reply empty.
      openWindow(ctx, turn.id);
    }
    return;
  }
  if (!turn.hasContent && !gen.hasContent && !calledTools(ctx, turn.id)) {
    // A plain input answered with nothing at all (no tool results to retry after, see
    // DESIGN.md): the user would see the turn end blank. Say so.
    ctx.recordError("empty_response", "the model's reply was empty", turn.id);
  }
  settleTurn(ctx);
}

/** The turn made tool calls (its reply may rightly be the calls alone). */
function calledTools(ctx: StepContext, turnId: string): boolean {
  return Object.values(ctx.state.calls).some((c) => c.turnId === turnId);
}

/**
 * End the open turn if nothing is owed to it any more: its model generation is over, no
 * generation is expected for it, and no `speak` call of it is still running.
 */
export function settleTurn(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn;
  if (!turn?.modelEnded || s.generation !== null || awaitingGeneration(ctx, turn)) return;
  // Carried over a lost connection: the next one is asked for what the turn is owed. Held
  // for a handoff's announcement: the handoff (this step) asks the new agent.
  if (turn.carried === "pending" || awaitsArrival(turn)) return;
  // A speak result held for the rest of its batch is still to be sent and spoken.
  const speakRunning = Object.values(s.calls).some(
    (c) =>
      c.turnId === turn.id &&
      c.followUp === "speak" &&
      (c.status === "running" || c.held !== undefined),
  );
  if (!speakRunning && !keepForArrival(ctx, turn)) endTurn(ctx, "complete");
}

export function onGraceTimer(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  if (s.followUpWindow?.turnId !== turnId) return;
  const turn = s.turn?.id === turnId ? s.turn : null;
  const gaveBack = turn ? s.followUpWindow.gaveBack : undefined;
  const empty = turn?.modelEnded && replyIsEmpty(s, turn);
  if (turn && gaveBack === "repeat" && !s.config.guards.narrowRepeatJudgement) {
    ctx.recordError("repeated_reply", "the model's reply repeated an earlier one", turn.id);
  } else if (turn && gaveBack === "repeat" && !empty) {
    // No other answer came: the reply that said an earlier one again was the answer (an
    // honest model says the same words to the same question). It was delivered: the turn
    // ends as answered, with no error. (Were results still unanswered, it was not their
    // answer: the empty-reply retry below asks for it.)
    ctx.trace("REPEAT_KEPT", { turnId: turn.id });
  }
  if (turn && spokeAfterTurnEnded(ctx)) {
    // The user is speaking: no nudge into their speech. The model's answer to it opens the
    // voice turn (and says what it still had to say); this turn ends, cut short.
    closeWindow(ctx);
    endTurn(ctx, { interrupted: "barge_in" });
    return;
  }
  if (turn && gaveBack === "empty" && !empty && !turn.hasContent) {
    // Nothing but an empty generation came for this input: the user would see nothing at all.
    ctx.recordError("empty_response", "the model's reply was empty", turn.id);
  }
  // The grace decides: whatever the running generation was sent, it is past waiting for
  // (else releasing the held input would hold it again, for ever).
  if (s.generation) {
    s.generation.unansweredSpeak = false;
    s.generation.unansweredSilent = 0;
    s.generation.unansweredQuiet = 0;
  }
  // Close first: held input goes out, and the nudge (if any) after it... unless the turn
  // is still open, in which case nothing was held (new input would have ended it).
  closeWindow(ctx);
  if (empty) awaitFollowUp(ctx);
  else settleTurn(ctx);
}

/**
 * Nothing came within the grace for results the model got as its turn ended: an empty reply,
 * or a slow one (a thinking model takes seconds to its first byte). A nudge now would cut
 * the answer it may be preparing (on Gemini new input interrupts it), and the model would
 * answer the nudge as if the user had said it. So the turn is owed its follow-up in line: the
 * answer lands in the turn when it comes; with no sign of work within emptyReplyWaitMs of the
 * results (the `follow_up:` timer), it is an empty reply and retried (onFollowUpTimer).
 */
function awaitFollowUp(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn!;
  ctx.trace("AWAIT_FOLLOW_UP", { turnId: turn.id });
  // A model that marks its replies owes the results' reply in line already (tools.ts): one
  // reply answers them, not two.
  if (!repliesMarked(s) || !owesSlot(s, turn)) s.expected.push(turn.id);
  turn.awaitingFollowUp = true;
  // This one is owed (slots a nudge replaced before may still never come).
  const slots = s.expected.filter((owner) => owner === turn.id).length;
  turn.optionalSlots = Math.min(turn.optionalSlots, slots - 1);
  ctx.emit({
    type: "set_timer",
    timer: `follow_up:${turn.id}`,
    at: turn.askedAt + s.config.emptyReplyWaitMs,
  });
}

/**
 * The follow-up's wait is over: nothing said, no generation under way and no sign of work
 * since the results — an empty reply, retried unseen. A model at work has the watchdog's
 * periods to answer.
 */
export function onFollowUpTimer(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  const turn = s.turn;
  if (turn?.id !== turnId || !turn.awaitingFollowUp) return;
  turn.awaitingFollowUp = false;
  const begun = s.generation?.owner === turn.id || s.lastWorkAt >= turn.askedAt;
  // A call the reply waits for still runs: the reply cannot have come (no empty reply).
  if (begun || turn.contentSinceAsk || s.upstream.phase !== "live" || callsHoldReply(s, turn))
    return;
  // The nudge replaces the follow-up awaited (one answer is owed, not two): should that
  // still come, late, it is taken for the nudge's, and the nudge's own is unsolicited.
  const awaited = s.expected.lastIndexOf(turn.id);
  if (awaited !== -1) s.expected.splice(awaited, 1);
  retryEmpty(ctx);
}

/**
 * The model says it stopped the running generation. Normally the user spoke over it (a
 * barge-in by voice: the turn ends here, and what the user said opens the next turn). But if
 * nothing that could interrupt it went out since it began, the model was interrupted by the
 * very input whose slot the generation took (and no voice was streamed since that input): it
 * had begun before it had that input, so it was not its answer (a regeneration, say). Its
 * slot goes back; the answer is still to come.
 */
export function onModelInterrupted(ctx: StepContext): void {
  const s = ctx.state;
  // Interrupted before it said anything: the generation still took its slot (an answer the
  // barge-in cut short), so claim it now — the turn_complete that follows must not look like
  // an empty regeneration whose slot goes back (that would hand the next answer to a dead turn).
  if (!s.generation && s.expected.length > 0 && s.followUpWindow === null) currentGeneration(ctx);
  else if (
    !s.generation &&
    s.followUpWindow === null &&
    s.speechDetected &&
    s.config.guards.suppressUnsolicited
  )
    cutBeforeAnswering(ctx);
  const gen = s.generation;
  if (!gen) return;
  gen.interrupted = true;
  const turn = s.turn;
  const live = gen.owner !== null && turn?.id === gen.owner;
  // Nothing sent since the generation began, and no voice since the turn's input (audio sent
  // before the model began can still trip its voice detection).
  const stray =
    live &&
    !gen.inputSinceStart &&
    gen.claim === "expected" &&
    s.lastClientAudioAt < turn.askedAt &&
    s.config.guards.suppressUnsolicited;
  if (stray) {
    returnSlot(ctx, gen.owner!);
    gen.owner = null;
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "began before the input it was taken to answer" });
    return;
  }
  if (live) {
    endTurn(ctx, { interrupted: "barge_in" });
    // Spoken over the answer (the generation still runs): its start is not kept.
    noteSpeech(s);
  }
  gen.owner = null;
}
