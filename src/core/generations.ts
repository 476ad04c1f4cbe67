/**
 * Model generations: whom each one answers (the first in line, a follow-up window, the
 * user's speech), and when one turns out not to be the answer it was taken for.
 */

import {
  closeWindow,
  openWindow,
  owesSlot,
  resultsAnswered,
  spokeAfterTurnEnded,
} from "./follow-up.js";
import { inputKey, repeatsRecentReply } from "./regeneration.js";
import {
  type CoreState,
  capabilitiesOf,
  type GenerationState,
  type TurnProgress,
  type TurnState,
} from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn, noteAnswered, openTurn } from "./turn-state.js";

/**
 * The generation the current model output belongs to, starting one if none is running.
 * A generation answers whoever is first in line for one; output nobody asked for (a
 * provider reacting to a late silent result as if it were new input) gets owner null and
 * is suppressed.
 */
export function currentGeneration(ctx: StepContext): GenerationState {
  const s = ctx.state;
  if (s.generation) return s.generation;
  let owner: string | null = null;
  let claim: GenerationState["claim"] = "none";
  const turn = s.turn;
  const window = s.followUpWindow;
  // A window held for a turn cut short after a regeneration showed: more may still come.
  const regenerationsOwed = window?.gaveBack === "repeat" ? s.regenerations.owed : 0;
  if (window && window.turnId !== turn?.id && (window.absorb ?? 1) + regenerationsOwed > 1) {
    // One of several reactions a dead turn's window waits for: nobody's; it stays open.
    if (regenerationsOwed > 0) s.regenerations.owed--;
    else window.absorb = (window.absorb ?? 1) - 1;
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "reaction to a late side-effect result" });
    s.generation = newGeneration(null, "none");
    return s.generation;
  } else if (window && spokeAfterTurnEnded(ctx) && s.config.guards.suppressUnsolicited) {
    // The user spoke after the model ended its turn and before the follow-up it may still
    // owe began: the model answers the speech (with whatever it still had to say), so this
    // generation opens the voice turn; the turn whose follow-up it was ends, cut short.
    endTurn(ctx, { interrupted: "barge_in" });
    closeWindow(ctx);
    owner = openTurn(ctx, "audio", s.inputTranscript).id;
    claim = "speech";
  } else if (window) {
    // What the open window waits for comes before anything sent after it opened.
    owner = turn?.id === window.turnId ? turn.id : null;
    claim = "grace";
    // Set before the window closes: releasing held input looks at the running generation.
    s.generation = newGeneration(owner, claim);
    closeWindow(ctx);
  } else if (s.expected.length > 0 && !marksReplies(s)) {
    // First in line. (A model that marks its replies claims places only by them: onReplyReady.)
    owner = s.expected.shift() ?? null;
    claim = owner === null ? "absorbed" : "expected";
    if (owner === null) {
      // Owed to a turn that has ended (one that timed out, say): it reaches no client, and
      // the timeline says so; after a timeout, clients are told too, once it says something.
      s.counters.suppressedGenerations++;
      ctx.trace("SUPPRESSED", { reason: "owed to a turn that already ended" });
      s.generation = newGeneration(null, claim);
      if (s.timedOutTurn !== null) s.generation.lateFor = s.timedOutTurn;
    }
    if (!s.expected.includes(null)) s.timedOutTurn = null;
  } else if (s.speechDetected) {
    // The user spoke and the model answers: a voice turn opens (ending any open one).
    if (turn) endTurn(ctx, { interrupted: "barge_in" });
    owner = openTurn(ctx, "audio", s.inputTranscript).id;
    claim = "speech";
  } else if (!s.config.guards.suppressUnsolicited) {
    // Naive relay: whatever the model says belongs to the latest turn.
    owner = s.lastTurnId;
    claim = "naive";
  } else if (capabilitiesOf(s).turnless === true) {
    // A model without turns speaks when it chooses ("are you still there?"): nothing on its
    // wire marks words as unasked, nor can a regeneration be told from them, and liveline
    // asked nothing of it. What it says is delivered: in the open turn, or in a turn of its own.
    owner = turn?.id ?? openTurn(ctx, "model", "").id;
    claim = "initiative";
  } else {
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "unsolicited generation" });
  }
  // The model's few words while a call runs (tool-progress.ts): results that come meanwhile
  // are not answered by them; said after the call's result came, they would be stale.
  const stillWorkingFor = claim === "expected" ? s.stillWorkingAsked : null;
  s.stillWorkingAsked = null;
  const stale = stillWorkingFor !== null && s.calls[stillWorkingFor]?.status !== "running";
  if (stale && s.generation === null) {
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "still working, said after the result came" });
    owner = null;
    claim = "absorbed";
  }
  if (owner !== null && s.turn?.id === owner) s.turn.modelEnded = false;
  s.generation ??= newGeneration(owner, claim);
  if (stillWorkingFor !== null && !stale) s.generation.stillWorking = true;
  if (owner !== null && s.turn?.id === owner) noteTurnInput(s.generation, s.turn);
  return s.generation;
}

