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
 * - knobs shared with the Gemini face: seed, timeScale, msPerWord, latencyMs, calls,
 *   sideEffects, emptySchedule (empty responses), duplicateCalls (the arguments' done event
 *   twice), dropAfterMs, utteranceMs.
 */
import type { SimulatorKnobs } from "../knobs.js";
import { nextRandom, seedState } from "../prng.js";
import {
  answerTag,
  asksToGoOn,
  chunkWords,
  plannedCalls,
  replyFor,
  resultSpeech,
  summarise,
} from "../script.js";
import { UTTERANCES } from "../state.js";
import { invalidEventMessage, OpenAIClientEvent } from "./schemas.js";

type Json = Record<string, unknown>;

type Item =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "call"; callId: string; name: string }
  | { kind: "output"; callId: string; name: string; summary: string };

export interface OaiSimState {
  knobs: SimulatorKnobs;
  rng: number;
  closed: boolean;
  tools: string[];
  audio: boolean;
  items: Item[];
  /** Items up to this index have been answered by a response. */
  answered: number;
  /** The response in progress: its id; its events wait in the queue. */
  active: string | null;
  queue: { at: number; message: Json | null; close?: { code: number; reason: string } }[];
  responses: number;
  userTurns: number;
  answers: number;
  ids: number;
  lastReply: string[];
  /** What a reply that called tools still has to say after their outputs. */
  owed: string | null;
  audioBytes: number;
  speaking: boolean;
  utterances: number;
  /** When the connection opened (for dropAfterMs). */
  openedAt: number;
}

export type OaiSimInput = { type: "open" } | { type: "frame"; text: string } | { type: "tick" };
export type OaiSimEffect =
  | { type: "send"; message: Json }
  | { type: "close"; code: number; reason: string };

/** 24 kHz PCM16: 48 bytes a millisecond. */
const BYTES_PER_MS = 48;

export function createOpenAISimulator(knobs: SimulatorKnobs): OaiSimState {
  return {
    knobs,
    rng: seedState(knobs.seed),
    closed: false,
    tools: [],
    audio: true,
    items: [],
    answered: 0,
    active: null,
    queue: [],
    responses: 0,
    userTurns: 0,
    answers: 0,
    ids: 0,
    lastReply: [],
    owed: null,
    audioBytes: 0,
    speaking: false,
    utterances: 0,
    openedAt: 0,
  };
}

class Ctx {
  readonly effects: OaiSimEffect[] = [];
  constructor(
    readonly s: OaiSimState,
    readonly now: number,
  ) {}
  send(message: Json): void {
    this.effects.push({ type: "send", message: { event_id: this.id("event"), ...message } });
  }
  id(prefix: string): string {
    return `${prefix}_${++this.s.ids}`;
  }
  draw(): number {
    const { value, state } = nextRandom(this.s.rng);
    this.s.rng = state;
    return value;
  }
  /** Paced events of the active response: at `ms` from now, scaled. */
  later(ms: number, message: Json): void {
    this.s.queue.push({ at: this.now + ms * this.s.knobs.timeScale, message });
  }
}

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
    drain(ctx);
  }
  const wakeAt = s.closed || s.queue.length === 0 ? null : Math.min(...s.queue.map((q) => q.at));
  return { state: s, effects: ctx.effects, wakeAt };
}

