import type { InterruptReason } from "../history/events.js";
import type { ModelCommand } from "./model.js";
import { looksRegenerated, MIN_PREFIX, openingOf, rememberOpening } from "./regeneration.js";
import type { GenerationState, TurnState } from "./state.js";
import type { StepContext } from "./step-context.js";
import { cancelCall } from "./tools.js";

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
  if (s.config.guards.oneTurnComplete) {
    if (s.followUpWindow === null && s.generation?.unansweredSpeak) {
      // Hold it until the model shows whether it had the results in time, or a grace passes.
      openWindow(ctx, `hold-${s.generation.owner ?? "none"}`);
    }
    if (s.followUpWindow !== null) {
      s.held.push({ command, owner });
      return;
    }
  }
  s.expected.push(owner);
  if (command.type === "user_text" && s.upstream.phase !== "live" && s.turn?.id === owner) {
    s.outboxSince ??= s.turn.userSeq;
  }
  ctx.sendModel(command);
}

/** A late speak result: the model owes the turn exactly one generation for it. */
export function expectGeneration(ctx: StepContext, turnId: string): void {
  ctx.state.expected.push(turnId);
}

/** Is the open turn still owed a generation? */
export function awaitingGeneration(ctx: StepContext, turn: TurnState): boolean {
  const s = ctx.state;
  return s.followUpWindow?.turnId === turn.id || s.expected.includes(turn.id);
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
 * Speak results were sent into the running generation: a follow-up may now be on its way,
 * unless the model cannot end its turn before it has them (it withholds turn_complete).
 */
export function noteSpeakSentInGeneration(ctx: StepContext): void {
  const s = ctx.state;
  if (s.generation && !s.config.capabilities.turnCompleteWaitsForResults)
    s.generation.unansweredSpeak = true;
}

/** The model said something after the speak results it was sent: it had them in time. */
function speakAnswered(ctx: StepContext, gen: GenerationState): void {
  if (!gen.unansweredSpeak) return;
  gen.unansweredSpeak = false;
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
  if (s.followUpWindow) {
    // What the open window waits for comes before anything sent after it opened.
    owner = turn?.id === s.followUpWindow.turnId ? turn.id : null;
    claim = "grace";
    // Set before the window closes: releasing held input looks at the running generation.
    s.generation = newGeneration(owner, claim);
    closeWindow(ctx);
  } else if (s.expected.length > 0) {
    owner = s.expected.shift() ?? null;
    claim = "expected";
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
  return s.generation;
}

function newGeneration(owner: string | null, claim: GenerationState["claim"]): GenerationState {
  return { owner, claim, hasContent: false, opening: null, pending: [], unansweredSpeak: false };
}

type TextChunk = { kind: "model_text" | "transcript"; text: string };

/** While a regeneration could come, a generation's opening is judged before it is shown. */
function watchingForRegeneration(ctx: StepContext, gen: GenerationState): boolean {
  const s = ctx.state;
  return (
    s.config.guards.suppressUnsolicited &&
    ctx.now <= s.regenUntil &&
    (gen.claim === "expected" || gen.claim === "grace") &&
    !gen.hasContent
  );
}

/**
 * A piece of a generation's text. Inside a regeneration window the opening is held back
 * until there is enough of it to judge (MIN_PREFIX characters, or the generation's end);
 * returns the pieces to forward now, in order.
 */
export function admitText(ctx: StepContext, gen: GenerationState, chunk: TextChunk): TextChunk[] {
  if (gen.opening !== null) return [chunk];
  gen.pending.push(chunk);
  const soFar = openingOf(gen.pending.map((p) => p.text).join(""));
  if (watchingForRegeneration(ctx, gen) && soFar.length < MIN_PREFIX) return [];
  return judgeOpening(ctx, gen);
}

/**
 * Decide on the held opening (more text came, a tool call, or the generation ended): a
 * generation that repeats a recent reply while a silent result could have provoked it is a
 * regeneration — suppressed, and the slot it took is given back so the real answer that
 * follows still finds it. Returns the held pieces to forward (none if suppressed).
 */
export function judgeOpening(ctx: StepContext, gen: GenerationState): TextChunk[] {
  const s = ctx.state;
  if (gen.opening !== null || gen.pending.length === 0) return [];
  const held = gen.pending;
  gen.pending = [];
  const opening = openingOf(held.map((p) => p.text).join(""));
  const regenerated =
    watchingForRegeneration(ctx, gen) && looksRegenerated(opening, s.recentOpenings);
  gen.opening = opening;
  // Dropped replies count too: the model regenerates what it said, not what we forwarded.
  s.recentOpenings = rememberOpening(s.recentOpenings, opening);
  if (!regenerated) return held;
  giveBack(ctx, gen);
  gen.owner = null;
  gen.claim = "none";
  s.counters.suppressedGenerations++;
  ctx.trace("SUPPRESSED", { reason: "regenerated reply" });
  return [];
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
  speakAnswered(ctx, gen);
  const turn = ctx.state.turn;
  if (turn?.id !== gen.owner) return;
  if (!turn) return;
  turn.hasContent = true;
  turn.resultsSinceContent = 0;
  turn.speakSinceContent = false;
  turn.emptyRetries = 0;
}

function replyIsEmpty(turn: TurnState): boolean {
  return turn.resultsSinceContent > 0 && (turn.speakSinceContent || !turn.hasContent);
}

export function onModelTurnComplete(ctx: StepContext): void {
  const s = ctx.state;
  const gen = currentGeneration(ctx);
  s.generation = null;
  ctx.trace("MODEL_TURN_COMPLETE", { owner: gen.owner });
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
    return;
  }
  const claimed = gen.claim === "expected" || gen.claim === "grace";
  // Only for a turn still waiting: an interrupted turn's slot given back would swallow the
  // answer to the next input if the empty generation was in fact the one it stood for.
  const ownerLive = gen.owner !== null && turn?.id === gen.owner;
  if (
    !gen.hasContent &&
    claimed &&
    ownerLive &&
    s.config.guards.suppressUnsolicited &&
    s.followUpWindow === null
  ) {
    if (ctx.now <= s.regenUntil && s.config.followUpGraceMs > 0) {
      // A generation with nothing in it may not be the answer it was taken for: a model that
      // took a silent result as new input can end such a generation unasked (field report
      // O1, "two empty turnCompletes"). While that is possible, the answer owed is still
      // awaited for a grace; if nothing comes, the empty generation was it.
      ctx.trace("EMPTY_GENERATION", { owner: gen.owner });
      giveBack(ctx, gen);
      return;
    }
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
  if (replyIsEmpty(turn) && s.config.guards.emptyRetry) {
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
  const speakRunning = Object.values(s.calls).some(
    (c) => c.turnId === turn.id && c.status === "running" && c.followUp === "speak",
  );
  if (!speakRunning) endTurn(ctx, "complete");
}

export function onGraceTimer(ctx: StepContext, turnId: string): void {
  const s = ctx.state;
  if (s.followUpWindow?.turnId !== turnId) return;
  const turn = s.turn?.id === turnId ? s.turn : null;
  const empty = turn?.modelEnded && replyIsEmpty(turn);
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
  s.expected = s.expected.map((owner) => (owner === turn.id ? null : owner));
  if (s.generation?.owner === turn.id && s.config.guards.suppressUnsolicited)
    s.generation.owner = null;
  if (how === "complete") {
    ctx.record({ kind: "turn_complete", turnId: turn.id });
    ctx.trace("TURN_COMPLETE", { turnId: turn.id });
  } else {
    ctx.record({ kind: "interrupted", turnId: turn.id, reason: how.interrupted });
    ctx.trace("INTERRUPTED", { turnId: turn.id, reason: how.interrupted });
    for (const call of Object.values(s.calls)) {
      if (call.turnId === turn.id && call.status === "running")
        cancelCall(ctx, call, how.interrupted);
    }
  }
}

/** The model connection dropped under an open turn: it cannot be finished, say so. */
export function closeTurnOnUpstreamLoss(ctx: StepContext): void {
  const s = ctx.state;
  s.generation = null;
  s.expected = [];
  if (s.followUpWindow)
    ctx.emit({ type: "clear_timer", timer: `grace:${s.followUpWindow.turnId}` });
  s.followUpWindow = null;
  // Queued and held input belonged to the turn that is now interrupted: the user is told.
  s.held = [];
  s.outbox = [];
  s.outboxSince = null;
  if (s.turn) endTurn(ctx, { interrupted: "upstream_lost" });
  // Calls still running (a finished turn's client chips, say) are unknown to the next
  // connection, whose rebuilt context closes them as cancelled: so they are, here too, and a
  // result that comes later is refused rather than sent as a second answer.
  for (const call of Object.values(s.calls)) {
    if (call.status === "running") cancelCall(ctx, call, "upstream_lost");
  }
}