/**
 * `repliesMarked` (session-state.ts), read here without a call into another module: a text
 * reply's path through the core is ratcheted by the files it touches (test/path).
 */
function marksReplies(s: CoreState): boolean {
  const caps = s.config.agentCapabilities?.[s.agent] ?? s.config.capabilities;
  return caps.turnless === true && s.config.guards.suppressUnsolicited;
}

/** The generation answers the turn's input: what it said to it is remembered by that input. */
function noteTurnInput(gen: GenerationState, turn: TurnState): void {
  gen.turnBefore = progressOf(turn);
  // Speech with no transcription says nothing to compare.
  const said = turn.said.length > 0 ? inputKey({ kind: "said", text: turn.said }) : null;
  const key = turn.inputKey ?? said;
  gen.answers = key === null ? [] : [key];
}

/**
 * A reply liveline asked for is ready (`reply_ready`, turnless models), and says whose it is:
 * the turn of the request that asked for it (`turnId`, handed back by the adapter). The words
 * said before it were not that answer, even when the voice runs on without a pause into it:
 * what was running is over, unless it was that turn's already. A reply for a turn that is
 * over (one that timed out, say) is never another turn's answer.
 */
export function onReplyReady(ctx: StepContext, asked: string | undefined): void {
  const s = ctx.state;
  const turn = s.turn;
  // A reply no request is known for (an adapter that did not pair it): the open turn's, if
  // that still waits for one.
  const turnId = asked ?? (turn !== null && owesSlot(s, turn) ? turn.id : undefined);
  if (turnId === undefined) {
    ctx.trace("REPLY_READY", { turnId: null });
    return;
  }
  const slot = s.expected.indexOf(turnId);
  if (slot !== -1) s.expected.splice(slot, 1);
  const gen = s.generation;
  if (turn?.id === turnId) {
    if (s.followUpWindow?.turnId === turnId) closeWindow(ctx);
    if (gen?.owner === turnId && !gen.interrupted) {
      ctx.trace("REPLY_READY", { turnId, generation: "running" });
      return;
    }
    s.generation = newGeneration(turnId, "expected");
    noteTurnInput(s.generation, turn);
    turn.modelEnded = false;
    ctx.trace("REPLY_READY", { turnId, generation: "new" });
    return;
  }
  ctx.trace("REPLY_READY", { turnId, generation: "ended" });
  if (turn === null) {
    // Nothing cuts this model: the user hears it, so it is delivered, in a turn of its own
    // once it says something (as the model's own words are: currentGeneration).
    s.generation = null;
    return;
  }
  // Another turn is open: its words are not that turn's answer. They reach no turn, and are
  // named late (LATE_ANSWER) if their own turn timed out.
  s.generation = newGeneration(null, "absorbed");
  if (turnId === s.timedOutTurn) s.generation.lateFor = turnId;
  s.counters.suppressedGenerations++;
  ctx.trace("SUPPRESSED", { reason: "a reply for a turn that already ended" });
}

