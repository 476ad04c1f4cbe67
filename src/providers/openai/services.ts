/**
 * The OpenAI Realtime family: services that speak OpenAI Realtime's events at their own URL.
 * One adapter (./adapter.ts) speaks to all of them; what differs between them is this data,
 * side by side. Sources per service in docs/MODELS.md ("The OpenAI Realtime family").
 */
import type { ModelCapabilities } from "../../vocabulary/model.js";

/**
 * A response ends at a function call and nothing goes on until a `response.create`: calls
 * never block, a result sent with no `response.create` is taken quietly (silent), and one
 * with it prompts exactly one response. Nothing to ignore, so SILENT is honoured by design.
 */
export const OPENAI_CAPABILITIES: ModelCapabilities = {
  nonBlockingCalls: true,
  resultScheduling: true,
  turnCompleteWaitsForResults: false,
  silentHonoured: true,
  responsesOnRequest: true,
};

/**
 * How `session.update` is shaped:
 * - `ga`: OpenAI Realtime GA (`type: "realtime"`, `audio.input/output.format` objects,
 *   `output_modalities`, turn detection under `audio.input`);
 * - `xai`: xAI's (no `type`, `voice` and `turn_detection` at the top, `audio.input/output.format`
 *   objects that name any PCM rate, transcription as a `language_hint`);
 * - `flat`: the original Realtime shape Azure Voice Live keeps (`modalities`,
 *   `input_audio_format: "pcm16"`, `input_audio_sampling_rate`, `voice` as an object,
 *   `turn_detection` and `input_audio_transcription` at the top).
 */
export type SessionShape = "ga" | "xai" | "flat";

/**
 * The names of the server events: `ga` (`response.output_audio.delta`, …) or `beta`, the
 * original ones Voice Live keeps (`response.audio.delta`, `response.audio_transcript.delta`,
 * `response.text.delta`), read as their GA names.
 */
export type EventNames = "ga" | "beta";

export interface RealtimeService {
  /** The service's name in messages (never a setting's value). */
  readonly name: string;
  readonly sessionShape: SessionShape;
  readonly eventNames: EventNames;
  /** `session.update` names the model too (OpenAI); elsewhere only the URL does. */
  readonly modelInSession: boolean;
  /**
   * The PCM rate the service is told the client's audio has: 16000 (taken as clients send it)
   * or 24000 (resampled here first: OpenAI takes PCM at 24 kHz only).
   */
  readonly inputRate: 16000 | 24000;
  /** `conversation.item.truncate` exists: a barge-in cuts the model's context where heard. */
  readonly truncate: boolean;
  /** A session can ask for text only; where not, it always speaks (its transcript is its words). */
  readonly textOutput: boolean;
  readonly capabilities: ModelCapabilities;
}

/** OpenAI Realtime (GA): the reference the others are measured against. */
export const OPENAI_REALTIME: RealtimeService = {
  name: "OpenAI Realtime",
  sessionShape: "ga",
  eventNames: "ga",
  modelInSession: true,
  inputRate: 24000,
  truncate: true,
  textOutput: true,
  capabilities: OPENAI_CAPABILITIES,
};

/**
 * Azure OpenAI Realtime (GA, `/openai/v1/realtime`): OpenAI's wire, the deployment named in
 * the URL's `model` (assumed: not in `session.update`, where a model id would not name it).
 */
export const AZURE_OPENAI_REALTIME: RealtimeService = {
  ...OPENAI_REALTIME,
  name: "Azure OpenAI Realtime",
  modelInSession: false,
};

/**
 * xAI's Grok voice agent API: GA event names, its own session shape; PCM at any of 8–48 kHz
 * (so client audio goes as it is); no `conversation.item.truncate` among its client events;
 * it always speaks.
 */
export const XAI_REALTIME: RealtimeService = {
  name: "xAI Grok voice",
  sessionShape: "xai",
  eventNames: "ga",
  modelInSession: false,
  inputRate: 16000,
  truncate: false,
  textOutput: false,
  capabilities: OPENAI_CAPABILITIES,
};

/** Azure Voice Live: the original event names and flat session; PCM16 input at 16 kHz taken. */
export const AZURE_VOICE_LIVE: RealtimeService = {
  name: "Azure Voice Live",
  sessionShape: "flat",
  eventNames: "beta",
  modelInSession: false,
  inputRate: 16000,
  truncate: true,
  textOutput: true,
  capabilities: OPENAI_CAPABILITIES,
};
