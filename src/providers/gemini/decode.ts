/**
 * Server frame → normalised ModelEvents.
 *
 * Never throws: a frame that is not UTF-8 JSON or matches no known server message becomes
 * an error result the session can log and act on (a throw inside a WebSocket message
 * handler would lose the frame and, worse, the reason).
 */
import type { ModelEvent, TokenUsage, ToolCallRequest } from "../../vocabulary/model.js";
import { base64ToBytes } from "../base64.js";
import { durationToMs } from "./duration.js";
import {
  type GeminiFunctionCall,
  type GeminiPart,
  type GeminiServerContent,
  type GeminiServerMessage,
  type GeminiUsageMetadata,
  ServerMessage,
} from "./schemas.js";

export type DecodeError = { code: "protocol_error"; message: string };

export type DecodeResult = { ok: true; events: ModelEvent[] } | { ok: false; error: DecodeError };

/**
 * Per-connection decoder memory. Mutated by `decodeServerFrame`; create one per upstream
 * connection (with a distinct `idPrefix`, so synthetic ids never repeat across reconnects:
 * the history store keeps one call per id).
 */
export interface DecoderState {
  readonly idPrefix: string;
  /** Call ids already turned into a tool_call event: a call can arrive twice (O5). */
  readonly seenCallIds: Set<string>;
  /** Counter behind synthetic ids for calls the server sent without one. */
  syntheticCount: number;
  /**
   * Id-less calls seen on one channel (modelTurn part / toolCall) and not yet matched by
   * their twin on the other, keyed by name+args. Without an id this is the only way to tell
   * "the same call delivered twice" from "two calls"; cleared at the end of each turn.
   */
  readonly unmatchedAnonymous: Record<CallChannel, Map<string, number>>;
}

type CallChannel = "part" | "toolCall";

