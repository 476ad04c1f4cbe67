/** The OpenAI face's responses: what a response says, its pacing, cancellation. */

import {
  argsFor,
  asksToGoOn,
  asksToIntroduce,
  asksToSayGoodbye,
  asksToSayStillWorking,
  chunkWords,
  goodbye,
  introduction,
  isSideEffect,
  nextAnswerTag,
  plannedCalls,
  replyFor,
  resultSpeech,
  stillWorking,
  tagged,
} from "../script.js";
import { spokenAudio, spokenMulaw } from "../spoken-audio.js";
import { FACE_DIALECTS } from "./dialects.js";
import type { Ctx, Item, Json, OaiSimState } from "./state.js";

const nextTag = (s: OaiSimState): string => nextAnswerTag(s.knobs.repeatAnswers, s);

/**
 * What the service sends at the beginning of a response, beside `response.created`: the rate
 * limits with the response's output tokens reserved (API reference, `rate_limits.updated`:
 * "Emitted at the beginning of a Response"). The numbers are made up, shaped as the
 * reference's example.
 */
function rateLimits(ctx: Ctx): void {
  const used = ctx.s.responses;
  ctx.send({
    type: "rate_limits.updated",
    rate_limits: [
      { name: "requests", limit: 5000, remaining: Math.max(0, 5000 - used), reset_seconds: 0.012 },
      { name: "tokens", limit: 400000, remaining: 399000, reset_seconds: 0.15 },
    ],
  });
}

/** The active response stops: its queued events go, `response.done` says cancelled. */
export function cancel(ctx: Ctx, reason: string): void {
  const s = ctx.s;
  const id = s.active!;
  s.queue = s.queue.filter((q) => q.close !== undefined);
  s.active = null;
  // A SIP call's audio stops where it was: what was left of it is dropped.
  if (s.playing !== null) {
    ctx.send({ type: "output_audio_buffer.cleared", response_id: s.playing });
    s.playing = null;
  }
  // Cut short, it answered nothing: the next response still answers what this one was for
  // (assumed: the model answers the latest user message in its conversation).
  s.answered = s.answeredBefore;
  ctx.send({
    type: "response.done",
    response: {
      object: "realtime.response",
      id,
      status: "cancelled",
      status_details: { type: "cancelled", reason },
      output: [],
      usage: FACE_DIALECTS[s.dialect].emptyUsage,
    },
  });
}

/** What a model that sends a preamble says first (`preamble`), as a message of its own. */
const PREAMBLE = "Let me check that.";

