/**
 * The OpenAI Realtime (GA) stand-in, a pure machine: `oaiStep(state, input, now)` →
 * `{state, effects, wakeAt}`, the clock injected, randomness from the seeded PRNG in the state.
 * It speaks the service's wire and keeps its rules (README, "OpenAI face"):
 * - a response starts only on `response.create` (or the server VAD's end of an utterance);
 *   a function call ends its response, and a `function_call_output` is only added to the
 *   conversation: nothing is said about it until the next `response.create`;
 * - a `response.create` while a response is active gets the error
 *   `conversation_already_has_active_response` (the session goes on);
 * - invalid events (unknown fields, unknown types) get an `error` event, never a close;
 * - speech (appended audio) during a response cancels it (`response.done` cancelled,
 *   turn_detected); `response.cancel` cancels it (client_cancelled);
 * - `response.created` and `rate_limits.updated` at once on `response.create`; the first
 *   content `latencyMs` later (nothing between: the wire has no sign of work);
 * - knobs shared with the Gemini face: seed, timeScale, msPerWord, latencyMs, calls,
 *   sideEffects, emptySchedule (empty responses), duplicateCalls (the arguments' done event
 *   twice), dropAfterMs, utteranceMs, repeatAnswers (the same line, the same words), setupMs
 *   (`session.updated` for a session.update sent within setupMs of the open comes then), vad,
 *   vadThreshold, vadSilenceMs (speech detected by energy, not every appended byte).
 */
import { mulawToPcm16 } from "../../audio/g711.js";
import { pcm16ToBytes } from "../../audio/pcm.js";
import { takeDue } from "../due-queue.js";
import { parseToolOutput, summarise, UTTERANCES } from "../script.js";
import { endOfAudio, hear, pcmOf } from "../vad.js";
import { FACE_DIALECTS } from "./dialects.js";
import { cancel, respond } from "./respond.js";
import {
  Ctx,
  type Item,
  inputBytesPerMs,
  type OaiSimEffect,
  type OaiSimInput,
  type OaiSimState,
} from "./state.js";
import { invalidEventMessage } from "./strict-schemas.js";

export {
  createOpenAISimulator,
  type OaiSimEffect,
  type OaiSimInput,
  type OaiSimState,
} from "./state.js";

export function oaiStep(
  state: OaiSimState,
  input: OaiSimInput,
  now: number,
): { state: OaiSimState; effects: OaiSimEffect[]; wakeAt: number | null } {
  const ctx = new Ctx(structuredClone(state), now);
  const s = ctx.s;
  if (!s.closed) {
    if (input.type === "open") onOpen(ctx);
    else if (input.type === "frame") onFrame(ctx, input.text);
    else if (input.type === "dtmf" && s.sip)
      ctx.send({
        type: "input_audio_buffer.dtmf_event_received",
        event: input.digit,
        received_at: Math.floor(ctx.now / 1000),
      });
    drain(ctx);
  }
  const wakeAt = s.closed || s.queue.length === 0 ? null : Math.min(...s.queue.map((q) => q.at));
  return { state: s, effects: ctx.effects, wakeAt };
}

function onOpen(ctx: Ctx): void {
  ctx.s.openedAt = ctx.now;
  if (FACE_DIALECTS[ctx.s.dialect].greeting === "conversation.created")
    ctx.send({
      type: "conversation.created",
      conversation: { id: ctx.id("conv"), object: "realtime.conversation" },
    });
  else
    ctx.send({
      type: "session.created",
      session: { type: "realtime", object: "realtime.session", id: ctx.id("sess"), tools: [] },
    });
  if (ctx.s.knobs.dropAfterMs > 0) {
    ctx.s.queue.push({
      at: ctx.now + ctx.s.knobs.dropAfterMs,
      message: null,
      close: { code: 1011, reason: "internal error" },
    });
  }
}

function drain(ctx: Ctx): void {
  const s = ctx.s;
  for (;;) {
    if (s.closed) return;
    const due = takeDue(s.queue, ctx.now);
    if (due === undefined) return;
    if (due.close) {
      s.closed = true;
      ctx.effects.push({ type: "close", ...due.close });
      return;
    }
    const message = due.message!;
    if (message.type === "response.done") s.active = null;
    // A SIP call's audio: playing from its first chunk until it has played out.
    if (message.type === "output_audio_buffer.started") s.playing = String(message.response_id);
    if (message.type === "output_audio_buffer.stopped") s.playing = null;
    ctx.send(message);
  }
}

/**
 * Where a new item goes: at the end, or right after `previous_item_id` (`root`: first), as
 * the service inserts it. An unknown item, or a result placed before its own call (at index
 * `callAt`; -1 for any other item), is refused (null) with an error event.
 */
