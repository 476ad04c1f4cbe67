/** The carrier stand-in: Twilio toward liveline, for tests and local runs (call-stand-in.ts). */
export {
  type CallIdentity,
  CallSetupError,
  type CarrierTransport,
  type PlaceCallOptions,
  type PlacedCall,
  TwilioCallStandIn,
  type TwilioCallStandInOptions,
  VOICE_WEBHOOK_PATH,
} from "./call-stand-in.js";
export { MULAW_BYTES_PER_MS, PlaybackBuffer, type PlaybackProgress } from "./playback.js";
export { fetcherTransport, webTransport } from "./transports.js";
export { readStreamAnswer, type StreamAnswer, TwimlAnswerError } from "./twiml-reader.js";
export { mulawFromWav, WavFormatError } from "./wav.js";
