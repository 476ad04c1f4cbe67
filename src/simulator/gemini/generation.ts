/** The generation engine: what the model says and calls, paced, and how a reply ends. */

import { callLine } from "../../providers/gemini/encode.js";
import {
  argsFor,
  chunkWords,
  goodbye,
  introduction,
  isSideEffect,
  nextAnswerTag,
  plannedCalls,
  replyFor,
  replyWithCalls,
  resultSpeech,
  stillWorking,
  type ToolInfo,
  wordCount,
} from "../script.js";
import { spokenAudio } from "../spoken-audio.js";
import { goAway, sendResumption } from "./connection.js";
import {
  AUDIO_MIME,
  type Ctx,
  type Gen,
  type Op,
  type Reaction,
  type SimState,
  tokens,
} from "./state.js";

/** Late input is taken when the model is idle (WHEN_IDLE). */
export function react(ctx: Ctx, reaction: Reaction): void {
  if (ctx.s.gen !== null) ctx.s.deferred.push(reaction);
  else startReaction(ctx, reaction);
}

// ---------------------------------------------------------------------------
// Generations
// ---------------------------------------------------------------------------

export const nextTag = (s: SimState): string => nextAnswerTag(s.knobs, s.context);

/** The declared functions with their descriptions (what the script reads their meaning from). */
function toolsOf(s: SimState): ToolInfo[] {
  const setup = s.setup;
  if (setup === null) return [];
  return setup.declaredOrder.map((name) => ({
    name,
    description: setup.declared[name]?.description ?? "",
  }));
}

/**
 * The wait before a reply's first content (`latencyMs`): a user turn's answer, and the answer
 * after tool results. With `workSigns`, a thought part every 1000 ms of it (before timeScale),
 * as a thinking model sends before it speaks; none at the moment the content comes.
 */
function latencyOps(s: SimState): Op[] {
  const ms = s.knobs.latencyMs;
  if (!s.knobs.workSigns) return [{ op: "pause", ms }];
  const ops: Op[] = [];
  let n = 0;
  while ((n + 1) * 1000 < ms) {
    ops.push({ op: "pause", ms: 1000 }, { op: "think", n: ++n });
  }
  ops.push({ op: "pause", ms: ms - n * 1000 });
  return ops;
}

/** A thought summary's words: never speech (`thought: true`), the same on every run. */
function thoughtText(n: number): string {
  return `**Working on it**\n\nStill thinking (${n} s).`;
}

function sayOps(ctx: Ctx, text: string): Op[] {
  return chunkWords(text, () => ctx.draw()).map((chunk) => ({
    op: "say",
    text: chunk,
    ms: wordCount(chunk) * ctx.s.knobs.msPerWord,
  }));
}

function newGen(
  ctx: Ctx,
  ops: Op[],
  opts: { remember: boolean; race?: boolean; userText?: string },
): Gen {
  const s = ctx.s;
  const gen: Gen = {
    id: ++s.gens,
    ops: [...latencyOps(s), ...ops],
    pc: 0,
    waiting: [],
    waited: false,
    race: opts.race ?? false,
    callIds: [],
    toSpeak: [],
    said: [],
    remember: opts.remember,
    userText: opts.userText ?? "",
  };
  s.gen = gen;
  s.audioSinceGen = 0;
  // "resumable: false while the model generates".
  if (s.setup?.resumption) ctx.send({ sessionResumptionUpdate: { resumable: false } });
  runGen(ctx);
  return gen;
}

/** Counts one reply and decides whether it comes out empty. */
function emptyReply(ctx: Ctx, answersTools: boolean): boolean {
  const s = ctx.s;
  s.replies++;
  if (s.knobs.emptySchedule.includes(s.replies)) return true;
  return answersTools && s.knobs.emptyRate > 0 && ctx.draw() < s.knobs.emptyRate;
}

