/**
 * Client messages in: parsed strictly as the service does, then setup, seeded history, user
 * input (text, audio), barge-in and tool responses.
 */
import {
  type GeminiClientContent,
  type GeminiClientMessage,
  type GeminiContent,
  type GeminiFunctionDeclaration,
  type GeminiFunctionResponse,
  type GeminiRealtimeInput,
  type GeminiSetup,
  type GeminiToolResponse,
  Scheduling,
} from "../../providers/gemini/schemas.js";
import {
  asksToGoOn,
  asksToIntroduce,
  asksToSayGoodbye,
  asksToSayStillWorking,
  isResultSpeech,
  resultSpeech,
  summarise,
  UTTERANCES,
} from "../script.js";
import { endOfAudio, hear, pcmOf } from "../vad.js";
import { isSyncOnlyModel, modelFamilyOf, sendResumption } from "./connection.js";
import {
  nextTag,
  react,
  runGen,
  startGoodbye,
  startIntroduction,
  startOwedReply,
  startStillWorking,
  startUserTurn,
} from "./generation.js";
import {
  BARGE_IN_BYTES,
  type Ctx,
  INVALID_ARGUMENT,
  type ResumeContext,
  type SimCall,
  type Spoken,
  tokens,
} from "./state.js";
import { refusalReason, StrictClientMessage } from "./strict-schemas.js";

const SNAKE_KEYS: Record<string, string> = {
  client_content: "clientContent",
  realtime_input: "realtimeInput",
  tool_response: "toolResponse",
};

/** Parses one client frame; null (after closing with 1007) when it is not a client message. */
function parseClientFrame(ctx: Ctx, text: string): GeminiClientMessage | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    ctx.close(1007, `${INVALID_ARGUMENT} (frame is not JSON)`);
    return null;
  }
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    // The service also takes the Python SDK's snake_case top-level keys.
    const obj = json as Record<string, unknown>;
    for (const [snake, camel] of Object.entries(SNAKE_KEYS)) {
      if (snake in obj && !(camel in obj)) {
        obj[camel] = obj[snake];
        delete obj[snake];
      }
    }
  }
  // The service parses protobuf JSON strictly: an unknown field anywhere is refused.
  const parsed = StrictClientMessage.safeParse(json);
  if (!parsed.success) {
    ctx.close(1007, refusalReason(json));
    return null;
  }
  return parsed.data as GeminiClientMessage;
}

export function onFrame(ctx: Ctx, text: string): void {
  const s = ctx.s;
  if (s.phase === "resuming" || s.phase === "setting_up") {
    s.buffered.push(text);
    return;
  }
  const parsed = parseClientFrame(ctx, text);
  if (parsed === null) return;
  // A oneof: the schema guarantees exactly one of these is set.
  const msg = parsed as {
    setup?: GeminiSetup;
    clientContent?: GeminiClientContent;
    realtimeInput?: GeminiRealtimeInput;
    toolResponse?: GeminiToolResponse;
  };
  if (msg.setup !== undefined) {
    if (s.phase !== "awaiting_setup") {
      ctx.close(1007, `${INVALID_ARGUMENT} (setup was already sent)`);
      return;
    }
    onSetup(ctx, msg.setup);
    return;
  }
  if (s.phase === "awaiting_setup") {
    ctx.close(1007, `${INVALID_ARGUMENT} (the first message must be setup)`);
    return;
  }
  if (msg.clientContent !== undefined) onClientContent(ctx, msg.clientContent);
  else if (msg.realtimeInput !== undefined) onRealtimeInput(ctx, msg.realtimeInput);
  else if (msg.toolResponse !== undefined) onToolResponse(ctx, msg.toolResponse.functionResponses);
}

