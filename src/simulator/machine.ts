/**
 * The Gemini Live simulator as a pure state machine:
 *
 *   simStep(state, input, now) -> { state, effects, wakeAt }
 *
 * No I/O, no clock of its own, no ambient randomness: time comes in as `now`, randomness from
 * the seeded PRNG kept in the state. Pacing is a queue of scheduled items inside the state;
 * the shell calls back with a `tick` at `wakeAt`. With `timeScale` 0 every delay is 0 and a
 * whole reply is emitted within the step that caused it.
 *
 * Behaviour (see README.md for the knobs and field-observations.md for the sources):
 * - a user turn (clientContent with turnComplete, realtimeInput.text, the end of speech) opens
 *   a generation that says a scripted reply and calls the tools the script names;
 * - BLOCKING calls: the generation waits for their responses, then goes on (speaking
 *   informational results); NON_BLOCKING calls: it goes on at once;
 * - fire-and-forget race (O1): the call comes after the speech and turnComplete follows in the
 *   same instant; nothing is waited for;
 * - a response arriving after its generation ended is new input: a side-effect tool's result
 *   makes the model say its previous reply again in full, an informational result is spoken
 *   once; SILENT on a NON_BLOCKING call adds to context quietly (unless ignoreSilent, O2);
 * - empty replies after tool results; the next clientContent (a nudge) gets the real reply;
 * - barge-in: interrupted, turnComplete, toolCallCancellation for the reply's pending calls;
 * - session resumption handles, goAway, drops and connection limits.
 */
import {
  type GeminiClientContent,
  type GeminiClientMessage,
  type GeminiContent,
  type GeminiFunctionDeclaration,
  type GeminiFunctionResponse,
  type GeminiRealtimeInput,
  type GeminiServerMessage,
  type GeminiSetup,
  type GeminiToolResponse,
  Scheduling,
} from "../providers/gemini/schemas.js";
import type { SimulatorKnobs } from "./knobs.js";
import { nextRandom, seedState } from "./prng.js";
import {
  answerTag,
  argsFor,
  chunkWords,
  isSideEffect,
  plannedCalls,
  replyFor,
  resultSpeech,
  summarise,
  wordCount,
} from "./script.js";
import { refusalReason, StrictClientMessage } from "./strict-schemas.js";

/** What a resumption handle restores: the conversation as the model remembers it. */
export interface ResumeContext {
  /** The chunks of the model's last remembered reply (what a regeneration repeats). */
  lastReply: string[];
  userTurns: number;
  answers: number;
  callCount: number;
  promptTokens: number;
  /** Bracketed lines of seeded histories (tool calls and outcomes as text), the last 10. */
  remembered: string[];
  /** When the handle was issued (ms since the epoch), for `handleTtlMs`. */
  savedAt: number;
}

export type SimInput =
  /** The WebSocket is open: arms the connection timers. */
  | { type: "open" }
  /** One client frame, as text (binary frames are UTF-8 decoded by the shell). */
  | { type: "frame"; text: string }
  /** The answer to a `lookup_handle` effect; null: no such handle. */
  | { type: "resume_context"; handle: string; context: ResumeContext | null }
  /** A scheduled moment (`wakeAt`) has come. */
  | { type: "tick" };

export type SimEffect =
  | { type: "send"; message: GeminiServerMessage }
  | { type: "close"; code: number; reason: string }
  | { type: "save_handle"; handle: string; context: ResumeContext }
  | { type: "lookup_handle"; handle: string };

export interface SimStepResult {
  state: SimState;
  effects: SimEffect[];
  /** When to call back with a `tick` (ms since the epoch), or null if nothing is scheduled. */
  wakeAt: number | null;
}

type Op =
  | { op: "pause"; ms: number }
  | { op: "say"; text: string; ms: number }
  | { op: "calls"; names: string[]; duplicate: boolean }
  /** Wait for the generation's blocking calls; the rest is a reply to their results. */
  | { op: "wait" }
  | { op: "end" };

interface Spoken {
  name: string;
  summary: string;
}