/**
 * The user's voice cut the model short before it said anything, while their speech waited
 * for its answer: they spoke on, and the model's next generation answers all of it. The one
 * cut is nobody's, so the turn_complete that ends it opens no turn (an empty answer to half
 * a sentence is no answer).
 */
export function cutBeforeAnswering(ctx: StepContext): GenerationState {
  ctx.state.generation = newGeneration(null, "none");
  ctx.trace("SPEECH_CONTINUED");
  return ctx.state.generation;
}

function progressOf(turn: TurnState): TurnProgress {
  const { hasContent, resultsSinceContent, speakSinceContent, emptyRetries, contentSinceAsk } =
    turn;
  return { hasContent, resultsSinceContent, speakSinceContent, emptyRetries, contentSinceAsk };
}

function newGeneration(owner: string | null, claim: GenerationState["claim"]): GenerationState {
  return {
    owner,
    claim,
    hasContent: false,
    interrupted: false,
    inputSinceStart: false,
    text: "",
    answers: [],
    unansweredSpeak: false,
    unansweredSilent: 0,
    unansweredQuiet: 0,
  };
}

/** A generation's text is kept (bounded) to be compared, whole, with recent replies. */
const KEPT_TEXT = 4000;

/**
 * Could `gen` be a regeneration at `now`: a result that could provoke one went out lately, to
 * a model that can respond on its own? Where liveline causes every response (OpenAI's
 * `response.create`), which input a response answers is known: nothing is judged. (Exported
 * for the tests' opening-words control, which judges where the core would.)
 */
export function regenerationPossible(s: CoreState, gen: GenerationState, now: number): boolean {
  return (
    s.config.guards.suppressUnsolicited &&
    (!capabilitiesOf(s).responsesOnRequest || !s.config.guards.narrowRepeatJudgement) &&
    now <= s.regenUntil &&
    (gen.claim === "expected" || gen.claim === "absorbed" || gen.claim === "grace")
  );
}

/** A piece of the generation's text. Nothing is held back: it is forwarded as it comes. */
function noteText(gen: GenerationState, text: string): void {
  if (gen.text.length < KEPT_TEXT) gen.text = (gen.text + text).slice(0, KEPT_TEXT);
}

/**
 * The generation that took the open turn's slot was not its answer after all: the slot goes
 * back to the front of the line, so the next generation answers the turn. The watchdog bounds
 * the wait.
 */
export function returnSlot(ctx: StepContext, owner: string): void {
  const turn = ctx.state.turn!;
  ctx.state.expected.unshift(owner);
  turn.modelEnded = true;
}

/**
 * Can a generation that turns out not to be an answer give its slot back? One that took a
 * slot in line can, whether its turn is open or was interrupted meanwhile (else the dead
 * input's own answer would take the next turn's slot, and so on down the line); one that
 * took a follow-up window only while its turn is open; none that the model itself cut short
 * (a barge-in: it was an answer). Misjudged for a dead turn, the next turn's answer is
 * absorbed instead and its turn waits for the watchdog: a visible nudge, not a silent loss.
 */
export function canGiveSlotBack(ctx: StepContext, gen: GenerationState, repeated = false): boolean {
  if (gen.interrupted || !regenerationPossible(ctx.state, gen, ctx.now)) return false;
  const live = gen.owner !== null && ctx.state.turn?.id === gen.owner;
  // A word-for-word repeat that took a cut-short turn's window was a regeneration too: the
  // follow-up that window waited for is still to come, and must not take the next slot.
  return (
    live ||
    gen.claim === "expected" ||
    gen.claim === "absorbed" ||
    (repeated && gen.claim === "grace")
  );
}

