import type { ServerFrame } from "./frames.js";

/**
 * One client of the session as the session sends to it: a socket that speaks liveline's
 * protocol, or a carrier's media stream (a phone call), which speaks the carrier's.
 */
export interface ClientLink {
  /** One frame; `json`: its encoding, where it has one (a durable frame is encoded once). */
  frame(frame: ServerFrame, json?: string): void;
  /** A replay: durable frames already encoded, in order. */
  replay(frames: readonly string[]): void;
  /** The model's speech: PCM16 24 kHz. */
  audio(pcm: Uint8Array): void;
  close(code: number, reason: string): void;
}
