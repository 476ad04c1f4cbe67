/**
 * A line's audio in time: it goes in frames of 20 ms (how every carrier sends the caller's,
 * the least they take back, Vonage's only size), the last padded with the codec's silence;
 * and, where a caller is spoken for (the carrier stand-ins), each frame once its 20 ms have
 * been spoken, against absolute due times (no drift).
 */
import { type LineCodec, lineBytesPerMs, lineSilence } from "./line-audio.js";

/** A frame's length. */
export const FRAME_MS = 20;

/** Bytes of a frame of the line's codec. */
export function frameBytes(codec: LineCodec): number {
  return FRAME_MS * lineBytesPerMs(codec);
}

/** `bytes` (a frame's worth at most) as a whole frame, the rest the line's silence. */
export function wholeFrame(codec: LineCodec, bytes: Uint8Array): Uint8Array {
  const frame = new Uint8Array(frameBytes(codec)).fill(lineSilence(codec));
  frame.set(bytes);
  return frame;
}

export interface FramedSend {
  /** Each frame when its 20 ms have been spoken (else all at once). */
  realTime: boolean;
  /** Milliseconds on a monotonic clock. */
  now: () => number;
  /** Nothing more is sent once this says so (the call hung up). */
  stopped: () => boolean;
  send: (frame: Uint8Array) => void;
}

/** `bytes` of the line's codec, sent as whole frames, paced as `realTime` says. */
export async function sendInFrames(
  codec: LineCodec,
  bytes: Uint8Array,
  { realTime, now, stopped, send }: FramedSend,
): Promise<void> {
  const size = frameBytes(codec);
  const t0 = now();
  for (let i = 0; i * size < bytes.length && !stopped(); i++) {
    if (realTime) {
      const wait = t0 + (i + 1) * FRAME_MS - now();
      if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait));
      if (stopped()) return;
    }
    send(wholeFrame(codec, bytes.subarray(i * size, (i + 1) * size)));
  }
}
