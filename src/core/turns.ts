import type { InterruptReason } from "../vocabulary/events.js";
import type { ModelCommand } from "../vocabulary/model.js";
import {
  LEGACY_MIN_PREFIX,
  legacyOpeningRepeats,
  normalizedReply,
  rememberReply,
  repeatsRecentReply,
} from "./regeneration.js";
import type { CoreState, GenerationState, TurnProgress, TurnState } from "./state.js";
import type { StepContext } from "./step-context.js";

export function openTurn(ctx: StepContext, source: "text" | "audio", text: string): TurnState {
  const s = ctx.state;
  s.turnCount++;
  const turn: TurnState = {
    id: `t${s.turnCount}`,
    userSeq: s.nextSeq,
    source,
    modelEnded: false,
    hasContent: false,
    resultsSinceContent: 0,
    speakSinceContent: false,
    emptyRetries: 0,
    askedAt: ctx.now,
    contentSinceAsk: false,
    optionalSlots: 0,
  };
  s.turn = turn;
  s.lastTurnId = turn.id;
  s.speechDetected = false;
  s.inputTranscript = "";
  ctx.record({ kind: "user", turnId: turn.id, text, source });
  ctx.trace("USER", { turnId: turn.id, source });
  return turn;
}

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
  ctx.sendModel(command);
}

/**
 * A turn superseded before its text ever reached the model (it waits in the outbox while
 * the connection opens): the text is withdrawn with its slot, so the model never answers
 * what the user already typed over — its context holds what the user saw.
 */
export function withdrawQueuedText(ctx: StepContext, turn: TurnState): void {
  const s = ctx.state;
  if (s.upstream.phase === "live" || s.outboxSince === null || turn.userSeq < s.outboxSince) return;
  const at = s.outbox.findLastIndex((c) => c.type === "user_text");
  if (at === -1) return;
  s.outbox.splice(at, 1);
  const slot = s.expected.lastIndexOf(turn.id);
  if (slot !== -1) s.expected.splice(slot, 1);
  if (!s.outbox.some((c) => c.type === "user_text")) s.outboxSince = null;
}

/** A late speak result: the model owes the turn exactly one generation for it. */
export function expectGeneration(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  s.expected.push(turnId);
  if (s.turn?.id === turnId) markAsked(ctx, s.turn);
}

/** The turn sent the model something it owes an answer to: the watchdog counts from now. */
function markAsked(ctx: StepContext, turn: TurnState): void {
  turn.askedAt = ctx.now;
  turn.contentSinceAsk = false;
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

function openWindow(ctx: StepContext, turnId: string): void {
  ctx.state.followUpWindow = { turnId };
  ctx.emit({
    type: "set_timer",
    timer: `grace:${turnId}`,
    at: ctx.now + ctx.state.config.followUpGraceMs,
  });
}

/** The window closes: a generation started, the grace passed, or the connection was lost. */
function closeWindow(ctx: StepContext): void {
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
  if (!s.generation || s.config.capabilities.turnCompleteWaitsForResults) return;
  if (followUp === "speak") s.generation.unansweredSpeak = true;
  else if (followUp === "silent") s.generation.unansweredSilent++;
  else s.generation.unansweredQuiet++;
}

/** How many generations the model may still send in reaction to what this one was sent. */
function reactionsOwed(gen: GenerationState): number {
  return (gen.unansweredSpeak ? 1 : 0) + gen.unansweredSilent + gen.unansweredQuiet;
}

/** A window held for a dead turn (not for the open turn's follow-up) absorbs every reaction. */
function absorbReactions(ctx: StepContext, gen: GenerationState): void {
  const window = ctx.state.followUpWindow;
  if (window === null) return;
  // Kept for a turn's own window too: should the turn be interrupted before they come.
  window.absorb = Math.max(window.absorb ?? 1, reactionsOwed(gen));
}

/** The model said something after the results it was sent: it had them in time. */
function resultsAnswered(ctx: StepContext, gen: GenerationState): void {
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
  if (window && window.turnId !== turn?.id && (window.absorb ?? 1) > 1) {
    // One of several reactions a dead turn's window waits for: nobody's; it stays open.
    window.absorb = (window.absorb ?? 1) - 1;
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "reaction to a late side-effect result" });
    s.generation = newGeneration(null, "none");
    return s.generation;
  }
  if (window && spokeAfterTurnEnded(ctx) && s.config.guards.suppressUnsolicited) {
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
  } else if (s.speechDetected) {
    // The user spoke and the model answers: a voice turn opens (ending any open one).
    if (turn) endTurn(ctx, { interrupted: "barge_in" });
    owner = openTurn(ctx, "audio", s.inputTranscript).id;
    claim = "speech";
  } else if (!s.config.guards.suppressUnsolicited) {
    // Naive relay: whatever the model says belongs to the latest turn.
    owner = s.lastTurnId;
    claim = "naive";
  } else {
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "unsolicited generation" });
  }
  if (owner !== null && s.turn?.id === owner) s.turn.modelEnded = false;
  s.generation ??= newGeneration(owner, claim);
  if (owner !== null && s.turn?.id === owner) s.generation.turnBefore = progressOf(s.turn);
  return s.generation;
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
    unansweredSpeak: false,
    unansweredSilent: 0,
    unansweredQuiet: 0,
  };
}