function onSetup(ctx: Ctx, setup: GeminiSetup): void {
  const s = ctx.s;
  const declared: Record<string, GeminiFunctionDeclaration> = {};
  const declaredOrder: string[] = [];
  for (const tool of setup.tools ?? []) {
    for (const decl of tool.functionDeclarations ?? []) {
      if (!(decl.name in declared)) declaredOrder.push(decl.name);
      declared[decl.name] = decl;
    }
  }
  const modalities = setup.generationConfig?.responseModalities;
  const family = modelFamilyOf(setup.model);
  // 3.1 blocks every call and waits for results (O6); 3.8 calls NON_BLOCKING by default and
  // ends its turn without waiting (FIELD-NOTES, livekit/agents #7302), as 2.x does.
  const syncOnly = s.knobs.syncOnly ?? isSyncOnlyModel(setup.model);
  const historyInClientContent = setup.historyConfig?.initialHistoryInClientContent === true;
  s.historyOpen = historyInClientContent;
  s.setup = {
    family,
    syncOnly,
    race: syncOnly ? 0 : (s.knobs.race ?? 1),
    historyInClientContent,
    // Live models answer in audio unless told otherwise.
    audio: modalities === undefined || modalities.includes("AUDIO"),
    transcribe: setup.outputAudioTranscription !== undefined,
    resumption: setup.sessionResumption !== undefined,
    declared,
    declaredOrder,
  };
  const handle = setup.sessionResumption?.handle;
  if (handle !== undefined && handle !== "") {
    s.phase = "resuming";
    ctx.effects.push({ type: "lookup_handle", handle });
    return;
  }
  if (s.knobs.setupMs > 0) {
    s.phase = "setting_up";
    ctx.schedule(s.knobs.setupMs, { kind: "setup_complete" });
    return;
  }
  goLive(ctx);
}

/** setupComplete, then the frames that came meanwhile, in order. */
export function goLive(ctx: Ctx): void {
  const s = ctx.s;
  s.phase = "live";
  ctx.send({ setupComplete: {} });
  const buffered = s.buffered;
  s.buffered = [];
  for (const text of buffered) onFrame(ctx, text);
}

export function onResumeContext(ctx: Ctx, _handle: string, context: ResumeContext | null): void {
  const s = ctx.s;
  if (s.phase !== "resuming") return;
  if (context === null || ctx.now - context.savedAt >= s.knobs.handleTtlMs) {
    ctx.close(1007, `${INVALID_ARGUMENT} (unknown or expired session resumption handle)`);
    return;
  }
  const { savedAt: _savedAt, owed, ...restored } = context;
  // Contexts saved before `remembered` existed lack it.
  s.context = { ...structuredClone(restored), remembered: restored.remembered ?? [] };
  // What it had still to say after an empty reply, it still has to say (assumed).
  s.owed = owed ?? null;
  goLive(ctx);
}

// ---------------------------------------------------------------------------
// Client input
// ---------------------------------------------------------------------------

/** `functionCall` / `functionResponse` parts: the service takes them in no clientContent. */
function toolParts(content: GeminiClientContent): string[] {
  const found: string[] = [];
  for (const turn of content.turns ?? []) {
    for (const part of turn.parts ?? []) {
      if (part.functionCall !== undefined) found.push(`functionCall ${part.functionCall.name}`);
      if (part.functionResponse !== undefined) {
        found.push(`functionResponse ${part.functionResponse.name}`);
      }
    }
  }
  return found;
}

function onClientContent(ctx: Ctx, content: GeminiClientContent): void {
  const s = ctx.s;
  // Tool history travels as text; function parts in clientContent are refused outright
  // (pipecat issue 4926, ADK 1.32's "No function call event found for function responses").
  const refused = toolParts(content);
  if (refused.length > 0) {
    ctx.close(
      1007,
      `${INVALID_ARGUMENT} (clientContent may not carry function parts: ${refused.join(", ")})`,
    );
    return;
  }
  const turns = content.turns ?? [];
  const text = turns
    .filter((t) => t.role === undefined || t.role === "user")
    .flatMap((t) => (t.parts ?? []).map((p) => p.text ?? ""))
    .join("");
  s.context.promptTokens += tokens(
    turns
      .flatMap((t) => t.parts ?? [])
      .map((p) => p.text ?? "")
      .join(" "),
  );
  if (s.historyOpen) {
    // historyConfig.initialHistoryInClientContent: the first clientContent is the
    // conversation so far, taken as history and never answered, whatever turnComplete says.
    s.historyOpen = false;
    seedHistory(ctx, turns);
    return;
  }
  if (s.setup!.family === "3.x" && s.knobs.midSessionClientContent === "refuse") {
    // 3.x takes clientContent only as the initial history (livekit PR 5251).
    ctx.close(
      1007,
      `${INVALID_ARGUMENT} (this model takes clientContent only as initial history; send realtimeInput.text)`,
    );
    return;
  }
  // turnComplete false: context only, no generation (O7). A seeded history (a client
  // rebuilding a session on a new connection) counts as turns already had, and its last
  // model turn is the reply the model would repeat.
  if (content.turnComplete !== true) {
    seedHistory(ctx, turns);
    return;
  }
  // clientContent interrupts the current generation and is a new input.
  interrupt(ctx);
  userInput(ctx, text);
}

