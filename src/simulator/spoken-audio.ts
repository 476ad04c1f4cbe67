import { pcm16ToMulaw } from "../telephony/audio/g711.js";

/**
 * What the simulated model says, as audio: `ms` of 24 kHz PCM16 LE, base64, a quiet 220 Hz
 * tone (deterministic) — as long as the words take to say, and not silence, so that a
 * client (or a phone line) can tell it heard the reply.
 */
export function spokenAudio(ms: number): string {
  const samples = Math.round(ms * 24);
  const bytes = new Uint8Array(samples * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples; i++) {
    view.setInt16(i * 2, Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / 24000)), true);
  }
  let binary = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return btoa(binary);
}

/** The same tone as G.711 μ-law at 8 kHz (a session whose output format is audio/pcmu). */
export function spokenMulaw(ms: number): string {
  const samples = Math.round(ms * 8);
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++)
    pcm[i] = Math.round(2000 * Math.sin((2 * Math.PI * 220 * i) / 8000));
  const bytes = pcm16ToMulaw(pcm);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return btoa(binary);
}