interface Gen {
  id: number;
  ops: Op[];
  pc: number;
  /** Blocking calls not yet answered. */
  waiting: string[];
  /** The generation had blocking calls: what follows `wait` answers tool results. */
  waited: boolean;
  race: boolean;
  callIds: string[];
  toSpeak: Spoken[];
  said: string[];
  /** Its speech becomes the "previous reply" a regeneration repeats. */
  remember: boolean;
  userText: string;
}

interface SimCall {
  /** Internal key; equals the wire id unless noIds. */
  key: string;
  wireId: string | null;
  name: string;
  genId: number;
  nonBlocking: boolean;
  sideEffect: boolean;
  answered: boolean;
}

type Reaction = { kind: "speak"; results: Spoken[] } | { kind: "regen" };

type Scheduled =
  | { kind: "gen"; genId: number }
  | { kind: "setup_complete" }
  | { kind: "go_away" }
  | { kind: "close"; code: number; reason: string };

interface SetupInfo {
  /** The model family of `setup.model`: what the service does depends on it. */
  family: "2.x" | "3.x";
  /** Every call blocks and turnComplete waits for results (3.x, or the syncOnly knob). */
  syncOnly: boolean;
  /** Probability of the fire-and-forget race (2.x: always, unless the knob says otherwise). */
  race: number;
  /** `historyConfig.initialHistoryInClientContent`: the first clientContent is history. */
  historyInClientContent: boolean;
  audio: boolean;
  transcribe: boolean;
  resumption: boolean;
  declared: Record<string, GeminiFunctionDeclaration>;
  declaredOrder: string[];
}

export interface SimState {
  knobs: SimulatorKnobs;
  sessionName: string;
  connectionId: string;
  /** "resuming" and "setting_up": frames are buffered until setupComplete is sent. */
  phase: "awaiting_setup" | "setting_up" | "resuming" | "live" | "closed";
  rng: number;
  setup: SetupInfo | null;
  /** Frames that arrived while a resumption handle was being looked up. */
  buffered: string[];
  context: Omit<ResumeContext, "savedAt">;
  /** Replies of this connection (1-based indexes for emptySchedule). */
  replies: number;
  gens: number;
  turnsCompleted: number;
  gen: Gen | null;
  calls: Record<string, SimCall>;
  callOrder: string[];
  deferred: Reaction[];
  /** The initial history may still come (historyConfig, and nothing but setup sent yet). */
  historyOpen: boolean;
  /** The real reply an empty one stood for; the next clientContent gets it. */
  owed: string[] | null;
  audioBytes: number;
  audioSinceGen: number;
  utterances: number;
  handles: number;
  goingAway: boolean;
  queue: Array<{ at: number; seq: number; item: Scheduled }>;
  queueSeq: number;
}

export const INVALID_ARGUMENT = "Request contains an invalid argument.";
const AUDIO_MIME = "audio/pcm;rate=24000";
/** 100 ms of 16 kHz PCM16: audio during a reply beyond this is the user barging in. */
const BARGE_IN_BYTES = 3200;
const UTTERANCES = [
  "What can you do?",
  "Tell me something interesting.",
  "Can you look that up for me?",
  "Thanks, that helps.",
];

export function createSimulator(opts: {
  knobs: SimulatorKnobs;
  sessionName: string;
  connectionId: string;
}): SimState {
  return {
    knobs: opts.knobs,
    sessionName: opts.sessionName,
    connectionId: opts.connectionId,
    phase: "awaiting_setup",
    rng: seedState(opts.knobs.seed),
    setup: null,
    buffered: [],
    context: {
      lastReply: [],
      userTurns: 0,
      answers: 0,
      callCount: 0,
      promptTokens: 0,
      remembered: [],
    },
    replies: 0,
    gens: 0,
    turnsCompleted: 0,
    gen: null,
    calls: {},
    callOrder: [],
    deferred: [],
    historyOpen: false,
    owed: null,
    audioBytes: 0,
    audioSinceGen: 0,
    utterances: 0,
    handles: 0,
    goingAway: false,
    queue: [],
    queueSeq: 0,
  };
}

