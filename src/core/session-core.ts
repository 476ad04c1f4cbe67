import type { ModelEvent } from "../vocabulary/model.js";
import { archiveSettledCalls } from "./call-archive.js";
import type { Effect } from "./effects.js";
import { setLineWait } from "./follow-up.js";
import { currentGeneration, onReplyReady, takeContent } from "./generations.js";
import { handoffBeforeInput, maybeApplyHandoff, requestHandoff } from "./handoff.js";
import {
  clientCallRunning,
  endUtterance,
  onClientText,
  onSpeechTimer,
  releaseDueLines,
} from "./held-lines.js";
import { onIdleTimer, setIdle } from "./idle.js";
import type { AudioPassed, CoreInput } from "./inputs.js";
import { advanceLimits, reachLimit } from "./limits.js";
import { afterRestartStep, onRestored } from "./restart.js";
import { forgetAnsweredAudio, forgetSentAudio } from "./sent-audio.js";
import {
  type CoreState,
  type GenerationState,
  noteAudioSent,
  noteSpeech,
  repliesMarked,
  turnOfModelWork,
} from "./session-state.js";
import { noteSpeechSpan } from "./speech-clock.js";
import { StepContext } from "./step-context.js";
import { onToolProgress } from "./tool-progress.js";
import {
  cancelCall,
  cancelRunningCalls,
  onClientToolResult,
  onDelegation,
  onModelCancellation,
  onModelToolCall,
  onServerToolOutcome,
  onToolTimeout,
  supersedeStaleClientCalls,
} from "./tools.js";
import { endTurn } from "./turn-state.js";
import { onFollowUpTimer, onGraceTimer, onModelInterrupted, onModelTurnComplete } from "./turns.js";
import {
  audioMayOpen,
  ensureUpstream,
  maybeReconnectForGoAway,
  noteUpstreamHealth,
  onConnectTimer,
  onGoAway,
  onReconnectTimer,
  onResumptionUpdate,
  onSetupComplete,
  onUpstreamClosed,
  onUpstreamFailed,
} from "./upstream.js";
import { onWatchdogTimer, setWatchdog, utteranceQuiet } from "./watchdog.js";

export interface StepResult {
  state: CoreState;
  effects: Effect[];
}

/** Model events that change the conversation (a resumption handle issued before them is stale). */
const SAYS_SOMETHING: ReadonlySet<ModelEvent["type"]> = new Set([
  "text_delta",
  "transcript_delta",
  "input_transcript",
  "audio_delta",
  "tool_call",
  "tool_call_cancellation",
  "generation_complete",
  "turn_complete",
  "interrupted",
]);

/**
 * The session core: a pure function of (state, input, now). It never reads a clock, does
 * no I/O and draws no random numbers; the shell carries out the returned effects in order.
 * `passed`: audio that went through the open audio gate since the last step (audio-gate.ts);
 * its timestamps are set first, as the chunks' own steps would have set them.
 */
export function step(
  state: CoreState,
  input: CoreInput,
  now: number,
  passed: AudioPassed | null = null,
): StepResult {
  const ctx = new StepContext(state, now, cancelRunningCalls);
  if (passed !== null) notePassedAudio(ctx.state, passed);
  // Audio that passed while a turn was open went with the turn (sent-audio.ts; a session
  // without audio never goes there).
  if (ctx.state.sentAudio !== "none") forgetAnsweredAudio(ctx);
  if (input.type === "client_audio") handoffBeforeInput(ctx);
  dispatch(ctx, input);
  if (ctx.state.heldLines.length > 0) releaseDueLines(ctx);
  // After every input: the model connection moves on a go-away once it is quiet, and a
  // pending handoff takes effect once nothing is in flight.
  maybeReconnectForGoAway(ctx);
  maybeApplyHandoff(ctx);
  // A session without caps never enters limits.ts (a frame's path stays as short as it was).
  if (
    (ctx.state.config.limits !== undefined || ctx.state.limit !== null) &&
    advanceLimits(ctx) === "end"
  )
    endSession(ctx);
  // A restarted session's next connection opens once the calls it carried have settled.
  if (ctx.state.afterRestart !== null) afterRestartStep(ctx);
  setWatchdog(ctx);
  if (ctx.state.sentAudio !== "none") forgetAnsweredAudio(ctx);
  archiveSettledCalls(ctx.state);
  return { state: ctx.state, effects: ctx.effects };
}