/** One response to what is new in the conversation since the last one. */
export function respond(ctx: Ctx): void {
  const s = ctx.s;
  const id = ctx.id("resp");
  s.active = id;
  s.answeredBefore = s.answered;
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
  rateLimits(ctx);
  const fresh = s.items.slice(s.answered);
  const outputs = fresh.filter((i) => i.kind === "output");
  let userText = fresh.findLast((i) => i.kind === "user")?.text;
  // A seeded conversation's outputs that no words of the model followed were never spoken:
  // the model says them (assumed, as the Gemini face does) — asked to go on, instead of
  // reading the instruction back as a question; to a new line, before its answer.
  const lastWords = s.items.findLastIndex((i) => i.kind === "assistant");
  const owedOutputs = fresh.filter(
    (i, k) => i.kind === "output" && i.seeded === true && s.answered + k > lastWords,
  );
  /** What the model says of these outputs, each tagged as it is said. */
  const speechOf = (items: readonly Item[]): string[] =>
    items.flatMap((o) =>
      o.kind === "output" ? [resultSpeech(o.name, o.summary, nextTag(s))] : [],
    );
  // Outputs of a response whose answer went with its calls (a bundling dialect): unspoken
  // until a response after them (an empty one leaves them so).
  const bundled = s.bundled && outputs.length > 0;
  const goOnToOwed =
    owedOutputs.length > 0 && userText !== undefined && s.owed === null && asksToGoOn(userText);
  if (goOnToOwed) userText = undefined;
  if (userText !== undefined && s.owed === null && !bundled && asksToGoOn(userText)) {
    // Asked to go on with nothing owed: the model answers the latest line it never answered
    // (a seeded conversation's last question), as a model nudged to go on does (assumed).
    userText = unansweredLine(s.items) ?? userText;
  }
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
  const goOn = (s.owed !== null || bundled) && userText !== undefined && asksToGoOn(userText);
  if (userText !== undefined && !goOn) s.owed = null;
  s.bundled = false;
  // Outputs alone (a response.create after them) are spoken; a new user line is answered
  // itself (side-effect outputs in context are not read out to it).
  if (bundled && (userText === undefined || goOn)) {
    // Its answer went with its calls (bundled): what the outputs tell is said, and outputs that
    // tell nothing (side effects) get the answer again (livekit/agents issue 6411).
    const telling = outputs.filter((o) => o.kind === "output" && !isSideEffect(o.name, s.knobs));
    say = telling.length > 0 ? speechOf(telling).join(" ") : s.lastReply.join("");
  } else if ((outputs.length > 0 && userText === undefined) || goOn) {
    const speech = speechOf(goOnToOwed ? owedOutputs : outputs);
    say = [...speech, s.owed ?? ""].join(" ").trim();
    s.owed = null;
  } else if (userText !== undefined && asksToIntroduce(userText)) {
    // A session handed to this agent: it introduces itself, no call (assumed, script.ts).
    say = introduction(nextTag(s));
  } else if (userText !== undefined && asksToSayGoodbye(userText)) {
    // A cap's goodbye: one line, no call (assumed, script.ts).
    say = goodbye(nextTag(s));
  } else if (userText !== undefined && asksToSayStillWorking(userText)) {
    // A tool is still working: a few words, no call (assumed, script.ts).
    say = stillWorking(nextTag(s));
  } else if (userText !== undefined) {
    const owed = speechOf(owedOutputs);
    // The first answer on a connection counts the turns a seeded conversation already had.
    s.userTurns =
      s.userTurns === 0 ? s.items.filter((i) => i.kind === "user").length : s.userTurns + 1;
    const reply = replyFor(
      s.userTurns,
      userText,
      s.lastReply,
      // Drawn under repeatAnswers too: a seed makes the same chunks and ids either way.
      ctx.draw(),
      nextTag(s),
      [],
      s.knobs.repeatAnswers,
    );
    calls = plannedCalls(s.userTurns, userText, s.tools, s.knobs.calls, s.knobs);
    // A reply that reads the context has no second half under repeatAnswers (no tag).
    if (calls.length > 0 && FACE_DIALECTS[s.dialect].bundlesCalls) {
      // The whole answer, audible, with its calls in the same response (livekit issue 6411).
      say = [...owed, reply.before, reply.after].filter((p) => p !== "").join(" ");
      s.owed = null;
      s.bundled = true;
    } else if (calls.length > 0) {
      say = [...owed, reply.before].join(" ");
      s.owed = reply.after === "" ? null : reply.after;
    } else {
      say = [...owed, reply.before, reply.after].filter((p) => p !== "").join(" ");
    }
  } else {
    say = tagged("Anything else?", nextTag(s));
  }
  let at = s.knobs.latencyMs;
  const output: Json[] = [];
  // `preamble`: a message of its own first, then the answer's (two message generations).
  const messages = say === "" ? [] : s.knobs.preamble ? [PREAMBLE, say] : [say];
  const spoken: string[] = [];
  for (const [index, text] of messages.entries()) {
    const itemId = ctx.id("item");
    const message = (status: string, words: string | null): Json => ({
      id: itemId,
      object: "realtime.item",
      type: "message",
      status,
      role: "assistant",
      content:
        words === null
          ? []
          : [
              s.audio
                ? { type: "output_audio", transcript: words }
                : { type: "output_text", text: words },
            ],
    });
    const chunks = chunkWords(text, () => ctx.draw());
    ctx.later(at, {
      type: "response.output_item.added",
      response_id: id,
      output_index: index,
      item: message("in_progress", null),
    });
    // A SIP call's audio begins to play to the phone with its first chunk.
    if (s.sip && s.audio && index === 0)
      ctx.later(at, { type: "output_audio_buffer.started", response_id: id });
    for (const chunk of chunks) {
      const ms = s.knobs.msPerWord * chunk.split(/\s+/).filter(Boolean).length;
      at += ms;
      const delta = { response_id: id, item_id: itemId, output_index: index, content_index: 0 };
      if (s.audio) {
        // At msPerWord=0 a word takes no time: a sample of it still goes out.
        const audio = (s.outputMulaw ? spokenMulaw : spokenAudio)(Math.max(ms, 1));
        s.audioMs[itemId] = (s.audioMs[itemId] ?? 0) + Math.max(ms, 1);
        ctx.later(at, { type: "response.output_audio.delta", ...delta, delta: audio });
        ctx.later(at, { type: "response.output_audio_transcript.delta", ...delta, delta: chunk });
      } else {
        ctx.later(at, { type: "response.output_text.delta", ...delta, delta: chunk });
      }
    }
    spoken.push(...chunks);
    const done = message("completed", chunks.join(""));
    ctx.later(at, {
      type: "response.output_item.done",
      response_id: id,
      output_index: index,
      item: done,
    });
    output.push(done);
  }
  if (spoken.length > 0) {
    s.lastReply = spoken;
    if (s.audio) s.spokeAudio = true;
  }
  for (const [index, name] of calls.entries()) {
    const callId = ctx.id("call");
    // Shaped after the tool's declared parameters, as the Gemini face does.
    const args = JSON.stringify(
      argsFor({ name, parametersJsonSchema: s.toolParameters[name] }, userText ?? ""),
    );
    const fcId = ctx.id("fc");
    s.items.push({ id: fcId, kind: "call", callId, name });
    const item = (status: string, argumentsSoFar: string): Json => ({
      id: fcId,
      object: "realtime.item",
      type: "function_call",
      status,
      call_id: callId,
      name,
      arguments: argumentsSoFar,
    });
    const where = { response_id: id, output_index: messages.length + index };
    ctx.later(at, { type: "response.output_item.added", ...where, item: item("in_progress", "") });
    // xAI's event names neither its response nor its item (./dialects.ts).
    const done = {
      type: "response.function_call_arguments.done",
      ...(FACE_DIALECTS[s.dialect].callEventIds ? { ...where, item_id: fcId } : {}),
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
  // Played out once all of it was sent (the phone plays it as it comes, at the same pace).
  if (s.sip && s.audio && spoken.length > 0)
    ctx.later(at, { type: "output_audio_buffer.stopped", response_id: id });
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

/** The latest user line (before the last item, the nudge) that no assistant item followed. */
function unansweredLine(items: readonly { kind: string; text?: string }[]): string | undefined {
  for (let i = items.length - 2; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === "assistant") return undefined;
    if (item.kind === "user" && item.text !== undefined && !asksToGoOn(item.text)) return item.text;
  }
  return undefined;
}