/** `again`: the same line answered again (`callsLast`): the same turn's reply and calls. */
export function startUserTurn(ctx: Ctx, userText: string, preface = "", again = false): void {
  const s = ctx.s;
  const setup = s.setup!;
  if (!again) s.context.userTurns++;
  s.lastLine = userText;
  const tag = nextTag(s);
  const names = plannedCalls(
    s.context.userTurns,
    userText,
    setup.declaredOrder,
    s.knobs.calls,
    s.knobs,
    toolsOf(s),
  );
  const answer = replyWithCalls(
    replyFor(
      s.context.userTurns,
      userText,
      s.context.lastReply,
      // Drawn under repeatAnswers too: a seed makes the same races, chunks and ids either way.
      ctx.draw(),
      tag,
      s.context.remembered,
      s.knobs.repeatAnswers,
      toolsOf(s),
    ),
    s.context.userTurns,
    names,
    s.knobs,
  );
  const reply = preface === "" ? answer : { ...answer, before: `${preface} ${answer.before}` };
  // A reply that reads the context has no second half under repeatAnswers (no tag to end it).
  const full = reply.after === "" ? reply.before : `${reply.before} ${reply.after}`;
  if (emptyReply(ctx, false)) {
    s.owed = [full];
    newGen(ctx, [{ op: "end" }], { remember: false, userText });
    return;
  }
  if (names.length === 0) {
    newGen(ctx, [...sayOps(ctx, full), { op: "end" }], { remember: true, userText });
    return;
  }
  const race = setup.race > 0 && ctx.draw() < setup.race;
  const duplicate = s.knobs.duplicateCalls > 0 && ctx.draw() < s.knobs.duplicateCalls;
  const calls: Op = { op: "calls", names, duplicate };
  if (race) {
    // Fire-and-forget: the call after the speech (or midSpeechCall ms before its end), and
    // turnComplete in the same instant.
    const speech = sayOps(ctx, full);
    let at = speech.length;
    let tail = 0;
    while (s.knobs.midSpeechCall > 0 && at > 0 && tail < s.knobs.midSpeechCall) {
      at--;
      const op = speech[at]!;
      tail += op.op === "say" ? op.ms : 0;
    }
    speech.splice(at, 0, calls);
    newGen(ctx, [...speech, { op: "end" }], { remember: true, race: true, userText });
    return;
  }
  if (s.knobs.callsLast) {
    // Everything said first: after its calls' results the reply has only results to speak.
    newGen(ctx, [...sayOps(ctx, full), calls, { op: "wait" }, { op: "end" }], {
      remember: true,
      userText,
    });
    return;
  }
  newGen(
    ctx,
    [
      ...sayOps(ctx, reply.before),
      calls,
      { op: "wait" },
      // Spoken results may come between: each part opens with its space.
      ...(reply.after === "" ? [] : sayOps(ctx, ` ${reply.after}`)),
      { op: "end" },
    ],
    { remember: true, userText },
  );
}

/** A session handed to this model's agent: it introduces itself, in one line, no call. */
export function startIntroduction(ctx: Ctx): void {
  const line = introduction(nextTag(ctx.s));
  newGen(ctx, [...sayOps(ctx, line), { op: "end" }], { remember: true });
}

/** The goodbye a cap asks for: one line, no call. */
export function startGoodbye(ctx: Ctx): void {
  newGen(ctx, [...sayOps(ctx, goodbye(nextTag(ctx.s))), { op: "end" }], { remember: true });
}

/** A few words while a tool is still working (what was owed stays owed). */
export function startStillWorking(ctx: Ctx): void {
  newGen(ctx, [...sayOps(ctx, stillWorking(nextTag(ctx.s))), { op: "end" }], { remember: true });
}

export function startOwedReply(ctx: Ctx, owed: string[]): void {
  if (emptyReply(ctx, false)) {
    ctx.s.owed = owed;
    newGen(ctx, [{ op: "end" }], { remember: false });
    return;
  }
  newGen(ctx, [...sayOps(ctx, owed.join(" ")), { op: "end" }], { remember: true });
}

function startReaction(ctx: Ctx, reaction: Reaction): void {
  const s = ctx.s;
  if (reaction.kind === "speak") {
    const speech = reaction.results.map((r) => resultSpeech(r.name, r.summary, nextTag(s)));
    if (emptyReply(ctx, true)) {
      s.owed = speech;
      newGen(ctx, [{ op: "end" }], { remember: false });
      return;
    }
    newGen(ctx, [...sayOps(ctx, speech.join(" ")), { op: "end" }], { remember: true });
    return;
  }
  // A side effect's result taken as new input: the previous reply again, word for word.
  const previous = s.context.lastReply;
  if (emptyReply(ctx, false)) {
    newGen(ctx, [{ op: "end" }], { remember: false });
    return;
  }
  const ops: Op[] = previous.map((text) => ({
    op: "say",
    text,
    ms: wordCount(text) * s.knobs.msPerWord,
  }));
  newGen(ctx, [...ops, { op: "end" }], { remember: false });
}

/** Runs the current generation's ops until one takes time, it waits, or it ends. */
export function runGen(ctx: Ctx): void {
  const s = ctx.s;
  const gen = s.gen;
  if (gen === null) return;
  while (s.gen === gen && gen.pc < gen.ops.length) {
    const op = gen.ops[gen.pc]!;
    if (op.op === "wait") {
      if (gen.waiting.length > 0) return;
      gen.pc++;
      if (gen.waited) continueAfterResults(ctx, gen);
      continue;
    }
    if (op.op === "end" && gen.toSpeak.length > 0) {
      // Results taken in during the reply are spoken before it ends.
      const speech = gen.toSpeak.map((r) => resultSpeech(r.name, r.summary, nextTag(s)));
      gen.toSpeak = [];
      gen.ops.splice(gen.pc, 0, ...sayOps(ctx, ` ${speech.join(" ")}`));
      continue;
    }
    gen.pc++;
    const delay = execute(ctx, gen, op);
    if (delay > 0 && s.gen === gen) {
      ctx.schedule(delay, { kind: "gen", genId: gen.id });
      return;
    }
  }
}

/**
 * Past `wait`: the rest of the reply answers the tool results, and may come out empty. The
 * model takes `latencyMs` over the results first, as over a user's line.
 */