function dispatch(ctx: StepContext, input: CoreInput): void {
  const s = ctx.state;
  if (
    s.ended &&
    isClientInput(input) &&
    input.type !== "client_connected" &&
    input.type !== "client_disconnected"
  ) {
    if (input.type === "client_ping") {
      ctx.emit({ type: "send_ephemeral", clientId: input.clientId, frame: { type: "pong" } });
      return;
    }
    ctx.sendError(input.clientId, "session_ended", "this session has ended", true);
    return;
  }
  switch (input.type) {
    case "client_connected": {
      if (!s.clients.includes(input.clientId)) s.clients.push(input.clientId);
      const resumed = input.resumeFrom !== undefined;
      ctx.emit({
        type: "send_ephemeral",
        clientId: input.clientId,
        frame: {
          type: "ready",
          sessionId: s.config.sessionId,
          lastSeq: s.nextSeq - 1,
          resumed,
          audio: s.config.audio,
        },
      });
      if (input.resumeFrom !== undefined) {
        ctx.emit({ type: "replay", clientId: input.clientId, afterSeq: input.resumeFrom });
        ctx.trace("CLIENT_RESUME", { clientId: input.clientId, resumeFrom: input.resumeFrom });
      } else {
        ctx.trace("CLIENT_CONNECT", { clientId: input.clientId });
      }
      ensureUpstream(ctx);
      return;
    }
    case "client_disconnected":
      s.clients = s.clients.filter((c) => c !== input.clientId);
      ctx.trace("CLIENT_DISCONNECT", { clientId: input.clientId });
      return;
    case "client_text":
      onClientText(ctx, input);
      return;
    case "client_audio":
      // The session is closing: no speech starts another turn.
      if (s.limit !== null) return;
      s.lastClientAudioAt = ctx.now;
      if (input.quiet !== true) s.lastClientSpeechAt = ctx.now;
      s.audioSinceEnd = true;
      setIdle(ctx);
      if (!audioMayOpen(s, ctx.now)) return;
      ensureUpstream(ctx, true);
      // Audio before the connection is set up (the first words of a session, a reconnect) is
      // held in order, bounded, and goes out once it is (sendModel).
      ctx.sendModel({ type: "user_audio", pcm: input.pcm });
      if (s.generation) s.generation.inputSinceStart = true;
      return;
    case "client_audio_end":
      // The end of speech the open turn's streaming answer already answers belongs to that
      // turn (as its late transcription does): noted as new speech, it would hold the next
      // typed line for an answer that never comes.
      // An end with no audio before it ends no speech (nothing waits for an answer).
      if (
        s.audioSinceEnd &&
        !(s.turn !== null && s.generation?.owner === s.turn.id && s.generation.hasContent)
      )
        noteSpeech(s);
      s.audioSinceEnd = false;
      if (s.generation) s.generation.inputSinceStart = true;
      ctx.sendModel({ type: "audio_end" });
      setLineWait(ctx);
      return;
    case "client_played":
      // Only the connection that said the audio can cut it; a later one never had it.
      if (s.upstream.phase === "live") ctx.sendModel({ type: "audio_played", ms: input.ms });
      return;
    case "client_tool_result":
      setIdle(ctx);
      // The input carries its outcome (a ToolOutcome): its result or its error.
      onClientToolResult(ctx, input.clientId, input.callId, input);
      return;
    case "client_ping":
      ctx.emit({ type: "send_ephemeral", clientId: input.clientId, frame: { type: "pong" } });
      return;
    case "client_bad_frame":
      ctx.trace("BAD_FRAME", { clientId: input.clientId, code: input.code });
      ctx.sendError(input.clientId, input.code, input.message);
      return;
    case "audio_shed":
      ctx.trace("AUDIO_SHED", { clientId: input.clientId, chunks: input.chunks, ms: input.ms });
      ctx.sendError(
        input.clientId,
        "overloaded",
        `the gateway fell behind: ${input.chunks} chunks (${input.ms} ms) of your oldest audio were dropped so that the newest goes on at once`,
      );
      return;
    case "upstream_opened":
      return;
    case "handoff_requested":
      requestHandoff(ctx, input.to, input.reason);
      return;
    case "upstream_failed":
      onUpstreamFailed(ctx, input.message, input.refused === true);
      return;
    case "model":
      s.lastModelSignAt = ctx.now;
      noteUpstreamHealth(ctx, input.event.type === "turn_complete");
      if (SAYS_SOMETHING.has(input.event.type)) s.upstream.handleStale = true;
      onModelEvent(ctx, input.event);
      return;
    case "tool_outcome":
      onServerToolOutcome(ctx, input.callId, input);
      return;
    case "tool_progress":
      onToolProgress(ctx, input);
      return;
    case "tools_listed": {
      // Not recorded: the shell lists them again at every start, before its connection opens.
      const agentTools = s.config.agentTools ?? {};
      const own = agentTools[input.agent] ?? (input.agent === s.agent ? s.config.tools : {});
      s.config = {
        ...s.config,
        agentTools: { ...agentTools, [input.agent]: { ...own, ...input.tools } },
      };
      return;
    }
    case "timer_fired":
      onTimer(ctx, input.timer);
      return;
    case "end_session":
      endSession(ctx);
      return;
    case "session_restored":
      onRestored(ctx, input.rerun);
      return;
    case "limit_reached":
      reachLimit(ctx, input.limit, input.value);
      return;
    case "audio_passed":
      notePassedAudio(s, input);
      return;
    default: {
      const unreachable: never = input;
      throw new Error(`unknown input ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A piece of the model's text for the turn its generation answers (dropped if none). */
function forwardText(
  ctx: StepContext,
  gen: GenerationState,
  chunk: { kind: "model_text" | "transcript"; text: string },
): void {
  const first = !gen.hasContent;
  const owner = takeContent(ctx, gen, chunk.text);
  if (owner === null) return;
  if (first) ctx.trace("MODEL_TEXT", { turnId: owner });
  ctx.record({ kind: chunk.kind, turnId: owner, text: chunk.text });
}

/**
 * The user's words so far and a new piece of their transcription. Pieces carry their own
 * spaces, but one that starts a new utterance (after a pause the model's answer did not
 * fill) may not: a space keeps "do?" and "Tell" apart.
 */
function joinTranscript(sofar: string, piece: string): string {
  const gap = /[.!?]$/.test(sofar) && /^\S/.test(piece);
  return gap ? `${sofar} ${piece}` : sofar + piece;
}

/** The timestamps the passed chunks' own steps would have left (audio-gate.ts). */
function notePassedAudio(s: CoreState, passed: AudioPassed): void {
  if (passed.clientAt !== null) {
    // Sent to the live connection (sendModel): the handle no longer covers everything.
    s.upstream.handleStale = true;
    s.lastClientAudioAt = passed.clientAt;
    if (passed.speechAt !== null) s.lastClientSpeechAt = passed.speechAt;
    s.audioSinceEnd = true;
    s.lastActivityAt = passed.clientAt;
    noteAudioSent(s, passed.clientBytes);
  }
  if (passed.modelAt !== null) s.lastModelSignAt = passed.modelAt;
}

function isClientInput(input: CoreInput): input is Extract<CoreInput, { clientId: string }> {
  return "clientId" in input;
}

function onModelEvent(ctx: StepContext, event: ModelEvent): void {
  const s = ctx.state;
  switch (event.type) {
    case "setup_complete":
      onSetupComplete(ctx);
      return;
    case "text_delta":
    case "transcript_delta": {
      // Where its speech ends, for a model whose utterance ends only in quiet (watchdog.ts).
      if (event.type === "transcript_delta" && event.span !== undefined)
        s.speechClock = noteSpeechSpan(s.speechClock, ctx.now, event.span);
      const kind = event.type === "text_delta" ? "model_text" : "transcript";
      forwardText(ctx, wordsSaid(currentGeneration(ctx)), { kind, text: event.text });
      return;
    }
    case "audio_delta": {
      const gen = wordsSaid(currentGeneration(ctx));
      const first = !gen.hasContent;
      const owner = takeContent(ctx, gen);
      if (owner === null) {
        s.counters.droppedModelAudio++;
        return;
      }
      if (first) ctx.trace("MODEL_AUDIO", { turnId: owner });
      ctx.emit({ type: "send_audio", pcm: event.pcm });
      return;
    }
    case "input_transcript":
    case "speech_started":
      // Speech while the open turn is being answered belongs to that turn (a late piece of
      // its transcription); a barge-in by voice comes as `interrupted`. Only speech outside
      // a running answer makes the model's next generation a new voice turn.
      if (s.turn !== null && (s.generation !== null || !s.turn.modelEnded)) return;
      if (event.type === "speech_started") {
        noteSpeech(s);
        if (clientCallRunning(s)) supersedeStaleClientCalls(ctx);
      } else if (event.text.length > 0) {
        s.inputTranscript = joinTranscript(s.inputTranscript, event.text);
        noteSpeech(s);
      }
      if (s.speechDetected && s.followUpWindow !== null && s.followUpWindow.turnId === s.turn?.id)
        s.followUpWindow.spokenOver = true;
      setLineWait(ctx);
      return;
    case "working":
      s.lastWorkAt = ctx.now;
      return;
    case "delegation":
      onDelegation(ctx, event.id, event.target);
      return;
    case "reply_ready": {
      s.lastWorkAt = ctx.now;
      s.replyOpen = true;
      s.replyAsked = false;
      onReplyReady(ctx, event.turnId);
      // Its words come after, in the voice: until they do, the answer is still to be heard.
      const gen = s.generation;
      if (event.words === true && gen !== null && gen.owner === event.turnId) gen.wordsOwed = true;
      return;
    }
    case "reply_done":
      s.replyOpen = false;
      return;
    case "tool_call":
      onModelToolCall(ctx, event.calls, event.dropped);
      return;
    case "tool_call_cancellation":
      onModelCancellation(ctx, event.ids);
      return;
    case "generation_complete":
      currentGeneration(ctx);
      return;
    case "turn_complete":
      // A turnless model's utterance ends where the user's speech begins, as its adapter says;
      // one the quiet already ended is not ended again (nothing runs: no turn of its own opens).
      if (s.generation !== null || !repliesMarked(s) || !s.config.guards.utteranceEndsOnce)
        onModelTurnComplete(ctx);
      setIdle(ctx);
      return;
    case "interrupted":
      onModelInterrupted(ctx);
      return;
    case "go_away":
      onGoAway(ctx, event.timeLeftMs);
      return;
    case "resumption_update":
      onResumptionUpdate(ctx, event.handle, event.resumable);
      return;
    case "usage": {
      // A response's usage rides before its end: a running generation is the one it counts,
      // and one that answers nobody (suppressed, owed to a cut turn) counts to no turn.
      const turnId = s.generation !== null ? s.generation.owner : turnOfModelWork(s);
      const { promptTokens, responseTokens, totalTokens, seconds } = event.usage;
      ctx.emit({ type: "record_usage", turnId, usage: event.usage });
      ctx.trace("USAGE", {
        turnId,
        promptTokens,
        responseTokens,
        totalTokens,
        ...(seconds === undefined ? {} : { seconds }),
      });
      return;
    }
    case "upstream_closed":
      onUpstreamClosed(ctx, event.code, event.reason, event.fatal, event.expired === true);
      return;
    case "service_error":
      ctx.trace("SERVICE_ERROR", { code: event.code, message: event.message });
      return;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown model event ${JSON.stringify(unreachable)}`);
    }
  }
}

