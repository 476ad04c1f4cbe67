/**
 * ModelCommands, setup and rebuilt context → Gemini Live client messages (plain objects;
 * the adapter serialises them).
 */
import {
  type ModelCapabilities,
  type ModelCommand,
  OUTCOME_UNKNOWN,
  type RebuiltContext,
  type ResultScheduling,
  type ToolResponse,
} from "../../vocabulary/model.js";
import { bytesToBase64 } from "../base64.js";
import type {
  GeminiClientMessage,
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiFunctionResponse,
  GeminiPart,
  GeminiScheduling,
  GeminiSetup,
} from "./schemas.js";
import { declareFunction, type GeminiToolSpec } from "./tool-declaration.js";

/** Gemini's native input format: PCM16 LE mono at 16 kHz (other rates are resampled). */
export const INPUT_AUDIO_MIME = "audio/pcm;rate=16000";

export interface GeminiSetupOptions {
  /** "gemini-…" (prefixed with "models/") or a full Vertex resource path (kept as is). */
  model: string;
  systemInstruction?: string | undefined;
  tools?: readonly GeminiToolSpec[] | undefined;
  /** Declarations built elsewhere (e.g. with `toolDeclaration`), appended after `tools`. */
  declarations?: readonly GeminiFunctionDeclaration[] | undefined;
  /** AUDIO by default: the live models are voice models. */
  responseModality?: "AUDIO" | "TEXT" | undefined;
  voiceName?: string | undefined;
  /** BCP-47 code of the speech (`speechConfig.languageCode`). */
  languageCode?: string | undefined;
  /** Resume a previous session (a `sessionResumptionUpdate.newHandle` seen as resumable). */
  resumptionHandle?: string | undefined;
  /** Sliding-window compression; without it audio sessions end after ~15 min. */
  contextWindowCompression?: { triggerTokens?: number; targetTokens?: number } | undefined;
  /** Seed history via clientContent after setup (needed by some models for rebuilds). */
  initialHistoryInClientContent?: boolean | undefined;
}

export function modelResource(model: string): string {
  // A "/" means the caller already gave a resource path ("models/x", "projects/…/models/x").
  return model.includes("/") ? model : `models/${model}`;
}

export function encodeSetup(opts: GeminiSetupOptions): { setup: GeminiSetup } {
  const setup: GeminiSetup = {
    model: modelResource(opts.model),
    generationConfig: {
      responseModalities: [opts.responseModality ?? "AUDIO"],
      ...(opts.voiceName === undefined && opts.languageCode === undefined
        ? {}
        : {
            speechConfig: {
              ...(opts.voiceName === undefined
                ? {}
                : { voiceConfig: { prebuiltVoiceConfig: { voiceName: opts.voiceName } } }),
              ...(opts.languageCode === undefined ? {} : { languageCode: opts.languageCode }),
            },
          }),
    },
  };
  if (opts.systemInstruction !== undefined) {
    setup.systemInstruction = { parts: [{ text: opts.systemInstruction }] };
  }
  const declarations = [...(opts.tools ?? []).map(declareFunction), ...(opts.declarations ?? [])];
  if (declarations.length > 0) setup.tools = [{ functionDeclarations: declarations }];
  // Transcripts are what the session log and the text-only clients see of an audio turn.
  setup.inputAudioTranscription = {};
  setup.outputAudioTranscription = {};
  // Always ask for resumption updates: a handle is the cheapest way across goAway.
  setup.sessionResumption =
    opts.resumptionHandle === undefined ? {} : { handle: opts.resumptionHandle };
  const compression = opts.contextWindowCompression;
  if (compression !== undefined) {
    // int64 fields travel as JSON strings (proto3 JSON mapping).
    setup.contextWindowCompression = {
      slidingWindow:
        compression.targetTokens === undefined
          ? {}
          : { targetTokens: String(compression.targetTokens) },
      ...(compression.triggerTokens === undefined
        ? {}
        : { triggerTokens: String(compression.triggerTokens) }),
    };
  }
  if (opts.initialHistoryInClientContent === true) {
    setup.historyConfig = { initialHistoryInClientContent: true };
  }
  return { setup };
}

/**
 * How user text reaches the model. 2.x: a completed `clientContent` turn (a clean turn
 * boundary). 3.1 refuses `clientContent` after the seed (1007; livekit PR 5251) and takes
 * text as `realtimeInput.text` (ADK's route).
 */
export type GeminiTextRoute = "client_content" | "realtime_input";

/** What the endpoint and model family change in the encoding of commands. */
export interface GeminiWireRules {
  textRoute: GeminiTextRoute;
  /** Vertex refuses `audioStreamEnd` (a Developer API field; the SDKs' Vertex converters drop it). */
  vertex: boolean;
}

const DEVELOPER_2X: GeminiWireRules = { textRoute: "client_content", vertex: false };

