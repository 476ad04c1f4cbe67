/**
 * The OpenAI face's variants: the family's services speak OpenAI Realtime's events, each with
 * its own session shape and habits, and the face plays each as its sources describe it.
 * Written from those sources, not from liveline's adapter (src/providers/openai): the two
 * must not share one understanding.
 *
 * - `openai`: OpenAI Realtime GA (the API reference).
 * - `xai`: xAI's Grok voice agent API (docs.x.ai "Voice Agent API"; Pipecat's Grok service
 *   types, `pipecat/services/xai/realtime/events.py`; pipecat PR 4401): GA event names, its own
 *   session (no `type`, no `model` — the model is named in the URL only —, `voice` and
 *   `turn_detection` at the top, `audio.input/output.format` with a PCM `rate`), no
 *   `conversation.item.truncate`, `conversation.created` first (no `session.created`), a
 *   function call's arguments-done event without `response_id` and `item_id`, an empty
 *   `usage` on some events. A reasoning voice model bundles an audible answer with a function
 *   call in one response, and a `response.create` after those calls' outputs gets the answer
 *   again (livekit/agents issue 6411, a wire capture of `grok-voice-think-fast-1.0`).
 * - `voice-live`: Azure Voice Live (Microsoft Learn: "unless otherwise noted, the same events
 *   as the Azure OpenAI Realtime API"; Pipecat's Voice Live types,
 *   `pipecat/services/azure/voicelive/events.py`): the original event names
 *   (`response.audio.delta`, `response.audio_transcript.delta`, `response.text.delta`,
 *   `conversation.item.created`) and the original flat session (`modalities`,
 *   `input_audio_format`, `input_audio_sampling_rate`, `voice` as an object, …).
 */
import { z } from "zod";
import { clientEvents, OpenAIClientEvent } from "./strict-schemas.js";

export type FaceDialectName = "openai" | "xai" | "voice-live";

/** A session update read into what the face keeps of it (absent: unchanged). */
export interface SessionSettings {
  voice?: string | undefined;
  tools?: { name: string; parameters?: Record<string, unknown> | undefined }[] | undefined;
  /** Responses speak (audio and its transcript), else they write. */
  audio?: boolean | undefined;
  inputMulaw?: boolean | undefined;
  outputMulaw?: boolean | undefined;
  /** PCM input's sample rate. */
  inputRate?: number | undefined;
}

// --- xAI -------------------------------------------------------------------------------

const XaiFormat = z.union([
  z
    .object({
      type: z.literal("audio/pcm"),
      rate: z
        .union([8000, 16000, 21050, 24000, 32000, 44100, 48000].map((r) => z.literal(r)))
        .optional(),
    })
    .strict(),
  z.object({ type: z.enum(["audio/pcmu", "audio/pcma"]) }).strict(),
]);