export function createDecoderState(idPrefix = "liveline-call"): DecoderState {
  return {
    idPrefix,
    seenCallIds: new Set(),
    syntheticCount: 0,
    unmatchedAnonymous: { part: new Map(), toolCall: new Map() },
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function protocolError(message: string): DecodeResult {
  return { ok: false, error: { code: "protocol_error", message } };
}

export function decodeServerFrame(
  data: string | ArrayBuffer | Uint8Array,
  state: DecoderState,
): DecodeResult {
  let text: string;
  try {
    // The real service sends its JSON in binary frames
    // (test/fixtures/gemini/field-observations.md, O4).
    text = typeof data === "string" ? data : utf8.decode(data);
  } catch {
    return protocolError("binary frame is not valid UTF-8");
  }

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return protocolError(`frame is not JSON: ${preview(text)}`);
  }

  const audio = audioOnly(json);
  if (audio !== null) {
    try {
      return { ok: true, events: [{ type: "audio_delta", pcm: base64ToBytes(audio) }] };
    } catch {
      return protocolError("inlineData is not valid base64");
    }
  }
  const heard = transcriptionOnly(json);
  if (heard !== null) return { ok: true, events: [heard] };
  const words = wordsOnly(json);
  if (words !== null) {
    const parts = words.serverContent?.modelTurn?.parts ?? [];
    return { ok: true, events: toEvents(words, decodeParts(parts), state) };
  }

  return decodeBySchema(json, state);
}

/** A parsed frame through the schema (every frame but an audio-only one; tests compare). */
export function decodeBySchema(json: unknown, state: DecoderState): DecodeResult {
  const parsed = ServerMessage.safeParse(json);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      .join("; ");
    return protocolError(`not a Gemini Live server message: ${detail}`);
  }

  // Decode every base64 payload before touching `state`, so a bad frame leaves no trace.
  let content: DecodedPart[];
  try {
    content = decodeParts(parsed.data.serverContent?.modelTurn?.parts ?? []);
  } catch {
    return protocolError("inlineData is not valid base64");
  }
  return { ok: true, events: toEvents(parsed.data, content, state) };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const onlyKeys = (v: Record<string, unknown>, ...keys: string[]) =>
  Object.keys(v).every((k) => keys.includes(k));

/** `json.serverContent` of a frame `{serverContent: {…}}` with nothing beside it and no keys but `keys` in it, or undefined. */
function serverContentWithin(
  json: unknown,
  ...keys: string[]
): Record<string, unknown> | undefined {
  if (!isRecord(json) || !onlyKeys(json, "serverContent")) return undefined;
  const content = json.serverContent;
  return isRecord(content) && onlyKeys(content, ...keys) ? content : undefined;
}

/** The parts of a model turn `{parts?, role?}` with nothing else (a role a string), or null. */
function modelTurnParts(turn: unknown): { parts: unknown } | null {
  if (!isRecord(turn) || !onlyKeys(turn, "parts", "role")) return null;
  if (turn.role !== undefined && typeof turn.role !== "string") return null;
  return { parts: turn.parts };
}

/**
 * The base64 data of a frame that holds one audio chunk and nothing else — 50 of them a
 * second, the bulk of what the service sends — or null. Exactly the shape
 * `{serverContent: {modelTurn: {parts: [{inlineData: {mimeType: "audio/…", data}}]}}}` (a
 * `role` allowed), checked by hand: the schema would accept it and decode it to the same one
 * event (a conformance test holds the two paths to that); every other frame takes the schema.
 */
function audioOnly(json: unknown): string | null {
  const parts = modelTurnParts(serverContentWithin(json, "modelTurn")?.modelTurn)?.parts;
  if (!Array.isArray(parts) || parts.length !== 1) return null;
  const part: unknown = parts[0];
  if (!isRecord(part) || !onlyKeys(part, "inlineData")) return null;
  const blob = part.inlineData;
  if (!isRecord(blob) || !onlyKeys(blob, "mimeType", "data")) return null;
  const { mimeType, data } = blob;
  if (typeof mimeType !== "string" || !mimeType.startsWith("audio/")) return null;
  return typeof data === "string" ? data : null;
}

/**
 * The event of a frame that holds a piece of the user's transcription and nothing else —
 * `{serverContent: {inputTranscription: {text?, finished?}}}`, which comes with the user's
 * speech, often a frame a chunk — or null; checked by hand as `audioOnly` is (the schema
 * decodes it to the same one event).
 */
function transcriptionOnly(json: unknown): ModelEvent | null {
  const input = serverContentWithin(json, "inputTranscription")?.inputTranscription;
  if (!isRecord(input) || !onlyKeys(input, "text", "finished")) return null;
  const { text, finished } = input;
  if (text !== undefined && typeof text !== "string") return null;
  if (finished !== undefined && typeof finished !== "boolean") return null;
  if (text === undefined && finished === undefined) return null;
  return { type: "input_transcript", text: text ?? "", finished: finished ?? false };
}

/** The markers a frame of the model's words may carry beside them (booleans on the wire). */
const TURN_MARKERS = ["generationComplete", "turnComplete", "interrupted"] as const;

/**
 * A frame that holds the model's words as text parts and the turn's markers and nothing else —
 * `{serverContent: {modelTurn?: {role?, parts?: [{text}…]}, generationComplete?, turnComplete?,
 * interrupted?}}`, a few of them every turn — as the message the schema would make of it, or
 * null; checked by hand as `audioOnly` is, and decoded by the same code as the schema's output
 * (the schema keeps such a frame as it is: a conformance test holds the two paths to that).
 */
function wordsOnly(json: unknown): GeminiServerMessage | null {
  const content = serverContentWithin(json, "modelTurn", ...TURN_MARKERS);
  if (content === undefined) return null;
  for (const marker of TURN_MARKERS) {
    const value = content[marker];
    if (value !== undefined && typeof value !== "boolean") return null;
  }
  if (content.modelTurn !== undefined) {
    const turn = modelTurnParts(content.modelTurn);
    if (turn === null) return null;
    const { parts } = turn;
    const textOnly = (part: unknown) =>
      isRecord(part) && onlyKeys(part, "text") && typeof part.text === "string";
    if (parts !== undefined && !(Array.isArray(parts) && parts.every(textOnly))) return null;
  }
  return json as GeminiServerMessage;
}

/** A model-turn part reduced to what liveline acts on. */
type DecodedPart =
  | { kind: "text"; text: string }
  | { kind: "audio"; pcm: Uint8Array }
  | { kind: "call"; call: GeminiFunctionCall }
  /** Reasoning: nothing to show, but a sign the model works on its answer. */
  | { kind: "thought" }
  | { kind: "ignored" };

function decodeParts(parts: GeminiPart[]): DecodedPart[] {
  return parts.map((part): DecodedPart => {
    if (part.functionCall !== undefined) return { kind: "call", call: part.functionCall };
    // executableCode / codeExecutionResult are the model's tool plumbing (the recorded
    // session shows code calling the function before the toolCall), and thought parts are
    // reasoning: neither is something to show or speak.
    if (part.executableCode !== undefined || part.codeExecutionResult !== undefined) {
      return { kind: "ignored" };
    }
    if (part.thought === true) return { kind: "thought" };
    if (part.inlineData?.mimeType?.startsWith("audio/")) {
      return { kind: "audio", pcm: base64ToBytes(part.inlineData.data) };
    }
    if (part.text !== undefined && part.text !== "") return { kind: "text", text: part.text };
    return { kind: "ignored" };
  });
}

/**
 * Event order inside one frame: speech start, the turn's content, tool calls, then the
 * turn's end markers, then connection-level notices. Content before completion is what
 * the core needs to attribute text and calls to the turn that the same frame ends.
 */
function toEvents(
  msg: GeminiServerMessage,
  parts: DecodedPart[],
  state: DecoderState,
): ModelEvent[] {
  const events: ModelEvent[] = [];

  if (msg.setupComplete !== undefined) events.push({ type: "setup_complete" });

  if (isSpeechStart(msg)) events.push({ type: "speech_started" });

  // Reasoning alone (a thinking model before its first word): the model is at work.
  if (
    parts.some((p) => p.kind === "thought") &&
    parts.every((p) => p.kind !== "text" && p.kind !== "audio" && p.kind !== "call")
  )
    events.push({ type: "working" });

  const content = msg.serverContent;
  if (content !== undefined) pushContent(content, parts, state, events);

  const toolCalls = msg.toolCall?.functionCalls ?? [];
  const fresh = admitCalls(toolCalls, "toolCall", state);
  if (fresh.length > 0) events.push({ type: "tool_call", calls: fresh });

  const cancelled = msg.toolCallCancellation?.ids ?? [];
  if (cancelled.length > 0) events.push({ type: "tool_call_cancellation", ids: cancelled });

  // Usage rides with (or, on 3.1, without) the turn's end: counted before it, for that turn.
  if (msg.usageMetadata !== undefined)
    events.push({ type: "usage", usage: usageOf(msg.usageMetadata) });

  if (content !== undefined) pushTurnEnd(content, state, events);

  const resumption = msg.sessionResumptionUpdate;
  if (resumption !== undefined) {
    // proto3 JSON omits false/empty values: no `resumable` means false, "" means no handle.
    const resumable = resumption.resumable === true || resumption.resumable === "true";
    const handle = resumption.newHandle === "" ? undefined : resumption.newHandle;
    events.push(
      handle === undefined
        ? { type: "resumption_update", resumable }
        : { type: "resumption_update", handle, resumable },
    );
  }

  if (msg.goAway !== undefined) {
    // The schema only admits well-formed durations; absent means "now".
    const timeLeft = msg.goAway.timeLeft;
    events.push({
      type: "go_away",
      timeLeftMs: timeLeft === undefined ? 0 : (durationToMs(timeLeft) ?? 0),
    });
  }

  return events;
}

function isSpeechStart(msg: GeminiServerMessage): boolean {
  return (
    msg.voiceActivityDetectionSignal?.vadSignalType === "VAD_SIGNAL_TYPE_SOS" ||
    msg.voiceActivity?.voiceActivityType === "ACTIVITY_START"
  );
}

function pushContent(
  content: GeminiServerContent,
  parts: DecodedPart[],
  state: DecoderState,
  events: ModelEvent[],
): void {
  // What the user said precedes the model's answer to it.
  const input = content.inputTranscription;
  if (input !== undefined && (input.text !== undefined || input.finished !== undefined)) {
    events.push({
      type: "input_transcript",
      text: input.text ?? "",
      finished: input.finished ?? false,
    });
  }

  // Consecutive functionCall parts become one tool_call event, like one toolCall message.
  let pendingCalls: GeminiFunctionCall[] = [];
  const flushCalls = () => {
    const fresh = admitCalls(pendingCalls, "part", state);
    if (fresh.length > 0) events.push({ type: "tool_call", calls: fresh });
    pendingCalls = [];
  };
  for (const part of parts) {
    if (part.kind !== "call") flushCalls();
    switch (part.kind) {
      case "text":
        events.push({ type: "text_delta", text: part.text });
        break;
      case "audio":
        events.push({ type: "audio_delta", pcm: part.pcm });
        break;
      case "call":
        pendingCalls.push(part.call);
        break;
      case "thought":
      case "ignored":
        break;
      default:
        assertNever(part);
    }
  }
  flushCalls();

  // Vertex opens with an empty `outputTranscription: {}`: nothing to forward.
  const output = content.outputTranscription?.text;
  if (output !== undefined && output !== "")
    events.push({ type: "transcript_delta", text: output });

  if (content.interrupted === true) events.push({ type: "interrupted" });
}

function pushTurnEnd(
  content: GeminiServerContent,
  state: DecoderState,
  events: ModelEvent[],
): void {
  if (content.generationComplete === true) events.push({ type: "generation_complete" });
  if (content.turnComplete === true) {
    const reason = content.turnCompleteReason;
    events.push(
      reason === undefined ? { type: "turn_complete" } : { type: "turn_complete", reason },
    );
  }
  if (content.turnComplete === true || content.interrupted === true) {
    // A twin is delivered within its turn; stale entries would swallow a later real call.
    state.unmatchedAnonymous.part.clear();
    state.unmatchedAnonymous.toolCall.clear();
  }
}

/** Returns the calls not delivered before, each with a stable id. Records them in `state`. */
function admitCalls(
  calls: GeminiFunctionCall[],
  channel: CallChannel,
  state: DecoderState,
): ToolCallRequest[] {
  const fresh: ToolCallRequest[] = [];
  for (const call of calls) {
    const args = call.args ?? {};
    if (call.id !== undefined && call.id !== "") {
      if (state.seenCallIds.has(call.id)) continue;
      state.seenCallIds.add(call.id);
      fresh.push({ id: call.id, name: call.name, args });
      continue;
    }
    const signature = `${call.name}\u0000${stableJson(args)}`;
    const other = state.unmatchedAnonymous[channel === "part" ? "toolCall" : "part"];
    const waiting = other.get(signature) ?? 0;
    if (waiting > 0) {
      // The twin of an id-less call already emitted from the other channel.
      if (waiting === 1) other.delete(signature);
      else other.set(signature, waiting - 1);
      continue;
    }
    const mine = state.unmatchedAnonymous[channel];
    mine.set(signature, (mine.get(signature) ?? 0) + 1);
    state.syntheticCount += 1;
    const id = `${state.idPrefix}-${state.syntheticCount}-${call.name}`;
    state.seenCallIds.add(id);
    fresh.push({ id, name: call.name, args });
  }
  return fresh;
}

/** JSON with sorted keys, so the same args in a different key order match. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function preview(text: string): string {
  return text.length > 80 ? `${JSON.stringify(text.slice(0, 80))}…` : JSON.stringify(text);
}

function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}

function usageOf(u: GeminiUsageMetadata): TokenUsage {
  const prompt = u.promptTokenCount ?? 0;
  const response = u.responseTokenCount ?? 0;
  const usage: TokenUsage = {
    promptTokens: prompt,
    responseTokens: response,
    totalTokens: u.totalTokenCount ?? prompt + response,
  };
  if (u.cachedContentTokenCount !== undefined) usage.cachedTokens = u.cachedContentTokenCount;
  if (u.thoughtsTokenCount !== undefined) usage.thoughtsTokens = u.thoughtsTokenCount;
  if (u.toolUsePromptTokenCount !== undefined)
    usage.toolUsePromptTokens = u.toolUsePromptTokenCount;
  const promptBy = byModality(u.promptTokensDetails);
  if (promptBy !== undefined) usage.promptByModality = promptBy;
  const responseBy = byModality(u.responseTokensDetails);
  if (responseBy !== undefined) usage.responseByModality = responseBy;
  return usage;
}

function byModality(
  details: Array<{ modality?: string | undefined; tokenCount?: number | undefined }> | undefined,
): Record<string, number> | undefined {
  if (details === undefined || details.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (const d of details) {
    const key = d.modality ?? "MODALITY_UNSPECIFIED";
    out[key] = (out[key] ?? 0) + (d.tokenCount ?? 0);
  }
  return out;
}