function onOpen(ctx: Ctx): void {
  ctx.s.openedAt = ctx.now;
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
    let best = -1;
    for (let i = 0; i < s.queue.length; i++) {
      if (s.queue[i]!.at <= ctx.now && (best === -1 || s.queue[i]!.at < s.queue[best]!.at))
        best = i;
    }
    if (best === -1) return;
    const [due] = s.queue.splice(best, 1);
    if (due!.close) {
      s.closed = true;
      ctx.effects.push({ type: "close", ...due!.close });
      return;
    }
    const message = due!.message!;
    if (message.type === "response.done") s.active = null;
    ctx.send(message);
  }
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
  const parsed = OpenAIClientEvent.safeParse(json);
  if (!parsed.success) {
    const { code, message, param } = invalidEventMessage(parsed.error);
    error(ctx, code, message, param);
    return;
  }
  const s = ctx.s;
  const event = parsed.data;
  switch (event.type) {
    case "session.update": {
      const session = event.session;
      if (session.tools) s.tools = session.tools.map((t) => t.name);
      if (session.output_modalities) s.audio = session.output_modalities[0] === "audio";
      ctx.send({
        type: "session.updated",
        session: { type: "realtime", tools: session.tools ?? [] },
      });
      return;
    }
    case "conversation.item.create": {
      const item = event.item;
      if (item.type === "message") {
        const text = item.content.map((c) => c.text).join("");
        s.items.push(
          item.role === "assistant" ? { kind: "assistant", text } : { kind: "user", text },
        );
        // A seeded assistant message is the reply a "what did you say" repeats.
        if (item.role === "assistant") s.lastReply = [text];
      } else if (item.type === "function_call") {
        s.items.push({ kind: "call", callId: item.call_id, name: item.name });
      } else {
        const call = s.items.find((i) => i.kind === "call" && i.callId === item.call_id);
        if (call === undefined || call.kind !== "call") {
          error(
            ctx,
            "invalid_value",
            `No function call found for call_id '${item.call_id}'.`,
            "item.call_id",
          );
          return;
        }
        const output = parseOutput(item.output);
        s.items.push({
          kind: "output",
          callId: item.call_id,
          name: call.name,
          summary: summarise(output),
        });
      }
      // The item as the service echoes it: whole, with an id and a status.
      const added = {
        ...item,
        id: item.id ?? ctx.id("item"),
        object: "realtime.item",
        status: "completed",
      };
      ctx.send({ type: "conversation.item.added", previous_item_id: null, item: added });
      ctx.send({ type: "conversation.item.done", previous_item_id: null, item: added });
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
      onAudio(ctx, Math.floor((event.audio.length * 3) / 4));
      return;
    case "input_audio_buffer.commit":
      if (s.audioBytes < 100 * BYTES_PER_MS) {
        error(
          ctx,
          "input_audio_buffer_commit_empty",
          `Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has ${(s.audioBytes / BYTES_PER_MS).toFixed(2)}ms of audio.`,
        );
        return;
      }
      endUtterance(ctx, false);
      return;
    case "input_audio_buffer.clear":
      s.audioBytes = 0;
      s.speaking = false;
      ctx.send({ type: "input_audio_buffer.cleared" });
      return;
    case "conversation.item.truncate":
      ctx.send({
        type: "conversation.item.truncated",
        item_id: event.item_id,
        audio_end_ms: event.audio_end_ms,
      });
      return;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
    }
  }
}

