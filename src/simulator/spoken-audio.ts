import { pcm16ToMulaw } from "../audio/g711.js";
import { pcm16ToBytes } from "../audio/pcm.js";
import { bytesToBase64 } from "../providers/base64.js";

/** `ms` of a quiet 220 Hz tone at `rate` (deterministic); the GPT-Live face encodes it per session format. */
export function tone(ms: number, rate: number): Int16Array {
  const samples = Math.round((ms * rate) / 1000);
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++)
    pcm[i] = Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / rate));
  return pcm;
}

/**
 * What the simulated model says, as audio: `ms` of 24 kHz PCM16 LE, base64, a quiet 220 Hz
 * tone (deterministic) — as long as the words take to say, and not silence, so that a
 * client (or a phone line) can tell it heard the reply.
 */
export function spokenAudio(ms: number): string {
  return bytesToBase64(pcm16ToBytes(tone(ms, 24000)));
}

/** The same tone as G.711 μ-law at 8 kHz (a session whose output format is audio/pcmu). */
export function spokenMulaw(ms: number): string {
  return bytesToBase64(pcm16ToMulaw(tone(ms, 8000)));
}
