/** Gemini Live provider: wire schemas, codec, capabilities and the adapter. */
export { base64ToBytes, bytesToBase64 } from "../base64.js";
export { GeminiLiveAdapter, type GeminiLiveAdapterOptions } from "./adapter.js";
export {
  bareModelId,
  capabilitiesFor,
  DEFAULT_GEMINI_LIVE_URL,
  geminiUrl,
  isVertexEndpoint,
  modelFamily,
  redactGeminiUrl,
} from "./capabilities.js";
export { type CloseClass, classifyClose } from "./close-codes.js";
export {
  createDecoderState,
  type DecodeError,
  type DecodeResult,
  type DecoderState,
  decodeServerFrame,
} from "./decode.js";
export { durationToMs } from "./duration.js";
export {
  encodeCommand,
  encodeRebuiltContext,
  encodeSetup,
  type GeminiSetupOptions,
  INPUT_AUDIO_MIME,
  modelResource,
  schedulingEnum,
} from "./encode.js";
export * from "./schemas.js";
export {
  declareFunction,
  type GeminiToolSpec,
  type JsonSchemaObject,
  sanitizeJsonSchema,
  toolDeclaration,
  toolParameters,
} from "./tool-declaration.js";