function parseOutput(output: string): Json {
  try {
    const value: unknown = JSON.parse(output);
    return value !== null && typeof value === "object" ? (value as Json) : { output };
  } catch {
    return { output };
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
  const utterance = s.knobs.utteranceMs * BYTES_PER_MS;
  if (utterance > 0 && s.audioBytes >= utterance) endUtterance(ctx, true);
}

/** The utterance is committed and transcribed; VAD answers it, a manual commit does not. */
function endUtterance(ctx: Ctx, byVad: boolean): void {
  const s = ctx.s;
  const itemId = ctx.id("item");
  if (s.speaking)
    ctx.send({ type: "input_audio_buffer.speech_stopped", audio_end_ms: 0, item_id: itemId });
  s.speaking = false;
  s.audioBytes = 0;
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

/** The active response stops: its queued events go, `response.done` says cancelled. */
function cancel(ctx: Ctx, reason: string): void {
  const s = ctx.s;
  const id = s.active!;
  s.queue = s.queue.filter((q) => q.close !== undefined);
  s.active = null;
  ctx.send({
    type: "response.done",
    response: {
      object: "realtime.response",
      id,
      status: "cancelled",
      status_details: { type: "cancelled", reason },
      output: [],
      usage: null,
    },
  });
}

/** One response to what is new in the conversation since the last one. */
function respond(ctx: Ctx): void {
  const s = ctx.s;
  const id = ctx.id("resp");
  s.active = id;
  s.responses++;
  ctx.send({
    type: "response.created",
    response: {
      object: "realtime.response",
      id,
      status: "in_progress",
      status_details: null,
      output: [],
      usage: null,
    },
  });
  const fresh = s.items.slice(s.answered);
  const outputs = fresh.filter((i) => i.kind === "output");
  const userText = fresh.findLast((i) => i.kind === "user")?.text;
  // Empty: by schedule, or (emptyRate) a response that answers tool outputs.
  const answersTools = outputs.length > 0 && userText === undefined;
  const empty =
    s.knobs.emptySchedule.includes(s.responses) ||
    (answersTools && s.knobs.emptyRate > 0 && ctx.draw() < s.knobs.emptyRate);
  if (empty) {
    // An empty response: nothing said; what it should have said is still owed.
    finish(ctx, id, 0, 0);
    return;
  }
  s.answered = s.items.length;
  let say: string;
  let calls: string[] = [];
  // After an empty response an instruction to go on gets what was owed; a new line is
  // answered itself (what was owed is dropped: the user moved on).
  const goOn = s.owed !== null && userText !== undefined && asksToGoOn(userText);
  if (userText !== undefined && !goOn) s.owed = null;
  // Outputs alone (a response.create after them) are spoken; a new user line is answered
  // itself (side-effect outputs in context are not read out to it).
  if ((outputs.length > 0 && userText === undefined) || goOn) {
    const speech = outputs.map((o) => resultSpeech(o.name, o.summary, answerTag(++s.answers)));
    say = [...speech, s.owed ?? ""].join(" ").trim();
    s.owed = null;
  } else if (userText !== undefined) {
    // The first answer on a connection counts the turns a seeded conversation already had.
    s.userTurns =
      s.userTurns === 0 ? s.items.filter((i) => i.kind === "user").length : s.userTurns + 1;
    const reply = replyFor(s.userTurns, userText, s.lastReply, ctx.draw(), answerTag(++s.answers));
    calls = plannedCalls(s.userTurns, userText, s.tools, s.knobs.calls, s.knobs);
    if (calls.length > 0) {
      say = reply.before;
      s.owed = reply.after;
    } else {
      say = `${reply.before} ${reply.after}`;
    }
  } else {
    say = `Anything else? ${answerTag(++s.answers)}`;
  }
  let at = s.knobs.latencyMs;
  const itemId = ctx.id("item");
  const chunks = chunkWords(say, () => ctx.draw());
  const output: Json[] = [];
  const message = (status: string, text: string | null): Json => ({
    id: itemId,
    object: "realtime.item",
    type: "message",
    status,
    role: "assistant",
    content:
      text === null
        ? []
        : [s.audio ? { type: "output_audio", transcript: text } : { type: "output_text", text }],
  });
  if (chunks.length > 0) {
    ctx.later(at, {
      type: "response.output_item.added",
      response_id: id,
      output_index: 0,
      item: message("in_progress", null),
    });
    for (const chunk of chunks) {
      at += s.knobs.msPerWord * chunk.split(/\s+/).filter(Boolean).length;
      const delta = { response_id: id, item_id: itemId, output_index: 0, content_index: 0 };
      if (s.audio) {
        ctx.later(at, { type: "response.output_audio.delta", ...delta, delta: "AAAAAAAAAAA=" });
        ctx.later(at, { type: "response.output_audio_transcript.delta", ...delta, delta: chunk });
      } else {
        ctx.later(at, { type: "response.output_text.delta", ...delta, delta: chunk });
      }
    }
    s.lastReply = chunks;
    const done = message("completed", chunks.join(""));
    ctx.later(at, {
      type: "response.output_item.done",
      response_id: id,
      output_index: 0,
      item: done,
    });
    output.push(done);
  }
  for (const [index, name] of calls.entries()) {
    const callId = ctx.id("call");
    s.items.push({ kind: "call", callId, name });
    const args = JSON.stringify({ question: userText ?? "" });
    const fcId = ctx.id("fc");
    const item = (status: string, argumentsSoFar: string): Json => ({
      id: fcId,
      object: "realtime.item",
      type: "function_call",
      status,
      call_id: callId,
      name,
      arguments: argumentsSoFar,
    });
    const where = { response_id: id, output_index: index + 1 };
    ctx.later(at, { type: "response.output_item.added", ...where, item: item("in_progress", "") });
    const done = {
      type: "response.function_call_arguments.done",
      ...where,
      item_id: fcId,
      call_id: callId,
      name,
      arguments: args,
    };
    ctx.later(at, done);
    if (s.knobs.duplicateCalls > 0 && ctx.draw() < s.knobs.duplicateCalls) ctx.later(at, done);
    ctx.later(at, { type: "response.output_item.done", ...where, item: item("completed", args) });
    output.push(item("completed", args));
  }
  s.answered = s.items.length;
  finish(ctx, id, at, say.split(/\s+/).filter(Boolean).length, output);
}

function finish(ctx: Ctx, id: string, at: number, words: number, output: Json[] = []): void {
  const input = ctx.s.items.reduce((n, i) => n + ("text" in i ? i.text.split(/\s+/).length : 8), 0);
  ctx.later(at, {
    type: "response.done",
    response: {
      object: "realtime.response",
      id,
      status: "completed",
      status_details: null,
      output,
      usage: { total_tokens: input + words, input_tokens: input, output_tokens: words },
    },
  });
}
