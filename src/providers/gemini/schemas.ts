/**
 * Zod schemas for the Gemini Live (BidiGenerateContent) wire protocol, both directions.
 *
 * Sources: test/fixtures/PROTOCOL_NOTES.md (proto + SDK types) and the recorded sessions in
 * test/fixtures/gemini. Every object is *loose*: the service adds fields over time
 * (`sessionId` on Vertex, `waitingForInput`, `interactionStatus`…) and an adapter that
 * rejected unknown fields would drop a whole live session on the next server release.
 * What we do need is strict: the types of the fields we read.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------
// Shared building blocks (Content, Part, MediaBlob)
// ---------------------------------------------------------------------------

/** proto3 JSON maps int64 to a string, but parsers also accept numbers: take both. */
export const Int64 = z.union([z.string().regex(/^-?\d+$/), z.number().int()]);

/** google.protobuf.Duration in proto3 JSON: decimal seconds with an "s" suffix ("10s", "1.5s"). */
const Duration = z.string().regex(/^-?\d+(\.\d+)?s$/);

/** Raw bytes with their type; `data` is base64. Vertex audio omits the rate ("audio/pcm"). */
const MediaBlob = z.looseObject({
  data: z.string(),
  mimeType: z.string().optional(),
});

export const FunctionCall = z.looseObject({
  /** Absent in some SDK fixtures and older models: the decoder synthesises a stable one. */
  id: z.string().optional(),
  name: z.string(),
  /**
   * The object as sent, not `z.record`: that rebuilds it key by key, and a `__proto__` key
   * (an own property after JSON.parse) became an assignment to the prototype, dropped.
   */
  args: z
    .custom<Record<string, unknown>>(
      (v) => typeof v === "object" && v !== null && !Array.isArray(v),
      "expected an object",
    )
    .optional(),
});

/** SILENT / WHEN_IDLE / INTERRUPT; only honoured for NON_BLOCKING functions. */
export const Scheduling = z.enum(["SCHEDULING_UNSPECIFIED", "SILENT", "WHEN_IDLE", "INTERRUPT"]);

export const FunctionResponse = z.looseObject({
  /** The Python SDK and Vertex recordings send responses without an id. */
  id: z.string().optional(),
  name: z.string(),
  /** A Struct: by convention `{output: …}` or `{error: …}`, but any object is accepted. */
  response: z.record(z.string(), z.unknown()).optional(),
  willContinue: z.boolean().optional(),
  /** Proto placement: a sibling of `response` (the docs example puts it inside instead). */
  scheduling: Scheduling.optional(),
});

const ExecutableCode = z.looseObject({
  language: z.string().optional(),
  code: z.string(),
});

const CodeExecutionResult = z.looseObject({
  outcome: z.string().optional(),
  output: z.string().optional(),
});

/** A Part is a oneof on the wire; modelled as optional fields so a new kind is not fatal. */
export const Part = z.looseObject({
  text: z.string().optional(),
  /** Thinking models mark reasoning text with `thought: true`; it is not model speech. */
  thought: z.boolean().optional(),
  inlineData: MediaBlob.optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
  executableCode: ExecutableCode.optional(),
  codeExecutionResult: CodeExecutionResult.optional(),
});

export const Content = z.looseObject({
  /** Developer API omits it on model turns; Vertex sends "model". */
  role: z.string().optional(),
  parts: z.array(Part).optional(),
});

// ---------------------------------------------------------------------------
// Client → server
// ---------------------------------------------------------------------------

export const Behavior = z.enum(["UNSPECIFIED", "BLOCKING", "NON_BLOCKING"]);

export const FunctionDeclaration = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  /** OpenAPI-subset schema (`type: "OBJECT"`), as the SDK recordings send it. */
  parameters: z.record(z.string(), z.unknown()).optional(),
  /** Plain JSON Schema; what liveline sends (derived from the tool's zod schema). */
  parametersJsonSchema: z.unknown().optional(),
  response: z.record(z.string(), z.unknown()).optional(),
  responseJsonSchema: z.unknown().optional(),
  behavior: Behavior.optional(),
});

const Tool = z.looseObject({
  functionDeclarations: z.array(FunctionDeclaration).optional(),
  googleSearch: z.looseObject({}).optional(),
  codeExecution: z.looseObject({}).optional(),
});