/** The session name a handle belongs to (handles are `session:connection:n`). */
export function handleSession(handle: string): string | null {
  const parts = handle.split(":");
  return parts.length === 3 && parts[0] !== "" ? parts[0]! : null;
}

class Ctx {
  readonly effects: SimEffect[] = [];
  constructor(
    readonly s: SimState,
    readonly now: number,
  ) {}
  send(message: GeminiServerMessage): void {
    if (this.s.phase !== "closed") this.effects.push({ type: "send", message });
  }
  close(code: number, reason: string): void {
    if (this.s.phase === "closed") return;
    this.s.phase = "closed";
    this.s.queue = [];
    this.s.gen = null;
    this.effects.push({ type: "close", code, reason });
  }
  draw(): number {
    const { value, state } = nextRandom(this.s.rng);
    this.s.rng = state;
    return value;
  }
  schedule(delayMs: number, item: Scheduled): void {
    this.s.queue.push({ at: this.now + delayMs, seq: this.s.queueSeq++, item });
  }
  /** A pacing delay, scaled. */
  paced(ms: number): number {
    return Math.max(0, ms * this.s.knobs.timeScale);
  }
}

export function simStep(state: SimState, input: SimInput, now: number): SimStepResult {
  const ctx = new Ctx(structuredClone(state), now);
  if (ctx.s.phase !== "closed") {
    switch (input.type) {
      case "open":
        onOpen(ctx);
        break;
      case "frame":
        onFrame(ctx, input.text);
        break;
      case "resume_context":
        onResumeContext(ctx, input.handle, input.context);
        break;
      case "tick":
        break;
    }
    drain(ctx);
  }
  const s = ctx.s;
  const wakeAt = s.queue.length === 0 ? null : Math.min(...s.queue.map((q) => q.at));
  return { state: s, effects: ctx.effects, wakeAt };
}

function drain(ctx: Ctx): void {
  const s = ctx.s;
  for (;;) {
    if (s.phase === "closed") return;
    let best = -1;
    for (let i = 0; i < s.queue.length; i++) {
      const q = s.queue[i]!;
      if (q.at > ctx.now) continue;
      const b = best === -1 ? undefined : s.queue[best]!;
      if (b === undefined || q.at < b.at || (q.at === b.at && q.seq < b.seq)) best = i;
    }
    if (best === -1) return;
    const [due] = s.queue.splice(best, 1);
    runScheduled(ctx, due!.item);
  }
}

function runScheduled(ctx: Ctx, item: Scheduled): void {
  switch (item.kind) {
    case "gen":
      if (ctx.s.gen?.id === item.genId) runGen(ctx);
      return;
    case "go_away":
      goAway(ctx);
      return;
    case "setup_complete":
      goLive(ctx);
      return;
    case "close":
      ctx.close(item.code, item.reason);
      return;
  }
}

// ---------------------------------------------------------------------------
// Connection: open, setup, resumption, limits
// ---------------------------------------------------------------------------

function onOpen(ctx: Ctx): void {
  const k = ctx.s.knobs;
  if (k.goAwayAfterMs > 0) ctx.schedule(k.goAwayAfterMs, { kind: "go_away" });
  if (k.dropAfterMs > 0) {
    ctx.schedule(k.dropAfterMs, {
      kind: "close",
      code: 1011,
      reason: "Internal error encountered.",
    });
  }
  if (k.maxConnectionMs > 0) {
    ctx.schedule(Math.max(0, k.maxConnectionMs - k.goAwayMs), { kind: "go_away" });
    ctx.schedule(k.maxConnectionMs, {
      kind: "close",
      code: 1011,
      reason: "Deadline expired before operation could complete.",
    });
  }
}

function goAway(ctx: Ctx): void {
  const s = ctx.s;
  if (s.goingAway) return;
  s.goingAway = true;
  const ms = s.knobs.goAwayMs;
  ctx.send({ goAway: { timeLeft: `${Number((ms / 1000).toFixed(3))}s` } });
  ctx.schedule(ms, {
    kind: "close",
    code: 1011,
    reason: "Deadline expired before operation could complete.",
  });
}

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