const XaiTool = z.union([
  z
    .object({
      type: z.literal("function"),
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  z.object({ type: z.literal("web_search") }).strict(),
  z
    .object({ type: z.literal("x_search"), allowed_x_handles: z.array(z.string()).optional() })
    .strict(),
  z
    .object({
      type: z.literal("file_search"),
      vector_store_ids: z.array(z.string()),
      max_num_results: z.number().optional(),
    })
    .strict(),
]);

const XaiSession = z
  .object({
    instructions: z.string().optional(),
    voice: z.string().optional(),
    turn_detection: z
      .object({
        type: z.literal("server_vad").nullable(),
        threshold: z.number().optional(),
        prefix_padding_ms: z.number().optional(),
        silence_duration_ms: z.number().optional(),
        idle_timeout_ms: z.number().optional(),
      })
      .strict()
      .nullable()
      .optional(),
    audio: z
      .object({
        input: z
          .object({
            format: XaiFormat.optional(),
            transcription: z
              .object({
                language_hint: z.string().optional(),
                keyterms: z.array(z.string()).optional(),
              })
              .strict()
              .optional(),
          })
          .strict()
          .optional(),
        output: z
          .object({ format: XaiFormat.optional(), speed: z.number().optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    reasoning: z.object({ effort: z.string().optional() }).strict().optional(),
    tools: z.array(XaiTool).optional(),
  })
  .strict();

function readXai(session: z.infer<typeof XaiSession>): SessionSettings {
  const input = session.audio?.input?.format;
  const output = session.audio?.output?.format;
  return {
    voice: session.voice,
    tools: session.tools?.flatMap((t) =>
      t.type === "function" ? [{ name: t.name, parameters: t.parameters }] : [],
    ),
    // The voice agent always speaks.
    audio: true,
    inputMulaw: input === undefined ? undefined : input.type !== "audio/pcm",
    outputMulaw: output === undefined ? undefined : output.type !== "audio/pcm",
    inputRate: input?.type === "audio/pcm" ? (input.rate ?? 24000) : undefined,
  };
}

// --- Voice Live (flat) -----------------------------------------------------------------

const FlatVoice = z.union([
  z.object({ type: z.literal("openai"), name: z.string().min(1) }).strict(),
  z
    .object({
      type: z.literal("azure-standard"),
      name: z.string().min(1),
      temperature: z.number().optional(),
      style: z.string().optional(),
      rate: z.string().optional(),
      locale: z.string().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("azure-custom"),
      name: z.string().min(1),
      endpoint_id: z.string(),
    })
    .strict(),
]);

const FlatInFormat = z.enum(["pcm16", "g711_ulaw", "g711_alaw"]);
const FlatOutFormat = z.enum(["pcm16", "pcm16_8000hz", "pcm16_16000hz", "g711_ulaw", "g711_alaw"]);

const FlatSession = z
  .object({
    model: z.string().optional(),
    instructions: z.string().optional(),
    modalities: z.array(z.enum(["text", "audio"])).optional(),
    voice: FlatVoice.optional(),
    input_audio_format: FlatInFormat.optional(),
    output_audio_format: FlatOutFormat.optional(),
    input_audio_sampling_rate: z.union([z.literal(16000), z.literal(24000)]).optional(),
    turn_detection: z
      .object({
        type: z.enum(["server_vad", "semantic_vad", "azure_semantic_vad"]),
        threshold: z.number().optional(),
        prefix_padding_ms: z.number().optional(),
        silence_duration_ms: z.number().optional(),
        create_response: z.boolean().optional(),
        interrupt_response: z.boolean().optional(),
      })
      .strict()
      .nullable()
      .optional(),
    input_audio_transcription: z
      .object({
        model: z.string().optional(),
        language: z.string().optional(),
        prompt: z.string().optional(),
      })
      .strict()
      .nullable()
      .optional(),
    input_audio_noise_reduction: z.unknown().optional(),
    input_audio_echo_cancellation: z.unknown().optional(),
    temperature: z.number().optional(),
    max_response_output_tokens: z.union([z.number(), z.literal("inf")]).optional(),
    tools: z
      .array(
        z
          .object({
            type: z.literal("function"),
            name: z.string().min(1),
            description: z.string().optional(),
            parameters: z.record(z.string(), z.unknown()).optional(),
          })
          .strict(),
      )
      .optional(),
    tool_choice: z.string().optional(),
  })
  .strict();

function readFlat(session: z.infer<typeof FlatSession>): SessionSettings {
  const input = session.input_audio_format;
  const output = session.output_audio_format;
  return {
    voice: session.voice?.name,
    tools: session.tools?.map((t) => ({ name: t.name, parameters: t.parameters })),
    audio: session.modalities === undefined ? undefined : session.modalities.includes("audio"),
    inputMulaw: input === undefined ? undefined : input !== "pcm16",
    outputMulaw: output === undefined ? undefined : output.startsWith("g711"),
    inputRate: input === "pcm16" ? (session.input_audio_sampling_rate ?? 24000) : undefined,
  };
}

// --- the dialects ----------------------------------------------------------------------

type ClientEventSchema = typeof OpenAIClientEvent | ReturnType<typeof clientEvents>;

export interface FaceDialect {
  /** Its client events, strict (session.update in its own shape). */
  readonly events: ClientEventSchema;
  /** A session.update's `session`, once the schema took it, read into the face's settings. */
  readSession(session: unknown): SessionSettings;
  /** The original event names (Voice Live), or the GA ones. */
  readonly betaNames: boolean;
  /** Its first event on a new connection. */
  readonly greeting: "session.created" | "conversation.created";
  /** An audible answer and its function calls in one response (xAI, livekit 6411). */
  readonly bundlesCalls: boolean;
  /** A function call's arguments-done event names its response and item. */
  readonly callEventIds: boolean;
  /** What a response that produced nothing reports as its usage (xAI: an empty one). */
  readonly emptyUsage: null | Record<string, never>;
}

const GA_SESSION = OpenAIClientEvent.options[0].shape.session;

export const FACE_DIALECTS: Record<FaceDialectName, FaceDialect> = {
  openai: {
    events: OpenAIClientEvent,
    readSession(raw) {
      const session = GA_SESSION.parse(raw);
      const output = session.audio?.output;
      const input = session.audio?.input?.format;
      return {
        voice: output?.voice,
        tools: session.tools?.map((t) => ({ name: t.name, parameters: t.parameters })),
        audio:
          session.output_modalities === undefined
            ? undefined
            : session.output_modalities[0] === "audio",
        inputMulaw: input === undefined ? undefined : input.type === "audio/pcmu",
        outputMulaw: output?.format === undefined ? undefined : output.format.type === "audio/pcmu",
        // GA takes PCM at 24 kHz only.
        inputRate: input === undefined ? undefined : 24000,
      };
    },
    betaNames: false,
    greeting: "session.created",
    bundlesCalls: false,
    callEventIds: true,
    emptyUsage: null,
  },
  xai: {
    events: clientEvents(XaiSession, false),
    readSession: (raw) => readXai(XaiSession.parse(raw)),
    betaNames: false,
    greeting: "conversation.created",
    bundlesCalls: true,
    callEventIds: false,
    emptyUsage: {},
  },
  "voice-live": {
    events: clientEvents(FlatSession, true),
    readSession: (raw) => readFlat(FlatSession.parse(raw)),
    betaNames: true,
    greeting: "session.created",
    bundlesCalls: false,
    callEventIds: true,
    emptyUsage: null,
  },
};

/** GA names the face speaks → the original ones (Voice Live); null: no such event there. */
const BETA_NAMES: Readonly<Record<string, string | null>> = {
  "response.output_text.delta": "response.text.delta",
  "response.output_text.done": "response.text.done",
  "response.output_audio.delta": "response.audio.delta",
  "response.output_audio.done": "response.audio.done",
  "response.output_audio_transcript.delta": "response.audio_transcript.delta",
  "response.output_audio_transcript.done": "response.audio_transcript.done",
  "conversation.item.added": "conversation.item.created",
  "conversation.item.done": null,
};

/** An event's type as `dialect` names it, or null when the dialect has no such event. */
export function eventName(dialect: FaceDialect, type: string): string | null {
  if (!dialect.betaNames) return type;
  const renamed = BETA_NAMES[type];
  return renamed === undefined ? type : renamed;
}
