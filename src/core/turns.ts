import type { InterruptReason } from "../history/events.js";
import type { GenerationState, TurnState } from "./state.js";
import type { StepContext } from "./step-context.js";
import { looksRegenerated, openingOf, rememberOpening } from "./regeneration.js";
import { cancelCall } from "./tools.js";

export function openTurn(ctx: StepContext, source: "text" | "audio", text: string): TurnState {
  const s = ctx.state;
  s.turnCount++;
  const turn: TurnState = {
    id: `t${s.turnCount}`,
    source,
    modelEnded: false,
    hasContent: false,
    resultsSinceContent: 0,
    speakSinceContent: false,
    emptyRetries: 0,
    inGrace: false,
  };
  s.turn = turn;
  s.lastTurnId = turn.id;
  s.speechDetected = false;
  s.inputTranscript = "";
  ctx.record({ kind: "user", turnId: turn.id, text, source });
  ctx.trace("USER", { turnId: turn.id, source });
  return turn;
}

/** The model owes `turnId` one generation (a user input, a late speak result, a nudge). */
export function expectGeneration(ctx: StepContext, turnId: string): void {
  ctx.state.expected.push(turnId);
}

/** Is the open turn still owed a generation? */
export function awaitingGeneration(ctx: StepContext, turn: TurnState): boolean {
  return turn.inGrace || ctx.state.expected.includes(turn.id);
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
  if (s.expected.length > 0) {
    owner = s.expected.shift() ?? null;
    claim = "expected";
  } else if (turn?.inGrace) {
    // The follow-up of a result the model received only after it ended its turn.
    owner = turn.id;
    claim = "grace";
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
  if (owner !== null && s.turn?.id === owner) {
    s.turn.modelEnded = false;
    if (s.turn.inGrace) {
      s.turn.inGrace = false;
      ctx.emit({ type: "clear_timer", timer: `grace:${owner}` });
    }
  }
  s.generation = { owner, claim, hasContent: false, opening: null };
  return s.generation;
}

/**
 * A generation's first text: if it repeats a recent reply while a regeneration is possible,
 * it is one. It is suppressed and gives back the slot it took, so the real answer that
 * follows still finds it. Returns false when the text must not be forwarded.
 */
export function admitOpening(ctx: StepContext, gen: GenerationState, text: string): boolean {
  const s = ctx.state;
  if (gen.opening !== null) return true;
  gen.opening = openingOf(text);
  if (gen.owner === null && gen.claim === "none") {
    s.recentOpenings = rememberOpening(s.recentOpenings, gen.opening);
    return true;
  }
  const canGiveBack = gen.claim === "expected" || gen.claim === "grace";
  if (
    s.config.guards.suppressUnsolicited &&
    s.regenWindow > 0 &&
    canGiveBack &&
    !gen.hasContent &&
    looksRegenerated(gen.opening, s.recentOpenings)
  ) {
    // Even a slot whose turn was interrupted is given back: the answer to that input is still to come.
    if (gen.claim === "expected") s.expected.unshift(gen.owner);
    else if (gen.owner !== null && s.turn?.id === gen.owner) {
      s.turn.inGrace = true;
      ctx.emit({ type: "set_timer", timer: `grace:${gen.owner}`, at: ctx.now + s.config.followUpGraceMs });
    }
    gen.owner = null;
    s.counters.suppressedGenerations++;
    ctx.trace("SUPPRESSED", { reason: "regenerated reply" });
    return false;
  }
  // Dropped replies count too: the model regenerates what it said, not what we forwarded.
  s.recentOpenings = rememberOpening(s.recentOpenings, gen.opening);
  return true;
}

/** The open turn this generation answers, or null when its output must not be forwarded. */
export function liveOwner(ctx: StepContext, gen: GenerationState): string | null {
  if (gen.owner === null) return null;
  if (ctx.state.turn?.id === gen.owner) return gen.owner;
  // The turn already ended (barge-in; or the naive relay after its turn_complete).
  return ctx.state.config.guards.suppressUnsolicited ? null : gen.owner;
}

/** Model content (text, transcript, audio, a tool call) arrived for the open turn. */
export function noteContent(ctx: StepContext): void {
  const turn = ctx.state.turn;
  if (!turn) return;
  turn.hasContent = true;
  turn.resultsSinceContent = 0;
  turn.speakSinceContent = false;
  turn.emptyRetries = 0;
}

export function onModelTurnComplete(ctx: StepContext): void {
  const s = ctx.state;
  const gen = currentGeneration(ctx);
  s.generation = null;
  if (s.regenWindow > 0) s.regenWindow--;
  ctx.trace("MODEL_TURN_COMPLETE", { owner: gen.owner });
  const turn = s.turn;
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
  const maybeEmpty = turn.resultsSinceContent > 0 && (turn.speakSinceContent || !turn.hasContent);
  if (maybeEmpty && s.config.guards.emptyRetry) {
    if (s.config.capabilities.turnCompleteWaitsForResults || s.config.followUpGraceMs <= 0) {
      retryEmpty(ctx);
    } else {
      // The model may have ended its turn before our result reached it (the race): give
      // the follow-up generation a moment to start before calling the reply empty.
      turn.inGrace = true;
      ctx.emit({ type: "set_timer", timer: `grace:${turn.id}`, at: ctx.now + s.config.followUpGraceMs });
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
  if (!turn || !turn.modelEnded || s.generation !== null || awaitingGeneration(ctx, turn)) return;
  const speakRunning = Object.values(s.calls).some(
    (c) => c.turnId === turn.id && c.status === "running" && c.followUp === "speak",
  );
  if (!speakRunning) endTurn(ctx, "complete");
}

export function onGraceTimer(ctx: StepContext, turnId: string): void {
  const turn = ctx.state.turn;
  if (!turn || turn.id !== turnId || !turn.inGrace) return;
  turn.inGrace = false;
  retryEmpty(ctx);
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
  expectGeneration(ctx, turn.id);
  ctx.sendModel({ type: "nudge", text: s.config.nudgeText });
}

/** End the open turn with its one turn end; what the model still owes it is dropped. */
export function endTurn(
  ctx: StepContext,
  how: "complete" | { interrupted: InterruptReason },
): void {
  const s = ctx.state;
  const turn = s.turn;
  if (!turn) return;
  if (turn.inGrace) ctx.emit({ type: "clear_timer", timer: `grace:${turn.id}` });
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
  // Queued input belonged to the turn that is now interrupted: the user is told, not surprised later.
  s.outbox = [];
  if (s.turn) endTurn(ctx, { interrupted: "upstream_lost" });
}