function onTimer(
  ctx: StepContext,
  timer: CoreInput & { type: "timer_fired" } extends { timer: infer T } ? T : never,
): void {
  if (timer === "idle") onIdleTimer(ctx);
  else if (timer === "reconnect") onReconnectTimer(ctx);
  else if (timer === "go_away") maybeReconnectForGoAway(ctx, true);
  else if (timer.startsWith("tool:")) onToolTimeout(ctx, timer.slice("tool:".length));
  else if (timer.startsWith("grace:")) onGraceTimer(ctx, timer.slice("grace:".length));
  else if (timer.startsWith("follow_up:")) onFollowUpTimer(ctx, timer.slice("follow_up:".length));
  else if (timer === "watchdog") {
    if (utteranceQuiet(ctx)) endUtterance(ctx);
    else onWatchdogTimer(ctx);
  } else if (timer === "connect") onConnectTimer(ctx);
  // The wait for speech's answer, or for a reply no turn waits for, is bounded; a turn's
  // answer is bounded by the turn's own watchdog.
  else if (timer === "speech") onSpeechTimer(ctx);
  // The duration cap: measured after the step (advanceLimits).
  else if (timer === "limit") ctx.state.limitTimerSet = false;
}

/** The generation's words are being said: none are owed any more (wordsOwed). */
function wordsSaid(gen: GenerationState): GenerationState {
  gen.wordsOwed = undefined;
  return gen;
}

function endSession(ctx: StepContext): void {
  const s = ctx.state;
  if (s.ended) return;
  for (const call of Object.values(s.calls)) {
    if (call.status === "running") cancelCall(ctx, call, "session_ended");
  }
  if (s.turn) endTurn(ctx, { interrupted: "upstream_lost" });
  // The service session is asked to end before its socket closes (a direct call's goes on
  // without it otherwise).
  if (s.upstream.phase === "live") ctx.sendModel({ type: "end_session" });
  if (s.upstream.phase !== "closed" && s.upstream.phase !== "failed") {
    ctx.emit({ type: "close_upstream", reason: "session ended" });
  }
  s.upstream.phase = "closed";
  ctx.takeOutbox();
  forgetSentAudio(ctx);
  ctx.record({ kind: "status", state: "ended" });
  s.ended = true;
  ctx.emit({ type: "close_clients", code: 1000, reason: "session ended" });
}