function insertionPoint(ctx: Ctx, previous: string | null | undefined, callAt = -1): number | null {
  const items = ctx.s.items;
  if (previous === undefined || previous === null) return items.length;
  const at = previous === "root" ? 0 : items.findIndex((i) => i.id === previous) + 1;
  if (at === 0 && previous !== "root") {
    error(ctx, "invalid_value", `Item with id '${previous}' not found.`, "previous_item_id");
    return null;
  }
  if (at <= callAt) {
    error(
      ctx,
      "invalid_value",
      "A function_call_output must follow its function_call.",
      "previous_item_id",
    );
    return null;
  }
  return at;
}

function error(ctx: Ctx, code: string, message: string, param: string | null = null): void {
  ctx.send({ type: "error", error: { type: "invalid_request_error", code, message, param } });
}

function onFrame(ctx: Ctx, text: string): void {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    error(ctx, "invalid_json", "The event is not valid JSON.");
    return;
  }
  const dialect = FACE_DIALECTS[ctx.s.dialect];
  const parsed = dialect.events.safeParse(json);
  if (!parsed.success) {
    const { code, message, param } = invalidEventMessage(parsed.error);
    error(ctx, code, message, param);
    return;
  }
  const s = ctx.s;
  const event = parsed.data;
  switch (event.type) {
    case "session.update": {
      const session = dialect.readSession(event.session);
      const voice = session.voice;
      if (voice !== undefined && s.voice !== null && voice !== s.voice && s.spokeAudio) {
        // Documented: "Voice cannot be changed during the session once the model has
        // responded with audio at least once" (the code and message are assumed).
        error(
          ctx,
          "cannot_update_voice",
          "Cannot update a conversation's voice if assistant audio is present.",
          "session.audio.output.voice",
        );
        return;
      }
      if (voice !== undefined) s.voice = voice;
      if (session.tools) {
        s.tools = session.tools.map((t) => t.name);
        s.toolParameters = Object.fromEntries(session.tools.map((t) => [t.name, t.parameters]));
        s.toolDescriptions = Object.fromEntries(
          session.tools.map((t) => [t.name, t.description ?? ""]),
        );
      }
      if (session.audio !== undefined) s.audio = session.audio;
      if (session.inputMulaw !== undefined) s.inputMulaw = session.inputMulaw;
      if (session.outputMulaw !== undefined) s.outputMulaw = session.outputMulaw;
      if (session.inputRate !== undefined) s.inputRate = session.inputRate;
      const updated = {
        type: "session.updated",
        session: {
          type: "realtime",
          tools: (session.tools ?? []).map((t) => ({ type: "function", name: t.name })),
        },
      };
      // `setupMs`: the service takes a moment to set a new connection's session up (real ms
      // from the open, as the Gemini face's setupComplete); later updates are answered at once.
      const setUpAt = s.openedAt + s.knobs.setupMs;
      if (ctx.now < setUpAt) s.queue.push({ at: setUpAt, message: updated });
      else ctx.send(updated);
      return;
    }
    case "conversation.item.create": {
      const item = event.item;
      const id = item.id ?? ctx.id("item");
      let next: Item;
      // An output's call: the output may not be placed before it.
      let callAt = -1;
      if (item.type === "message") {
        const text = item.content.map((c) => c.text).join("");
        next =
          item.role === "assistant" ? { id, kind: "assistant", text } : { id, kind: "user", text };
      } else if (item.type === "function_call") {
        next = { id, kind: "call", callId: item.call_id, name: item.name };
      } else {
        callAt = s.items.findIndex((i) => i.kind === "call" && i.callId === item.call_id);
        if (callAt < 0) {
          error(
            ctx,
            "invalid_value",
            `No function call found for call_id '${item.call_id}'.`,
            "item.call_id",
          );
          return;
        }
        const found = s.items[callAt];
        const name = found?.kind === "call" ? found.name : "";
        const summary = summarise(parseToolOutput(item.output));
        next = { id, kind: "output", callId: item.call_id, name, summary };
        if (s.responses === 0) next.seeded = true;
      }
      const at = insertionPoint(ctx, event.previous_item_id, callAt);
      if (at === null) return;
      s.items.splice(at, 0, next);
      // Placed before the model's latest words: answered already, never read out as new.
      if (at < s.answered) s.answered++;
      if (at < s.answeredBefore) s.answeredBefore++;
      // A seeded assistant message is the reply a "what did you say" repeats.
      if (next.kind === "assistant") s.lastReply = [next.text];
      // The item as the service echoes it: whole, with an id and a status.
      const added = { ...item, id, object: "realtime.item", status: "completed" };
      const previous = at === 0 ? null : (s.items[at - 1]?.id ?? null);
      ctx.send({ type: "conversation.item.added", previous_item_id: previous, item: added });
      ctx.send({ type: "conversation.item.done", previous_item_id: previous, item: added });
      return;
    }
    case "response.create":
      if (s.active !== null) {
        error(
          ctx,
          "conversation_already_has_active_response",
          `Conversation already has an active response in progress: ${s.active}. Wait until the response is finished before creating a new one.`,
        );
        return;
      }
      respond(ctx);
      return;
    case "response.cancel":
      if (s.active === null) {
        error(ctx, "response_cancel_not_active", "Cancellation failed: no active response found.");
        return;
      }
      cancel(ctx, "client_cancelled");
      return;
    case "input_audio_buffer.append":
      if (s.knobs.vad === "energy") hearAudio(ctx, event.audio);
      else onAudio(ctx, Math.floor((event.audio.length * 3) / 4));
      return;
    case "input_audio_buffer.commit":
      if (s.audioBytes < 100 * inputBytesPerMs(s)) {
        error(
          ctx,
          "input_audio_buffer_commit_empty",
          `Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has ${(s.audioBytes / inputBytesPerMs(s)).toFixed(2)}ms of audio.`,
        );
        return;
      }
      endUtterance(ctx, false);
      return;
    case "input_audio_buffer.clear":
      s.audioBytes = 0;
      s.speaking = false;
      endOfAudio(s.vad);
      ctx.send({ type: "input_audio_buffer.cleared" });
      return;
    case "conversation.item.truncate": {
      // "If the audio_end_ms is greater than the actual audio duration, the server will
      // respond with an error" (the SDK's ConversationItemTruncateEvent; the code assumed).
      const said = s.audioMs[event.item_id];
      if (said === undefined || event.audio_end_ms > said) {
        error(
          ctx,
          "invalid_value",
          said === undefined
            ? `No assistant audio item '${event.item_id}'.`
            : `audio_end_ms ${event.audio_end_ms} is greater than the item's audio (${said} ms).`,
          "audio_end_ms",
        );
        return;
      }
      ctx.send({
        type: "conversation.item.truncated",
        item_id: event.item_id,
        audio_end_ms: event.audio_end_ms,
      });
      return;
    }
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Server VAD: appended audio is speech; it cancels a running response; utteranceMs ends it. */
function onAudio(ctx: Ctx, bytes: number): void {
  const s = ctx.s;
  if (bytes === 0) return;
  if (!s.speaking) {
    s.speaking = true;
    ctx.send({
      type: "input_audio_buffer.speech_started",
      audio_start_ms: 0,
      item_id: ctx.id("item"),
    });
    if (s.active !== null) cancel(ctx, "turn_detected");
  }
  s.audioBytes += bytes;
  const utterance = s.knobs.utteranceMs * inputBytesPerMs(s);
  if (utterance > 0 && s.audioBytes >= utterance) endUtterance(ctx, true);
}

/**
 * `vad=energy`: appended audio through the energy detector (../vad.ts): `speech_started` once
 * the utterance holds BARGE_IN_MS of speech (dated from its first speech window), which is when
 * a running response is cancelled; silence cancels nothing. `vadSilenceMs` of non-speech after
 * it ends the utterance. Audio is 24 kHz PCM16, or μ-law at 8 kHz (audio/pcmu, a call's).
 */
function hearAudio(ctx: Ctx, audio: string): void {
  const s = ctx.s;
  const bytes = pcmOf(audio);
  if (bytes === null) return;
  s.audioBytes += bytes.length;
  const pcm = s.inputMulaw ? pcm16ToBytes(mulawToPcm16(bytes)) : bytes;
  const sampleRate = s.inputMulaw ? 8000 : s.inputRate;
  for (const event of hear(s.vad, pcm, { ...s.knobs, sampleRate })) {
    if (event.type === "start") {
      s.speaking = true;
      ctx.send({
        type: "input_audio_buffer.speech_started",
        audio_start_ms: event.atMs,
        item_id: ctx.id("item"),
      });
    } else if (event.type === "speech") {
      if (s.active !== null) cancel(ctx, "turn_detected");
    } else endUtterance(ctx, true, event.atMs);
  }
}

/** The utterance is committed and transcribed; VAD answers it, a manual commit does not. */
function endUtterance(ctx: Ctx, byVad: boolean, endMs = 0): void {
  const s = ctx.s;
  const itemId = ctx.id("item");
  if (s.speaking)
    ctx.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: endMs, item_id: itemId });
  s.speaking = false;
  s.audioBytes = 0;
  endOfAudio(s.vad);
  ctx.send({ type: "input_audio_buffer.committed", item_id: itemId, previous_item_id: null });
  const transcript = UTTERANCES[s.utterances++ % UTTERANCES.length]!;
  s.items.push({ kind: "user", text: transcript });
  ctx.send({
    type: "conversation.item.input_audio_transcription.completed",
    item_id: itemId,
    content_index: 0,
    transcript,
  });
  if (byVad && s.active === null) respond(ctx);
}