/** The user spoke while the open turn's follow-up window waited (its model had ended). */
function spokeAfterTurnEnded(ctx: StepContext): boolean {
  const { followUpWindow: window, turn } = ctx.state;
  return window?.spokenOver === true && turn?.id === window.turnId && turn.modelEnded;
}

/** A generation's text is kept (bounded) to be compared, whole, with recent replies. */
const KEPT_TEXT = 4000;

/** Could a regeneration be under way: a result that could provoke one went out lately? */
function regenerationPossible(ctx: StepContext, gen: GenerationState): boolean {
  return (
    ctx.state.config.guards.suppressUnsolicited &&
    ctx.now <= ctx.state.regenUntil &&
    (gen.claim === "expected" || gen.claim === "absorbed" || gen.claim === "grace")
  );
}

/** A piece of the generation's text. Nothing is held back: it is forwarded as it comes. */
export function noteText(ctx: StepContext, gen: GenerationState, text: string): void {
  if (gen.text.length < KEPT_TEXT) gen.text = (gen.text + text).slice(0, KEPT_TEXT);
  if (ctx.state.config.legacyOpeningCheck) legacyJudgeOpening(ctx, gen);
}

/** The removed judgement by opening words (see regeneration.ts), for the liveness control. */
function legacyJudgeOpening(ctx: StepContext, gen: GenerationState): void {
  const s = ctx.state;
  if (gen.judged || !regenerationPossible(ctx, gen)) return;
  const soFar = normalizedReply(gen.text);
  if (!legacyOpeningRepeats(soFar, s.recentReplies)) {
    gen.judged = soFar.length >= LEGACY_MIN_PREFIX;
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
function returnSlot(ctx: StepContext, owner: string): void {
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
function canGiveSlotBack(ctx: StepContext, gen: GenerationState): boolean {
  if (gen.interrupted || !regenerationPossible(ctx, gen)) return false;
  const live = gen.owner !== null && ctx.state.turn?.id === gen.owner;
  return live || gen.claim === "expected" || gen.claim === "absorbed";
}

function giveSlotBack(ctx: StepContext, gen: GenerationState): void {
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
function givesSlotBackAsRepeat(ctx: StepContext, gen: GenerationState, reply: string): boolean {
  const s = ctx.state;
  if (!s.config.guards.detectRepeats || s.config.legacyOpeningCheck) return false;
  if (gen.unansweredSpeak) return false;
  if (!canGiveSlotBack(ctx, gen) || !repeatsRecentReply(reply, s.recentReplies)) return false;
  giveSlotBack(ctx, gen);
  s.counters.repeatedReplies++;
  ctx.trace("REPEATED_REPLY", { turnId: gen.owner });
  return true;
}

/** The open turn this generation answers, or null when its output must not be forwarded. */
export function liveOwner(ctx: StepContext, gen: GenerationState): string | null {
  if (gen.owner === null) return null;
  if (ctx.state.turn?.id === gen.owner) return gen.owner;
  // The turn already ended (barge-in; or the naive relay after its turn_complete).
  return ctx.state.config.guards.suppressUnsolicited ? null : gen.owner;
}

/** Model content (text, transcript, audio, a tool call) arrived in `gen`. */
export function noteContent(ctx: StepContext, gen: GenerationState): void {
  gen.hasContent = true;
  resultsAnswered(ctx, gen);
  const turn = ctx.state.turn;
  if (turn?.id !== gen.owner) return;
  if (!turn) return;
  turn.hasContent = true;
  turn.contentSinceAsk = true;
  turn.resultsSinceContent = 0;
  turn.speakSinceContent = false;
  turn.emptyRetries = 0;
}

/**
 * Nothing came after the results the model was sent: an empty reply. After a speak result,
 * or on a turn that said nothing yet; and after any result on a model that cannot end its
 * turn before it has every result (3.1: it waits for silent ones too and goes on with its
 * reply after them, so an end right after the results is the reply stopping short).
 */
function replyIsEmpty(s: CoreState, turn: TurnState): boolean {
  if (turn.resultsSinceContent === 0) return false;
  return (
    turn.speakSinceContent || !turn.hasContent || s.config.capabilities.turnCompleteWaitsForResults
  );
}

export function onModelTurnComplete(ctx: StepContext): void {
  const s = ctx.state;
  const gen = currentGeneration(ctx);
  s.generation = null;
  ctx.trace("MODEL_TURN_COMPLETE", { owner: gen.owner });
  const reply = normalizedReply(gen.text);
  const repeated = givesSlotBackAsRepeat(ctx, gen, reply);
  // Suppressed and interrupted replies count too: the model regenerates what it said, not
  // what we forwarded (and a context rebuilt from the log ends with what was cut short).
  s.recentReplies = rememberReply(s.recentReplies, reply);
  if (repeated) return;
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
    if (s.config.capabilities.turnCompleteWaitsForResults || s.config.followUpGraceMs <= 0) {
      retryEmpty(ctx);
    } else {
      // The model may have ended its turn before our result reached it (the race): give
      // the follow-up generation a moment to start before calling the reply empty.
      openWindow(ctx, turn.id);
    }
    return;
  }
  settleTurn(ctx);
}

/**
 * End the open turn if nothing is owed to it any more: its model generation is over, no
 * generation is expected for it, and no `speak` call of it is still running.
 */
export function settleTurn(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn;
  if (!turn?.modelEnded || s.generation !== null || awaitingGeneration(ctx, turn)) return;
  // Carried over a lost connection: the next one is asked for what the turn is owed.
  if (turn.carried === "pending") return;
  // A speak result held for the rest of its batch is still to be sent and spoken.
  const speakRunning = Object.values(s.calls).some(
    (c) =>
      c.turnId === turn.id &&
      c.followUp === "speak" &&
      (c.status === "running" || c.held !== undefined),
  );
  if (!speakRunning) endTurn(ctx, "complete");
}

export function onGraceTimer(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  if (s.followUpWindow?.turnId !== turnId) return;
  const turn = s.turn?.id === turnId ? s.turn : null;
  const empty = turn?.modelEnded && replyIsEmpty(s, turn);
  const gaveBack = turn ? s.followUpWindow.gaveBack : undefined;
  if (turn && spokeAfterTurnEnded(ctx)) {
    // The user is speaking: no nudge into their speech. The model's answer to it opens the
    // voice turn (and says what it still had to say); this turn ends, cut short.
    closeWindow(ctx);
    endTurn(ctx, { interrupted: "barge_in" });
    return;
  }
  if (turn && gaveBack === "repeat") {
    // No other answer came: the repeated reply is all the turn gets. Say so — it may have been
    // the model answering a tool result rather than this input.
    ctx.record({
      kind: "error",
      code: "repeated_reply",
      message: "the model's reply repeated an earlier one word for word, and no other answer came",
      fatal: false,
      turnId: turn.id,
    });
  } else if (turn && gaveBack === "empty" && !empty && !turn.hasContent) {
    // Nothing but an empty generation came for this input: the user would see nothing at all.
    ctx.record({
      kind: "error",
      code: "empty_response",
      message: "the model's reply was empty",
      fatal: false,
      turnId: turn.id,
    });
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
  if (empty) retryEmpty(ctx);
  else settleTurn(ctx);
}

function retryEmpty(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn!;
  if (turn.emptyRetries >= s.config.maxEmptyRetries) {
    ctx.trace("EMPTY_RESPONSE", { turnId: turn.id, retries: turn.emptyRetries });
    ctx.record({
      kind: "error",
      code: "empty_response",
      message: `the model stayed silent after ${turn.emptyRetries} retries`,
      fatal: false,
      turnId: turn.id,
    });
    endTurn(ctx, "complete");
    return;
  }
  turn.emptyRetries++;
  s.counters.emptyRetries++;
  turn.modelEnded = false;
  ctx.trace("RETRY_EMPTY", { turnId: turn.id, attempt: turn.emptyRetries });
  sendInput(ctx, { type: "nudge", text: s.config.nudgeText }, turn.id);
}

/** End the open turn with its one turn end; what the model still owes it is dropped. */
export function endTurn(
  ctx: StepContext,
  how: "complete" | { interrupted: InterruptReason },
): void {
  const s = ctx.state;
  const turn = s.turn;
  if (!turn) return;
  s.turn = null;
  if (s.watchdogArmed) {
    s.watchdogArmed = false;
    ctx.emit({ type: "clear_timer", timer: "watchdog" });
  }
  s.expected = s.expected.map((owner) => (owner === turn.id ? null : owner));
  if (s.generation?.owner === turn.id && s.config.guards.suppressUnsolicited)
    s.generation.owner = null;
  if (how === "complete") {
    ctx.record({ kind: "turn_complete", turnId: turn.id });
    ctx.trace("TURN_COMPLETE", { turnId: turn.id });
  } else {
    ctx.record({ kind: "interrupted", turnId: turn.id, reason: how.interrupted });
    ctx.trace("INTERRUPTED", { turnId: turn.id, reason: how.interrupted });
    ctx.cancelRunningCalls(turn.id, how.interrupted);
  }
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
    s.speechDetected = true;
  }
  gen.owner = null;
}

/**
 * The model connection dropped under an open turn: it cannot be finished, say so — unless
 * (`carry`, a connection lost while a new one is opened at once) all the turn still waits
 * for is the model speaking results it already has: those are in the log, so the next
 * connection has them too (resumed, or seeded from the log), and is asked once to go on.
 */
export function closeTurnOnUpstreamLoss(ctx: StepContext, carry = false): void {
  const s = ctx.state;
  // What it said counts as a reply: a resumed model may say it again.
  if (s.generation)
    s.recentReplies = rememberReply(s.recentReplies, normalizedReply(s.generation.text));
  s.generation = null;
  s.expected = [];
  if (s.followUpWindow)
    ctx.emit({ type: "clear_timer", timer: `grace:${s.followUpWindow.turnId}` });
  s.followUpWindow = null;
  // Queued and held input belonged to the turn that is now interrupted: the user is told.
  s.held = [];
  ctx.takeOutbox();
  if (s.turn && carry && canCarry(ctx, s.turn)) {
    s.turn.carried = "pending";
    s.turn.modelEnded = true;
    ctx.trace("TURN_CARRIED", { turnId: s.turn.id });
  } else if (s.turn) endTurn(ctx, { interrupted: "upstream_lost" });
  // Calls still running (a finished turn's client chips, say) are unknown to the next
  // connection, whose rebuilt context closes them as cancelled: so they are, here too, and a
  // result that comes later is refused rather than sent as a second answer.
  ctx.cancelRunningCalls(null, "upstream_lost");
}

/**
 * Results delivered and nothing said since (a follow-up owed, or an empty reply to retry),
 * and not carried before (a second loss ends it). Calls still running are cancelled with the
 * connection (the next one's context says so); a result held for its batch is not carried
 * (cancelling its siblings would send it into the dead connection).
 */
function canCarry(ctx: StepContext, turn: TurnState): boolean {
  const s = ctx.state;
  if (!s.config.guards.carryTurns || !s.config.guards.oneTurnComplete) return false;
  if (turn.carried !== undefined || !replyIsEmpty(s, turn)) return false;
  return !Object.values(s.calls).some((c) => c.turnId === turn.id && c.held !== undefined);
}

/** The new connection is live: the carried turn asks it, once, to speak what it owes. */
export function resumeCarriedTurn(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn;
  if (turn?.carried !== "pending") return;
  turn.carried = "asked";
  turn.modelEnded = false;
  ctx.trace("RESUME_TURN", { turnId: turn.id });
  sendInput(ctx, { type: "nudge", text: s.config.nudgeText }, turn.id);
}