function continueAfterResults(ctx: Ctx, gen: Gen): void {
  const s = ctx.s;
  const speech = gen.toSpeak.map((r) => resultSpeech(r.name, r.summary, nextTag(s)));
  gen.toSpeak = [];
  const rest = gen.ops.slice(gen.pc).flatMap((op) => (op.op === "say" ? [op.text] : []));
  if (emptyReply(ctx, true)) {
    s.owed = [...speech, rest.join("")];
    gen.ops = [...gen.ops.slice(0, gen.pc), ...latencyOps(s), { op: "end" }];
    return;
  }
  const spoken = speech.length > 0 ? sayOps(ctx, ` ${speech.join(" ")}`) : [];
  gen.ops.splice(gen.pc, 0, ...latencyOps(s), ...spoken);
}

function execute(ctx: Ctx, gen: Gen, op: Op): number {
  switch (op.op) {
    case "pause":
      return ctx.paced(op.ms);
    case "think":
      ctx.send({
        serverContent: { modelTurn: { parts: [{ text: thoughtText(op.n), thought: true }] } },
      });
      return 0;
    case "say":
      say(ctx, gen, op.text, op.ms);
      return ctx.paced(op.ms);
    case "calls":
      issueCalls(ctx, gen, op.names, op.duplicate);
      return 0;
    case "wait":
      return 0;
    case "end":
      endGen(ctx, gen);
      return 0;
  }
}

function say(ctx: Ctx, gen: Gen, text: string, ms: number): void {
  const setup = ctx.s.setup!;
  gen.said.push(text);
  if (!setup.audio) {
    ctx.send({ serverContent: { modelTurn: { parts: [{ text }] } } });
    return;
  }
  ctx.send({
    serverContent: {
      modelTurn: { parts: [{ inlineData: { mimeType: AUDIO_MIME, data: spokenAudio(ms) } }] },
    },
  });
  if (setup.transcribe) ctx.send({ serverContent: { outputTranscription: { text } } });
}

/** A connection id as digits (call ids look like `function-call-<digits>` on the wire). */
function digitsOf(id: string): string {
  let h = 0;
  for (const ch of id) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return String(h % 100_000).padStart(5, "0");
}

function issueCalls(ctx: Ctx, gen: Gen, names: string[], duplicate: boolean): void {
  const s = ctx.s;
  const setup = s.setup!;
  const wire: Array<{ id?: string; name: string; args: Record<string, unknown> }> = [];
  for (const name of names) {
    const decl = setup.declared[name];
    if (decl === undefined) continue;
    const n = ++s.context.callCount;
    // Unique across the connections of a session, as the real service's ids are.
    const id = `function-call-${digitsOf(s.connectionId)}${n}${Math.floor(ctx.draw() * 1e12)}`;
    const key = s.knobs.noIds ? `anon-${s.connectionId}-${n}` : id;
    const nonBlocking = !setup.syncOnly && decl.behavior === "NON_BLOCKING";
    s.calls[key] = {
      key,
      wireId: s.knobs.noIds ? null : id,
      name,
      genId: gen.id,
      nonBlocking,
      sideEffect: isSideEffect(name, s.knobs),
      answered: false,
    };
    s.callOrder.push(key);
    gen.callIds.push(key);
    if (!nonBlocking && !gen.race) {
      gen.waiting.push(key);
      gen.waited = true;
    }
    const args = argsFor(decl, gen.userText, toolsOf(s));
    wire.push(s.knobs.noIds ? { name, args } : { id, name, args });
    // The session remembers its own calls, as a seed's lines say them: a resumed connection
    // (its handle's context) knows them as a rebuilt one does (assumed: the service's
    // resumption keeps the whole session).
    s.context.remembered = [...s.context.remembered, callLine(name, args)].slice(-10);
  }
  if (wire.length === 0) return;
  // The same call delivered twice: as modelTurn parts and as toolCall (O5).
  if (duplicate) {
    ctx.send({ serverContent: { modelTurn: { parts: wire.map((c) => ({ functionCall: c })) } } });
  }
  ctx.send({ toolCall: { functionCalls: wire } });
}

function endGen(ctx: Ctx, gen: Gen): void {
  const s = ctx.s;
  s.gen = null;
  if (gen.remember && gen.said.length > 0) s.context.lastReply = [...gen.said];
  const words = wordCount(gen.said.join(""));
  const modality = s.setup!.audio ? "AUDIO" : "TEXT";
  const response = tokens(gen.said.join(""));
  s.context.promptTokens += response;
  ctx.send({ serverContent: { generationComplete: true } });
  ctx.send({
    serverContent: { turnComplete: true },
    usageMetadata: {
      promptTokenCount: s.context.promptTokens,
      responseTokenCount: words === 0 ? 0 : response,
      totalTokenCount: s.context.promptTokens + response,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: s.context.promptTokens }],
      responseTokensDetails: [{ modality, tokenCount: response }],
    },
  });
  s.turnsCompleted++;
  sendResumption(ctx);
  if (s.knobs.goAwayAfterTurns > 0 && s.turnsCompleted === s.knobs.goAwayAfterTurns) goAway(ctx);
  const next = s.deferred.shift();
  if (next !== undefined) startReaction(ctx, next);
}
