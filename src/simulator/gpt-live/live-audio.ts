/**
 * The GPT-Live session's one audio format, both ways (`session.start` `audio.format`): PCM16
 * at 24 kHz (default) or 16 kHz, G.711 μ-law or A-law at 8 kHz. Input is decoded to PCM16 for
 * the energy detector; the model's speech is the simulator's tone in that format.
 */

import { alawToPcm16, mulawToPcm16, pcm16ToAlaw, pcm16ToMulaw } from "../../audio/g711.js";
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
