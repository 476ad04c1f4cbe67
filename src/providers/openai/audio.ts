/**
 * Clients stream 16 kHz PCM16 (PROTOCOL.md); OpenAI Realtime takes 24 kHz PCM16. Linear
 * interpolation, per chunk: good enough for speech recognition, no state between chunks
 * (a chunk boundary repeats at most one sample's worth of error).
 */
export function resample16kTo24k(pcm: Uint8Array): Uint8Array {
  const input = new DataView(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const n = Math.floor(pcm.byteLength / 2);
  const outLength = Math.floor((n * 3) / 2);
  const out = new Uint8Array(outLength * 2);
  const output = new DataView(out.buffer);
  for (let i = 0; i < outLength; i++) {
    const at = (i * 2) / 3;
    const j = Math.floor(at);
    const frac = at - j;
    const a = input.getInt16(j * 2, true);
    const b = j + 1 < n ? input.getInt16((j + 1) * 2, true) : a;
    output.setInt16(i * 2, Math.round(a + (b - a) * frac), true);
  }
  return out;
}