export function giveSlotBack(ctx: StepContext, gen: GenerationState): void {
  const s = ctx.state;
  if (gen.owner === null || s.turn?.id !== gen.owner) {
    s.expected.unshift(null);
    return;
  }
  // The open turn's answer is still to come: it waits a grace for it (the slot becomes a
  // follow-up window; if nothing comes, this generation was the answer after all). What it
  // said does not count as answering the turn (an empty reply after results is still one).
  if (gen.turnBefore) Object.assign(s.turn, gen.turnBefore);
  s.turn.modelEnded = true;
  if (s.followUpWindow === null) {
    openWindow(ctx, gen.owner);
    s.followUpWindow!.gaveBack = gen.hasContent ? "repeat" : "empty";
  } else s.expected.unshift(gen.owner);
}

/**
 * A finished reply that says a recent reply again, word for word, while a regeneration was
 * possible: it was (most likely) the model answering a late side-effect result, not the
 * input whose slot it took. It was delivered (when in doubt, deliver); its slot goes back to
 * the front of the line, so the answer that follows still belongs to the turn. If no answer
 * follows, the watchdog ends the turn visibly.
 */
export function givesSlotBackAsRepeat(
  ctx: StepContext,
  gen: GenerationState,
  reply: string,
): boolean {
  const s = ctx.state;
  if (!s.config.guards.detectRepeats) return false;
  if (gen.unansweredSpeak) return false;
  // An honest model answers the same question with the same words: a reply that says again
  // what was said to the same input before is that answer, never a regeneration.
  const sameAnswer = s.recentAnswers.some(
    (a) => a.reply === reply && gen.answers.includes(a.input),
  );
  if (sameAnswer && s.config.guards.narrowRepeatJudgement) return false;
  if (!canGiveSlotBack(ctx, gen, true) || !repeatsRecentReply(reply, s.recentReplies)) return false;
  giveSlotBack(ctx, gen);
  // The model ignores SILENT: each other SILENT message sent lately may bring one more, and
  // none is sent to it any more.
  s.regenerations = { sent: 0, owed: Math.max(0, s.regenerations.sent - 1) };
  s.silentIgnored = true;
  s.counters.repeatedReplies++;
  ctx.trace("REPEATED_REPLY", { turnId: gen.owner });
  return true;
}

/** The open turn this generation answers, or null when its output must not be forwarded. */
function liveOwner(ctx: StepContext, gen: GenerationState): string | null {
  if (gen.owner === null) return null;
  if (ctx.state.turn?.id === gen.owner) return gen.owner;
  // The turn already ended (barge-in; or the naive relay after its turn_complete).
  return ctx.state.config.guards.suppressUnsolicited ? null : gen.owner;
}

/**
 * Model content (text, transcript, audio, a tool call) arrived in `gen`: noted (a piece of
 * text kept too), and the open turn it is for, or null when it must not be forwarded.
 */
export function takeContent(ctx: StepContext, gen: GenerationState, text?: string): string | null {
  noteContent(ctx, gen);
  if (text !== undefined) noteText(gen, text);
  return liveOwner(ctx, gen);
}

function noteContent(ctx: StepContext, gen: GenerationState): void {
  if (gen.lateFor !== undefined) {
    nameLateAnswer(ctx, gen.lateFor);
    gen.lateFor = undefined;
  }
  gen.hasContent = true;
  if (gen.resultsUnanswered !== undefined) {
    // It speaks after the results it was sent: it had them, and what it says answers them.
    gen.answers = [...gen.answers, gen.resultsUnanswered];
    gen.resultsUnanswered = undefined;
  }
  resultsAnswered(ctx, gen);
  const turn = ctx.state.turn;
  if (turn?.id !== gen.owner) return;
  if (!turn) return;
  noteAnswered(turn);
}

/**
 * The model answered a turn after the watchdog had ended it: what it says reaches no turn (the
 * turn's one end is past), but clients are told, durably, so the answer is never lost unsaid.
 */
function nameLateAnswer(ctx: StepContext, turnId: string): void {
  ctx.state.counters.lateAnswers++;
  ctx.trace("LATE_ANSWER", { turnId });
  ctx.recordError(
    "late_answer",
    "the model answered after this turn had timed out; ask again to hear it",
    turnId,
  );
}