function onFrame(ctx: Ctx, text: string): void {
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

/**
 * 3.x live models (3.1 flash live, 3.8 live) differ from 2.x in how they take input and when
 * they end a turn; anything else is served as 2.x.
 */
export function modelFamilyOf(model: string): "2.x" | "3.x" {
  const id = model.slice(model.lastIndexOf("/") + 1);
  return /^gemini-3\.\d+-(.*-)?live/.test(id) ? "3.x" : "2.x";
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
  const syncOnly = s.knobs.syncOnly ?? family === "3.x";
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
function goLive(ctx: Ctx): void {
  const s = ctx.s;
  s.phase = "live";
  ctx.send({ setupComplete: {} });
  const buffered = s.buffered;
  s.buffered = [];
  for (const text of buffered) onFrame(ctx, text);
}

function onResumeContext(ctx: Ctx, _handle: string, context: ResumeContext | null): void {
  const s = ctx.s;
  if (s.phase !== "resuming") return;
  if (context === null || ctx.now - context.savedAt >= s.knobs.handleTtlMs) {
    ctx.close(1007, `${INVALID_ARGUMENT} (unknown or expired session resumption handle)`);
    return;
  }
  const { savedAt: _savedAt, ...restored } = context;
  // Contexts saved before `remembered` existed lack it.
  s.context = { ...structuredClone(restored), remembered: restored.remembered ?? [] };
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
  // Answers go on numbering after the seeded ones, so a tag names one answer per session.
  for (const part of turns.flatMap((t) => (t.role === "model" ? (t.parts ?? []) : []))) {
    for (const m of (part.text ?? "").matchAll(/\[#r(\d+)\]/g)) {
      s.context.answers = Math.max(s.context.answers, Number(m[1]));
    }
  }
  const lines = turns
    .flatMap((t) => t.parts ?? [])
    .flatMap((p) => (p.text?.startsWith("[") ? [p.text] : []));
  s.context.remembered = [...s.context.remembered, ...lines].slice(-10);
}

function onRealtimeInput(ctx: Ctx, input: GeminiRealtimeInput): void {
  const s = ctx.s;
  s.historyOpen = false;
  if (input.activityStart !== undefined) interrupt(ctx);
  const blobs = [...(input.audio ? [input.audio] : []), ...(input.mediaChunks ?? [])];
  for (const blob of blobs) {
    if (blob.mimeType !== undefined && !blob.mimeType.startsWith("audio/")) continue;
    const bytes = base64Length(blob.data);
    s.audioBytes += bytes;
    s.audioSinceGen += bytes;
  }
  if (s.gen !== null && s.audioSinceGen >= BARGE_IN_BYTES) interrupt(ctx);
  if (input.text !== undefined && input.text !== "") {
    interrupt(ctx);
    userInput(ctx, input.text);
  }
  const utteranceBytes = s.knobs.utteranceMs * 32;
  const ended =
    input.audioStreamEnd === true ||
    input.activityEnd !== undefined ||
    (utteranceBytes > 0 && s.audioBytes >= utteranceBytes);
  if (ended && s.audioBytes > 0) {
    s.audioBytes = 0;
    const text = UTTERANCES[s.utterances++ % UTTERANCES.length]!;
    ctx.send({ serverContent: { inputTranscription: { text, finished: true } } });
    interrupt(ctx);
    userInput(ctx, text);
  }
}

function base64Length(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** A user input (or a nudge after an empty reply): the model answers it. */
function userInput(ctx: Ctx, text: string): void {
  const s = ctx.s;
  if (s.owed !== null) {
    const owed = s.owed;
    s.owed = null;
    startOwedReply(ctx, owed);
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

/** Late input is taken when the model is idle (WHEN_IDLE). */
function react(ctx: Ctx, reaction: Reaction): void {
  if (ctx.s.gen !== null) ctx.s.deferred.push(reaction);
  else startReaction(ctx, reaction);
}

// ---------------------------------------------------------------------------
// Generations
// ---------------------------------------------------------------------------

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
    ops: [{ op: "pause", ms: s.knobs.latencyMs }, ...ops],
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

function startUserTurn(ctx: Ctx, userText: string): void {
  const s = ctx.s;
  const setup = s.setup!;
  s.context.userTurns++;
  const tag = answerTag(++s.context.answers);
  const reply = replyFor(
    s.context.userTurns,
    userText,
    s.context.lastReply,
    ctx.draw(),
    tag,
    s.context.remembered,
  );
  const full = `${reply.before} ${reply.after}`;
  if (emptyReply(ctx, false)) {
    s.owed = [full];
    newGen(ctx, [{ op: "end" }], { remember: false, userText });
    return;
  }
  const names = plannedCalls(
    s.context.userTurns,
    userText,
    setup.declaredOrder,
    s.knobs.calls,
    s.knobs,
  );
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
  newGen(
    ctx,
    [
      ...sayOps(ctx, reply.before),
      calls,
      { op: "wait" },
      // Spoken results may come between: each part opens with its space.
      ...sayOps(ctx, ` ${reply.after}`),
      { op: "end" },
    ],
    { remember: true, userText },
  );
}

function startOwedReply(ctx: Ctx, owed: string[]): void {
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
    const speech = reaction.results.map((r) =>
      resultSpeech(r.name, r.summary, answerTag(++s.context.answers)),
    );
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
function runGen(ctx: Ctx): void {
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
      const speech = gen.toSpeak.map((r) =>
        resultSpeech(r.name, r.summary, answerTag(++s.context.answers)),
      );
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

/** Past `wait`: the rest of the reply answers the tool results, and may come out empty. */
function continueAfterResults(ctx: Ctx, gen: Gen): void {
  const s = ctx.s;
  const speech = gen.toSpeak.map((r) =>
    resultSpeech(r.name, r.summary, answerTag(++s.context.answers)),
  );
  gen.toSpeak = [];
  const rest = gen.ops.slice(gen.pc).flatMap((op) => (op.op === "say" ? [op.text] : []));
  if (emptyReply(ctx, true)) {
    s.owed = [...speech, rest.join("")];
    gen.ops = [...gen.ops.slice(0, gen.pc), { op: "end" }];
    return;
  }
  if (speech.length > 0) gen.ops.splice(gen.pc, 0, ...sayOps(ctx, ` ${speech.join(" ")}`));
}

function execute(ctx: Ctx, gen: Gen, op: Op): number {
  switch (op.op) {
    case "pause":
      return ctx.paced(op.ms);
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
      modelTurn: { parts: [{ inlineData: { mimeType: AUDIO_MIME, data: pcm(ms) } }] },
    },
  });
  if (setup.transcribe) ctx.send({ serverContent: { outputTranscription: { text } } });
}

/** `ms` of 24 kHz PCM16 LE: a quiet 220 Hz tone (deterministic). */
function pcm(ms: number): string {
  const samples = Math.round(ms * 24);
  const bytes = new Uint8Array(samples * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples; i++) {
    view.setInt16(i * 2, Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / 24000)), true);
  }
  let binary = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return btoa(binary);
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
    const args = argsFor(decl, gen.userText);
    wire.push(s.knobs.noIds ? { name, args } : { id, name, args });
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

function tokens(text: string): number {
  return Math.ceil(wordCount(text) * 1.3);
}

/** A handle when idle with nothing pending; `resumable: false` otherwise. */
function sendResumption(ctx: Ctx): void {
  const s = ctx.s;
  if (!s.setup?.resumption) return;
  const pending = Object.values(s.calls).some((c) => !c.answered);
  if (s.gen !== null || pending || s.deferred.length > 0) {
    ctx.send({ sessionResumptionUpdate: { resumable: false } });
    return;
  }
  const handle = `${s.sessionName}:${s.connectionId}:${++s.handles}`;
  ctx.effects.push({
    type: "save_handle",
    handle,
    context: { ...structuredClone(s.context), savedAt: ctx.now },
  });
  ctx.send({ sessionResumptionUpdate: { newHandle: handle, resumable: true } });
}