export const Modality = z.enum(["MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "AUDIO"]);

const GenerationConfig = z.looseObject({
  responseModalities: z.array(Modality).optional(),
  speechConfig: z.looseObject({}).optional(),
  thinkingConfig: z.looseObject({}).optional(),
  temperature: z.number().optional(),
  maxOutputTokens: z.number().int().optional(),
  mediaResolution: z.string().optional(),
});

const RealtimeInputConfig = z.looseObject({
  automaticActivityDetection: z
    .looseObject({
      disabled: z.boolean().optional(),
      startOfSpeechSensitivity: z.string().optional(),
      endOfSpeechSensitivity: z.string().optional(),
      prefixPaddingMs: z.number().int().optional(),
      silenceDurationMs: z.number().int().optional(),
    })
    .optional(),
  activityHandling: z.string().optional(),
  turnCoverage: z.string().optional(),
});

const SessionResumptionConfig = z.looseObject({
  handle: z.string().optional(),
  /** Vertex only. */
  transparent: z.boolean().optional(),
});

const ContextWindowCompression = z.looseObject({
  triggerTokens: Int64.optional(),
  slidingWindow: z.looseObject({ targetTokens: Int64.optional() }).optional(),
});

export const Setup = z.looseObject({
  /** "models/…" on the Developer API, "projects/…/publishers/google/models/…" on Vertex. */
  model: z.string(),
  generationConfig: GenerationConfig.optional(),
  systemInstruction: Content.optional(),
  tools: z.array(Tool).optional(),
  realtimeInputConfig: RealtimeInputConfig.optional(),
  sessionResumption: SessionResumptionConfig.optional(),
  contextWindowCompression: ContextWindowCompression.optional(),
  inputAudioTranscription: z.looseObject({}).optional(),
  outputAudioTranscription: z.looseObject({}).optional(),
  proactivity: z.looseObject({ proactiveAudio: z.boolean().optional() }).optional(),
  historyConfig: z
    .looseObject({ initialHistoryInClientContent: z.boolean().optional() })
    .optional(),
  explicitVadSignal: z.boolean().optional(),
});

export const ClientContent = z.looseObject({
  turns: z.array(Content).optional(),
  turnComplete: z.boolean().optional(),
});

export const RealtimeInput = z.looseObject({
  audio: MediaBlob.optional(),
  video: MediaBlob.optional(),
  text: z.string().optional(),
  /** Developer API only. */
  audioStreamEnd: z.boolean().optional(),
  /** Only when automatic activity detection is disabled. */
  activityStart: z.looseObject({}).optional(),
  activityEnd: z.looseObject({}).optional(),
  /** Deprecated, still in the recordings. */
  mediaChunks: z.array(MediaBlob).optional(),
});

export const ToolResponseMessage = z.looseObject({
  functionResponses: z.array(FunctionResponse),
});

const CLIENT_MESSAGE_KEYS = ["setup", "clientContent", "realtimeInput", "toolResponse"] as const;

/** A client message is a oneof: exactly one of the four top-level keys. */
export const ClientMessage = z
  .union([
    z.looseObject({ setup: Setup }),
    z.looseObject({ clientContent: ClientContent }),
    z.looseObject({ realtimeInput: RealtimeInput }),
    z.looseObject({ toolResponse: ToolResponseMessage }),
  ])
  .refine((msg) => CLIENT_MESSAGE_KEYS.filter((key) => key in msg).length === 1, {
    message: `exactly one of ${CLIENT_MESSAGE_KEYS.join(", ")}`,
  });

// ---------------------------------------------------------------------------
// Server → client
// ---------------------------------------------------------------------------

const Transcription = z.looseObject({
  /** Vertex sends an empty `outputTranscription: {}` first. */
  text: z.string().optional(),
  finished: z.boolean().optional(),
});

export const ServerContent = z.looseObject({
  modelTurn: Content.optional(),
  turnComplete: z.boolean().optional(),
  interrupted: z.boolean().optional(),
  generationComplete: z.boolean().optional(),
  groundingMetadata: z.looseObject({}).optional(),
  inputTranscription: Transcription.optional(),
  outputTranscription: Transcription.optional(),
  interimInputTranscription: Transcription.optional(),
  urlContextMetadata: z.looseObject({}).optional(),
  /** MALFORMED_FUNCTION_CALL, RESPONSE_REJECTED, NEED_MORE_INPUT, … (open enum). */
  turnCompleteReason: z.string().optional(),
  waitingForInput: z.boolean().optional(),
  /** IN_PROGRESS | IDLE; sent alongside turnComplete. */
  interactionStatus: z.string().optional(),
});

const ToolCall = z.looseObject({
  functionCalls: z.array(FunctionCall).optional(),
});

const ToolCallCancellation = z.looseObject({
  ids: z.array(z.string()).optional(),
});

const GoAway = z.looseObject({
  timeLeft: Duration.optional(),
});

export const SessionResumptionUpdate = z.looseObject({
  newHandle: z.string().optional(),
  /** A boolean on the wire; one SDK test sends the string "true", so accept both. */
  resumable: z.union([z.boolean(), z.enum(["true", "false"])]).optional(),
  lastConsumedClientMessageIndex: Int64.optional(),
});

const ModalityTokenCount = z.looseObject({
  modality: z.string().optional(),
  tokenCount: z.number().int().optional(),
});

export const UsageMetadata = z.looseObject({
  promptTokenCount: z.number().int().optional(),
  cachedContentTokenCount: z.number().int().optional(),
  responseTokenCount: z.number().int().optional(),
  toolUsePromptTokenCount: z.number().int().optional(),
  thoughtsTokenCount: z.number().int().optional(),
  totalTokenCount: z.number().int().optional(),
  promptTokensDetails: z.array(ModalityTokenCount).optional(),
  responseTokensDetails: z.array(ModalityTokenCount).optional(),
});

const VoiceActivityDetectionSignal = z.looseObject({
  /** VAD_SIGNAL_TYPE_SOS (start of speech) | VAD_SIGNAL_TYPE_EOS | …UNSPECIFIED. */
  vadSignalType: z.string().optional(),
});

const VoiceActivity = z.looseObject({
  /** ACTIVITY_START | ACTIVITY_END | TYPE_UNSPECIFIED. */
  voiceActivityType: z.string().optional(),
  audioOffset: z.string().optional(),
});

/** The top-level keys a server message can carry; a frame with none of them is not Gemini. */
const SERVER_MESSAGE_KEYS = [
  "setupComplete",
  "serverContent",
  "toolCall",
  "toolCallCancellation",
  "goAway",
  "sessionResumptionUpdate",
  "usageMetadata",
  "voiceActivityDetectionSignal",
  "voiceActivity",
] as const;

/**
 * A server message: a oneof plus an optional `usageMetadata` beside it. Modelled as one
 * object with optional members so a frame combining e.g. `serverContent` and
 * `usageMetadata` parses in one go; the refinement rejects a frame with no known member.
 */
export const ServerMessage = z
  .looseObject({
    setupComplete: z.looseObject({ sessionId: z.string().optional() }).optional(),
    serverContent: ServerContent.optional(),
    toolCall: ToolCall.optional(),
    toolCallCancellation: ToolCallCancellation.optional(),
    goAway: GoAway.optional(),
    sessionResumptionUpdate: SessionResumptionUpdate.optional(),
    usageMetadata: UsageMetadata.optional(),
    voiceActivityDetectionSignal: VoiceActivityDetectionSignal.optional(),
    voiceActivity: VoiceActivity.optional(),
  })
  .refine((msg) => SERVER_MESSAGE_KEYS.some((key) => msg[key] !== undefined), {
    message: `no known server message field (expected one of ${SERVER_MESSAGE_KEYS.join(", ")})`,
  });

export type GeminiFunctionCall = z.infer<typeof FunctionCall>;
export type GeminiFunctionResponse = z.infer<typeof FunctionResponse>;
export type GeminiScheduling = z.infer<typeof Scheduling>;
export type GeminiPart = z.infer<typeof Part>;
export type GeminiContent = z.infer<typeof Content>;
export type GeminiBehavior = z.infer<typeof Behavior>;
export type GeminiFunctionDeclaration = z.infer<typeof FunctionDeclaration>;
export type GeminiSetup = z.infer<typeof Setup>;
export type GeminiClientContent = z.infer<typeof ClientContent>;
export type GeminiRealtimeInput = z.infer<typeof RealtimeInput>;
export type GeminiToolResponse = z.infer<typeof ToolResponseMessage>;
export type GeminiClientMessage = z.infer<typeof ClientMessage>;
export type GeminiServerContent = z.infer<typeof ServerContent>;
export type GeminiUsageMetadata = z.infer<typeof UsageMetadata>;
export type GeminiServerMessage = z.infer<typeof ServerMessage>;