/** Turns taken as context: they count as turns had; the last model turn can be repeated. */
function seedHistory(ctx: Ctx, turns: readonly GeminiContent[]): void {
  const s = ctx.s;
  s.context.userTurns += turns.filter((t) => t.role === undefined || t.role === "user").length;
  const lastModel = turns.filter((t) => t.role === "model").at(-1);
  const said = (lastModel?.parts ?? []).flatMap((p) => (p.text ? [p.text] : []));
  if (said.length > 0) s.context.lastReply = said;
  // Answers go on numbering after the seeded ones, so a tag names one answer per session
  // (under repeatAnswers there are no tags: nothing to number, nothing read).
  for (const part of turns.flatMap((t) => (t.role === "model" ? (t.parts ?? []) : []))) {
    for (const m of (part.text ?? "").matchAll(/\[#r(\d+)\]/g)) {
      s.context.answers = Math.max(s.context.answers, Number(m[1]));
    }
  }
  const lines = turns
    .flatMap((t) => t.parts ?? [])
    .flatMap((p) => (p.text?.startsWith("[") ? [p.text] : []));
  s.context.remembered = [...s.context.remembered, ...lines].slice(-10);
  const afterModel = turns.findLastIndex((t) => t.role === "model") + 1;
  const question = turns
    .slice(afterModel)
    .filter((t) => t.role === undefined || t.role === "user")
    .flatMap((t) => t.parts ?? [])
    .flatMap((p) => (p.text !== undefined && !p.text.startsWith("[") ? [p.text] : []))
    .at(-1);
  s.context.unanswered = question;
  oweSeededResults(ctx, turns);
}

/**
 * Tool outcomes the seed shows after the model's last words were never spoken: the model
 * has them to say, and says them when asked to go on (a nudge), not by itself (assumed: a
 * seed is never answered, the results are in its context).
 */
function oweSeededResults(ctx: Ctx, turns: readonly GeminiContent[]): void {
  const lastModel = turns.findLastIndex((t) => t.role === "model");
  const outcomes = turns
    .slice(lastModel + 1)
    .flatMap((t) => t.parts ?? [])
    .flatMap((p) => {
      const m = /^\[([\w.-]+) returned (.*)\]$/s.exec(p.text ?? "");
      if (m) return [{ name: m[1]!, summary: summariseSeeded(m[2]!) }];
      // A call whose outcome the gateway could not know (its object restarted under it): the
      // model says so, as it would say a result (assumed: a model tells the user it is unsure).
      const unknown = /^\[([\w.-]+): (outcome unknown.*)\]$/s.exec(p.text ?? "");
      return unknown ? [{ name: unknown[1]!, summary: summarise({ output: unknown[2]! }) }] : [];
    });
  if (outcomes.length === 0) return;
  const s = ctx.s;
  s.owed = outcomes.map((o) => resultSpeech(o.name, o.summary, nextTag(s)));
}

/** The seeded outcome's JSON as the simulator summarises a live result. */
function summariseSeeded(json: string): string {
  try {
    return summarise(JSON.parse(json) as Record<string, unknown>);
  } catch {
    return summarise({ output: json });
  }
}

function onRealtimeInput(ctx: Ctx, input: GeminiRealtimeInput): void {
  const s = ctx.s;
  s.historyOpen = false;
  if (input.activityStart !== undefined) interrupt(ctx);
  const blobs = [...(input.audio ? [input.audio] : []), ...(input.mediaChunks ?? [])];
  const vad = s.knobs.vad === "energy";
  for (const blob of blobs) {
    if (blob.mimeType !== undefined && !blob.mimeType.startsWith("audio/")) continue;
    if (vad) {
      hearAudio(ctx, blob.data, blob.mimeType);
      continue;
    }
    const bytes = base64Length(blob.data);
    s.audioBytes += bytes;
    s.audioSinceGen += bytes;
  }
  if (!vad && s.gen !== null && s.audioSinceGen >= BARGE_IN_BYTES) interrupt(ctx);
  if (input.text !== undefined && input.text !== "") {
    interrupt(ctx);
    userInput(ctx, input.text);
  }
  const streamEnd = input.audioStreamEnd === true || input.activityEnd !== undefined;
  if (vad) {
    // The end of the stream ends an utterance under way at once; silence alone was none.
    if (streamEnd && endOfAudio(s.vad)) utteranceEnded(ctx);
    return;
  }
  const utteranceBytes = s.knobs.utteranceMs * 32;
  const ended = streamEnd || (utteranceBytes > 0 && s.audioBytes >= utteranceBytes);
  if (ended && s.audioBytes > 0) {
    s.audioBytes = 0;
    utteranceEnded(ctx);
  }
}

/** The user stopped speaking: the transcription of what they said, then the model answers. */
function utteranceEnded(ctx: Ctx): void {
  const s = ctx.s;
  const text = UTTERANCES[s.utterances++ % UTTERANCES.length]!;
  ctx.send({ serverContent: { inputTranscription: { text, finished: true } } });
  interrupt(ctx);
  userInput(ctx, text);
}

/**
 * `vad=energy`: audio through the energy detector (../vad.ts). Speech (not silence) during a
 * reply barges in once the utterance holds BARGE_IN_MS of it; `vadSilenceMs` of non-speech
 * after it ends the utterance. The rate is the blob's (`audio/pcm;rate=16000`, the default).
 */
function hearAudio(ctx: Ctx, data: string, mimeType: string | undefined): void {
  const s = ctx.s;
  const pcm = pcmOf(data);
  if (pcm === null) return;
  const rate = Number(/rate=(\d+)/.exec(mimeType ?? "")?.[1] ?? 16000);
  const cfg = { ...s.knobs, sampleRate: rate > 0 ? rate : 16000 };
  for (const event of hear(s.vad, pcm, cfg)) {
    if (event.type === "speech" && s.gen !== null) interrupt(ctx);
    else if (event.type === "end") utteranceEnded(ctx);
  }
}

function base64Length(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * A user input: the model answers it. After an empty reply, an instruction to go on (a
 * nudge) gets what it still owed; a new line gets its own answer, the owed results said
 * first (assumed: a model answers the latest input, with what it had not said yet).
 */
function userInput(ctx: Ctx, text: string): void {
  const s = ctx.s;
  const unanswered = s.context.unanswered;
  s.context.unanswered = undefined;
  if (asksToIntroduce(text)) {
    s.owed = null;
    startIntroduction(ctx);
    return;
  }
  if (asksToSayStillWorking(text)) {
    startStillWorking(ctx);
    return;
  }
  if (asksToSayGoodbye(text)) {
    s.owed = null;
    startGoodbye(ctx);
    return;
  }
  if (unanswered !== undefined && asksToGoOn(text)) {
    // Asked to go on: the model answers the seed's last question, which it never answered
    // (assumed: a model nudged to go on answers what it was asked), the seed's unspoken
    // results first (a line carried across a rebuild; found by the attack: the results alone
    // ended the turn, the line never answered).
    const owed = s.owed ?? [];
    s.owed = null;
    startUserTurn(ctx, unanswered, owed.filter(isResultSpeech).join(" "));
    return;
  }
  if (s.owed !== null) {
    const owed = s.owed;
    s.owed = null;
    if (asksToGoOn(text)) {
      startOwedReply(ctx, owed);
      return;
    }
    startUserTurn(ctx, text, owed.filter(isResultSpeech).join(" "));
    return;
  }
  if (s.knobs.callsLast && asksToGoOn(text) && s.lastLine !== null) {
    // Nothing owed, and told to answer the user now: it answers their last line again.
    startUserTurn(ctx, s.lastLine, "", true);
    return;
  }
  startUserTurn(ctx, text);
}

/** Barge-in: the running reply stops; its pending calls are cancelled. */
function interrupt(ctx: Ctx): void {
  const s = ctx.s;
  const gen = s.gen;
  if (gen === null) return;
  s.gen = null;
  s.queue = s.queue.filter((q) => !(q.item.kind === "gen" && q.item.genId === gen.id));
  s.deferred = [];
  ctx.send({ serverContent: { interrupted: true } });
  ctx.send({ serverContent: { turnComplete: true } });
  const pending = gen.callIds.filter(
    (key) => s.calls[key] !== undefined && !s.calls[key]!.answered,
  );
  const ids = pending.flatMap((key) =>
    s.calls[key]!.wireId === null ? [] : [s.calls[key]!.wireId!],
  );
  for (const key of pending) delete s.calls[key];
  s.callOrder = s.callOrder.filter((key) => s.calls[key] !== undefined);
  if (ids.length > 0) ctx.send({ toolCallCancellation: { ids } });
  sendResumption(ctx);
}

// ---------------------------------------------------------------------------
// Tool responses
// ---------------------------------------------------------------------------

/** Scheduling in the proto placement (beside `response`) or the docs' (inside it). */
export function schedulingOf(fr: GeminiFunctionResponse): string | undefined {
  if (fr.scheduling !== undefined) return fr.scheduling;
  const inner = Scheduling.safeParse(fr.response?.scheduling);
  return inner.success ? inner.data : undefined;
}

function findCall(ctx: Ctx, fr: GeminiFunctionResponse): SimCall | undefined {
  const s = ctx.s;
  if (fr.id !== undefined && fr.id !== "" && s.calls[fr.id]?.wireId === fr.id)
    return s.calls[fr.id];
  // Without an id (or with one the model never issued, when it sent none) match by name.
  if (fr.id === undefined || fr.id === "" || s.knobs.noIds) {
    const key = s.callOrder.find((k) => s.calls[k]?.name === fr.name && !s.calls[k]!.answered);
    return key === undefined ? undefined : s.calls[key];
  }
  return undefined;
}

function onToolResponse(ctx: Ctx, responses: GeminiFunctionResponse[]): void {
  const s = ctx.s;
  s.historyOpen = false;
  const lateSpeak: Spoken[] = [];
  let lateSideEffect = false;
  for (const fr of responses) {
    const call = findCall(ctx, fr);
    // A response for a call never issued (or answered already) gets no reaction (recorded).
    if (call === undefined || call.answered) continue;
    call.answered = true;
    const spoken: Spoken = { name: call.name, summary: summarise(fr.response) };
    s.context.promptTokens += tokens(spoken.summary);
    const gen = s.gen;
    if (gen !== null && gen.id === call.genId) {
      // Inside the generation that called it: taken in, spoken before the turn ends.
      if (!call.sideEffect) gen.toSpeak.push(spoken);
      gen.waiting = gen.waiting.filter((k) => k !== call.key);
      continue;
    }
    // Its generation has ended: the response is new input.
    const scheduling = schedulingOf(fr);
    const quiet =
      call.nonBlocking && scheduling === "SILENT" && !s.knobs.ignoreSilent && !s.setup!.syncOnly;
    if (quiet) continue;
    if (call.sideEffect) lateSideEffect = true;
    else lateSpeak.push(spoken);
  }
  const gen = s.gen;
  if (gen !== null && gen.waiting.length === 0 && gen.ops[gen.pc]?.op === "wait") runGen(ctx);
  if (lateSpeak.length > 0) react(ctx, { kind: "speak", results: lateSpeak });
  else if (lateSideEffect) react(ctx, { kind: "regen" });
}
