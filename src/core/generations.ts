/**
 * Model generations: whom each one answers (the first in line, a follow-up window, the
 * user's speech), and when one turns out not to be the answer it was taken for.
 */

import { closeWindow, openWindow, resultsAnswered, spokeAfterTurnEnded } from "./follow-up.js";
import { inputKey, normalizedReply, repeatsRecentReply } from "./regeneration.js";
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
  // On a model without turns a generation nobody owns never ends by itself: once a line is
  // owed an answer, what comes next is that line's turn's (below), not the old one's.
  if (s.generation && (s.generation.owner !== null || !owedOnTurnless(s))) return s.generation;
  s.generation = null;
  let owner: string | null = null;
  let claim: GenerationState["claim"] = "none";
  const turn = s.turn;
  const window = s.followUpWindow;
  // A window held for a turn cut short after a regeneration showed: more may still come.
  const regenerationsOwed = window?.gaveBack === "repeat" ? s.regenerations.owed : 0;
  // A model without turns marks no end between the answers it owes, and nothing of them can
  // be cut: what it says goes to the newest turn still owed an answer (the older requests'
  // answers, a follow-up's included, come with it, as the user hears them), never to nobody
  // while a turn waits for it.
  const newest = owedOnTurnless(s) ? s.expected.findLast((o) => o !== null) : undefined;
  if (newest !== undefined && newest !== null) {
    // Older turns' slots go (their answers are in this one); the newest keeps its others.
    s.expected = s.expected.filter((o) => o === newest).slice(1);
    s.generation = newGeneration(newest, "expected");
    if (window) closeWindow(ctx);
    owner = newest;
  } else if (window && window.turnId !== turn?.id && (window.absorb ?? 1) + regenerationsOwed > 1) {
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
  } else if (s.expected.length > 0) {
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
  if (owner !== null && s.turn?.id === owner) s.turn.modelEnded = false;
  s.generation ??= newGeneration(owner, claim);
  if (owner !== null && s.turn?.id === owner) {
    s.generation.turnBefore = progressOf(s.turn);
    // Speech with no transcription says nothing to compare.
    const said = s.turn.said.length > 0 ? inputKey({ kind: "said", text: s.turn.said }) : null;
    const key = s.turn.inputKey ?? said;
    s.generation.answers = key === null ? [] : [key];
  }
  return s.generation;
}

/**
 * A reply liveline asked for is ready (`reply_ready`, turnless models): the answer owed to the
 * newest turn waiting for one begins here. The words said before it were not that answer,
 * even when the voice runs on without a pause into it (a slot left owed then would wait for a
 * generation that never comes): the slot is taken now, by the running generation if it is
 * that turn's, else by a generation begun for it (what was running, an ended turn's or
 * nobody's, is over).
 */
export function onReplyReady(ctx: StepContext): void {
  const s = ctx.state;
  const newest = s.expected.findLast((o) => o !== null);
  if (newest === undefined || newest === null) return;
  const gen = s.generation;
  if (gen !== null && gen.owner === newest) {
    s.expected.splice(s.expected.indexOf(newest), 1);
    ctx.trace("REPLY_READY", { turnId: newest, generation: "running" });
    return;
  }
  s.generation = null;
  currentGeneration(ctx);
  ctx.trace("REPLY_READY", { turnId: newest, generation: "new" });
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

/**
 * A model without turns owes a turn an answer, and something else may be said first (an older
 * request's answer, a window's reaction): only then is a turnless model's speech reassigned.
 */
function owedOnTurnless(s: CoreState): boolean {
  // One turn owed, nothing else going: the usual claim below is the same (and the text path
  // reads no capabilities for it).
  const plain = s.generation === null && s.followUpWindow === null && s.expected.length === 1;
  if (s.expected.length === 0 || plain) return false;
  return capabilitiesOf(s).turnless === true && s.expected.some((o) => o !== null);
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
    judged: false,
    answers: [],
    unansweredSpeak: false,
    unansweredSilent: 0,
    unansweredQuiet: 0,
  };
}

/** A generation's text is kept (bounded) to be compared, whole, with recent replies. */
const KEPT_TEXT = 4000;

/**
 * Could a regeneration be under way: a result that could provoke one went out lately, to a
 * model that can respond on its own? Where liveline causes every response (OpenAI's
 * `response.create`), which input a response answers is known: nothing is judged.
 */
function regenerationPossible(ctx: StepContext, gen: GenerationState): boolean {
  return (
    ctx.state.config.guards.suppressUnsolicited &&
    (!capabilitiesOf(ctx.state).responsesOnRequest ||
      ctx.state.config.legacy?.repeatsOnEveryWire === true) &&
    ctx.now <= ctx.state.regenUntil &&
    (gen.claim === "expected" || gen.claim === "absorbed" || gen.claim === "grace")
  );
}

/** A piece of the generation's text. Nothing is held back: it is forwarded as it comes. */
function noteText(ctx: StepContext, gen: GenerationState, text: string): void {
  if (gen.text.length < KEPT_TEXT) gen.text = (gen.text + text).slice(0, KEPT_TEXT);
  const openingRepeats = ctx.state.config.legacy?.openingRepeats;
  if (openingRepeats !== undefined) legacyJudgeOpening(ctx, gen, openingRepeats);
}

/** The removed judgement by opening words (see regeneration.ts), for the liveness control. */
function legacyJudgeOpening(
  ctx: StepContext,
  gen: GenerationState,
  openingRepeats: (soFar: string, recent: readonly string[]) => boolean | "undecided",
): void {
  const s = ctx.state;
  if (gen.judged || !regenerationPossible(ctx, gen)) return;
  const verdict = openingRepeats(normalizedReply(gen.text), s.recentReplies);
  if (verdict !== true) {
    gen.judged = verdict === false;
    return;
  }
  gen.judged = true;
  giveBack(ctx, gen);
  gen.owner = null;
  gen.claim = "none";
  s.counters.suppressedGenerations++;
  ctx.trace("SUPPRESSED", { reason: "regenerated reply (opening)" });
}

/**
 * A generation turned out not to be the one its slot was waiting for: the slot becomes a
 * follow-up window, so the next generation takes it (new input is held meanwhile), and if
 * none comes within the grace, the turn goes on as if this one had been it.
 */
function giveBack(ctx: StepContext, gen: GenerationState): void {
  const s = ctx.state;
  const live = gen.owner !== null && s.turn?.id === gen.owner;
  // The turn's own last generation is the one that ended before this one took its slot.
  if (live) s.turn!.modelEnded = true;
  if (s.followUpWindow === null)
    openWindow(ctx, live ? gen.owner! : `stale-${gen.owner ?? "none"}`);
  else if (gen.claim === "expected") s.expected.unshift(gen.owner);
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
  if (gen.interrupted || !regenerationPossible(ctx, gen)) return false;
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
  if (!s.config.guards.detectRepeats || s.config.legacy?.openingRepeats !== undefined) return false;
  if (gen.unansweredSpeak) return false;
  // An honest model answers the same question with the same words: a reply that says again
  // what was said to the same input before is that answer, never a regeneration.
  const sameAnswer = s.recentAnswers.some(
    (a) => a.reply === reply && gen.answers.includes(a.input),
  );
  if (sameAnswer && s.config.legacy?.repeatsOnEveryWire !== true) return false;
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
  if (text !== undefined) noteText(ctx, gen, text);
  return liveOwner(ctx, gen);
}

function noteContent(ctx: StepContext, gen: GenerationState): void {
  if (gen.lateFor !== undefined && !gen.hasContent) nameLateAnswer(ctx, gen.lateFor);
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