export function encodeCommand(
  cmd: ModelCommand,
  caps: ModelCapabilities,
  rules: GeminiWireRules = DEVELOPER_2X,
): GeminiClientMessage[] {
  switch (cmd.type) {
    case "audio_played":
      // Gemini Live has no way to cut what the model said to what was heard.
      return [];
    case "end_session":
      // The session ends with its socket.
      return [];
    case "user_text":
    case "nudge":
      // A nudge is a user turn the model sees but clients never do (the core hides it).
      if (rules.textRoute === "realtime_input") return [{ realtimeInput: { text: cmd.text } }];
      return [{ clientContent: { turns: [userText(cmd.text)], turnComplete: true } }];
    case "user_audio":
      return [
        { realtimeInput: { audio: { data: bytesToBase64(cmd.pcm), mimeType: INPUT_AUDIO_MIME } } },
      ];
    case "audio_end":
      // Flushes the server's buffered audio when the mic stops (Developer API). Vertex has no
      // such field, and activityEnd is valid only with automatic activity detection off: its
      // own voice detection ends the utterance there.
      if (rules.vertex) return [];
      return [{ realtimeInput: { audioStreamEnd: true } }];
    case "tool_responses":
      // Results go in toolResponse, never clientContent: that would open a new user turn.
      if (cmd.responses.length === 0) return [];
      return [
        {
          toolResponse: {
            functionResponses: cmd.responses.map((r) => functionResponse(r, caps)),
          },
        },
      ];
    default:
      return assertNever(cmd);
  }
}

function userText(text: string): GeminiContent {
  return { role: "user", parts: [{ text }] };
}

/** A result as a function response's `response` body: `{output}` or `{error}`. */
export function responseBody(r: ToolResponse): Record<string, unknown> {
  // Contract: exactly one of result / error. If both were set the error wins, because a
  // result the tool itself flagged as failed must not be spoken as an answer.
  if (r.error !== undefined) return { error: r.error };
  return { output: r.result ?? {} };
}

function functionResponse(r: ToolResponse, caps: ModelCapabilities): GeminiFunctionResponse {
  const out: GeminiFunctionResponse = { id: r.callId, name: r.name, response: responseBody(r) };
  // Proto placement: beside `response`. Omitted where the endpoint drops or rejects it.
  if (caps.resultScheduling && r.scheduling !== undefined) {
    out.scheduling = schedulingEnum(r.scheduling);
  }
  return out;
}

export function schedulingEnum(s: ResultScheduling): GeminiScheduling {
  switch (s) {
    case "silent":
      return "SILENT";
    case "when_idle":
      return "WHEN_IDLE";
    case "interrupt":
      return "INTERRUPT";
    default:
      return assertNever(s);
  }
}

/** Bounds of the text a call or an outcome becomes in a seed (a long result is cut, marked). */
export const SEED_ARGS_MAX_CHARS = 300;
export const SEED_OUTCOME_MAX_CHARS = 600;
/** Closes a seed whose last turn is the model's: the seed must end on a user turn. */
export const SEED_RESUME_NOTE = "[The conversation continues on a new connection.]";

/**
 * The conversation so far, to seed a fresh connection when resumption is not available.
 * Text only: the service refuses `functionCall` / `functionResponse` parts in
 * `clientContent` (1007; pipecat issue 4926, fixed in its PR 5028 the same way), so a call
 * becomes a line of model text and its outcome a line of user text, adjacent and in order.
 * Adjacent items with the same wire role are merged into one turn, and the seed ends on a
 * user turn. It is sent once, first, with `turnComplete: true` on a connection whose setup
 * has `historyConfig.initialHistoryInClientContent` (ADK, pipecat and livekit do the same):
 * the service then takes it as history and does not answer it. An empty context yields
 * `turns: []`; callers send nothing then (and ask for no historyConfig).
 */
export function encodeRebuiltContext(ctx: RebuiltContext): {
  clientContent: { turns: GeminiContent[]; turnComplete: true };
} {
  const turns: { role: "user" | "model"; parts: GeminiPart[] }[] = [];
  const append = (role: "user" | "model", text: string) => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.parts.push({ text });
    else turns.push({ role, parts: [{ text }] });
  };
  for (const item of ctx.items) {
    switch (item.role) {
      case "user":
        append("user", item.text);
        break;
      case "model":
        append("model", item.text);
        break;
      case "model_calls":
        for (const c of item.calls) append("model", callLine(c.name, c.args));
        break;
      case "tool_results":
        for (const r of item.results) append("user", outcomeLine(r));
        break;
      default:
        assertNever(item);
    }
  }
  if (turns.length > 0 && turns[turns.length - 1]!.role === "model") {
    append("user", SEED_RESUME_NOTE);
  }
  return { clientContent: { turns, turnComplete: true } };
}

/** `[called lookup_faq {"topic":"hours"}]`: readable, bounded, never a functionCall part. */
export function callLine(name: string, args: Record<string, unknown>): string {
  return `[called ${name} ${bounded(JSON.stringify(args), SEED_ARGS_MAX_CHARS)}]`;
}

/** `[lookup_faq returned {"answer":…}]` or `[lookup_faq failed: timeout]`. */
export function outcomeLine(r: ToolResponse): string {
  // Not a failure: the call may have taken effect (a restart cut it off).
  if (r.error?.startsWith(OUTCOME_UNKNOWN) === true)
    return `[${r.name}: ${bounded(r.error, SEED_OUTCOME_MAX_CHARS)}]`;
  if (r.error !== undefined)
    return `[${r.name} failed: ${bounded(r.error, SEED_OUTCOME_MAX_CHARS)}]`;
  return `[${r.name} returned ${bounded(JSON.stringify(r.result ?? {}), SEED_OUTCOME_MAX_CHARS)}]`;
}

function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function assertNever(value: never): never {
  throw new Error(`unhandled variant: ${JSON.stringify(value)}`);
}
