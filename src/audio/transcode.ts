/**
 * Streaming converters of PCM16 bytes: between a phone line's audio (G.711 μ-law, 8 kHz) and
 * the PCM16 the protocol's clients speak (16 kHz in, 24 kHz out), and from one PCM rate to
 * another (the clients' 16 kHz to the 24 kHz OpenAI takes; GPT-Live's 16 kHz voice to the
 * clients' 24 kHz). Each keeps its resampler's history, so a stream converted chunk by chunk
 * sounds as if converted whole. One per stream and direction.
 */
import { mulawToPcm16, pcm16ToMulaw } from "./g711.js";
import { pcm16FromBytes, pcm16ToBytes } from "./pcm.js";
import { createResampler, type SampleRate } from "./resample.js";

/** μ-law 8 kHz → PCM16 bytes at `rate`. */
export function mulawDecoder(rate: SampleRate): (mulaw: Uint8Array) => Uint8Array {
  const resampler = createResampler(8000, rate);
  return (mulaw) => pcm16ToBytes(resampler.push(mulawToPcm16(mulaw)));
}

/** PCM16 bytes at `rate` → μ-law 8 kHz. */
export function mulawEncoder(rate: SampleRate): (pcm: Uint8Array) => Uint8Array {
  const resampler = createResampler(rate, 8000);
  return (pcm) => pcm16ToMulaw(resampler.push(pcm16FromBytes(pcm)));
}

/** PCM16 bytes at `from` → PCM16 bytes at `to` (an odd trailing byte is ignored). */
export function pcmResampler(from: SampleRate, to: SampleRate): (pcm: Uint8Array) => Uint8Array {
  const resampler = createResampler(from, to);
  return (pcm) => pcm16ToBytes(resampler.push(pcm16FromBytes(pcm)));
}
