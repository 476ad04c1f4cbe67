/**
 * The GPT-Live session's one audio format, both ways (`session.start` `audio.format`): PCM16
 * at 24 kHz (default) or 16 kHz, G.711 μ-law or A-law at 8 kHz. Input is decoded to PCM16 for
 * the energy detector; the model's speech is the simulator's tone in that format.
 */

import { mulawToPcm16, pcm16ToMulaw } from "../../audio/g711.js";
import { pcm16ToBytes } from "../../audio/pcm.js";
import { bytesToBase64 } from "../../providers/base64.js";
import { spokenAudio, tone } from "../spoken-audio.js";
import type { LiveAudioFormat } from "./strict-schemas.js";

/** Bytes of audio a millisecond in `format`. */
export function bytesPerMs(format: LiveAudioFormat): number {
  return format.type === "audio/pcm" ? (format.rate / 1000) * 2 : 8;
}

/** Input audio as little-endian PCM16 bytes at the format's rate (what vad.ts hears). */
export function toPcm16(format: LiveAudioFormat, bytes: Uint8Array): Uint8Array {
  switch (format.type) {
    case "audio/pcm":
      return bytes;
    case "audio/pcmu":
      return pcm16ToBytes(mulawToPcm16(bytes));
    case "audio/pcma":
      return pcm16ToBytes(alawToPcm16(bytes));
  }
}

/** `ms` of the model's speech in `format`, base64 (a sample at least: 0 ms still sounds). */
export function spoken(format: LiveAudioFormat, ms: number): string {
  const at = Math.max(ms, 1);
  switch (format.type) {
    case "audio/pcm":
      return format.rate === 24000 ? spokenAudio(at) : bytesToBase64(pcm16ToBytes(tone(at, 16000)));
    case "audio/pcmu":
      return bytesToBase64(pcm16ToMulaw(tone(at, 8000)));
    case "audio/pcma":
      return bytesToBase64(pcm16ToAlaw(tone(at, 8000)));
  }
}

/** G.711 A-law (Sun's g711.c alaw2linear): sign, 3-bit segment, 4-bit step, even bits inverted. */
function alawSample(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) t += 8;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}

/** Segment ends of A-law in the 13-bit domain (Sun's seg_aend). */
const SEG_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

/** One PCM16 sample to its A-law code (Sun's linear2alaw). */
function alawCode(pcm: number): number {
  let value = pcm >> 3;
  let mask = 0xd5;
  if (value < 0) {
    mask = 0x55;
    value = -value - 1;
  }
  const segment = SEG_END.findIndex((end) => value <= end);
  if (segment === -1) return 0x7f ^ mask;
  const step = segment < 2 ? (value >> 1) & 0x0f : (value >> segment) & 0x0f;
  return ((segment << 4) | step) ^ mask;
}

export function alawToPcm16(alaw: Uint8Array): Int16Array {
  return Int16Array.from(alaw, alawSample);
}

export function pcm16ToAlaw(pcm: Int16Array): Uint8Array {
  return Uint8Array.from(pcm, alawCode);
}
