/**
 * ITU-T G.711 μ-law, as in Sun's g711.c (the reference most telephony stacks copy): 16-bit
 * PCM is cut to 14 bits, biased by 33, and coded as sign, a 3-bit segment (the exponent)
 * and a 4-bit step within it; every bit of the code is inverted on the wire. Decoding puts a
 * value at the middle of its step. Both directions go through tables built once at load, so a
 * sample costs one lookup (this runs on every phone call's audio).
 *
 * Zero has two codes: 0xFF (+0) and 0x7F (−0). Both decode to 0 and 0 encodes to 0xFF, so
 * 0x7F is the one code that does not survive decode then encode. No zero-code trap (some
 * encoders avoid 0x00; G.711 itself does not).
 */

/** μ-law bias in the 14-bit domain (0x84 >> 2): it makes the segments start at 33. */
const BIAS_14 = 33;
/** Largest 14-bit magnitude before biasing; anything above it clips to the top code. */
const CLIP_14 = 8159;

/** One PCM16 sample to its μ-law code (Sun's linear2ulaw). */
function encodeSample(pcm: number): number {
  let value = pcm >> 2;
  let mask = 0xff;
  if (value < 0) {
    value = -value;
    mask = 0x7f;
  }
  if (value > CLIP_14) value = CLIP_14;
  value += BIAS_14;
  // Segment s holds values below 64 << s: the position of the top bit, less 5, at least 0.
  const segment = Math.max(0, 26 - Math.clz32(value));
  if (segment >= 8) return 0x7f ^ mask;
  return ((segment << 4) | ((value >> (segment + 1)) & 0x0f)) ^ mask;
}

/** One μ-law code to PCM16 (Sun's ulaw2linear). */
function decodeSample(code: number): number {
  const inverted = ~code & 0xff;
  const magnitude = ((((inverted & 0x0f) << 3) + (BIAS_14 << 2)) << ((inverted & 0x70) >> 4)) - 132;
  return inverted & 0x80 ? -magnitude : magnitude;
}

/** Code → PCM16, all 256 codes. */
const DECODE = Int16Array.from({ length: 256 }, (_, code) => decodeSample(code));

/** (PCM16 >> 2) + 8192 → code: the encoder only ever looks at the top 14 bits. */
const ENCODE = Uint8Array.from({ length: 16384 }, (_, i) => encodeSample((i - 8192) << 2));

export function mulawToPcm16(mulaw: Uint8Array): Int16Array {
  const pcm = new Int16Array(mulaw.length);
  for (let i = 0; i < mulaw.length; i++) pcm[i] = DECODE[mulaw[i]!]!;
  return pcm;
}

export function pcm16ToMulaw(pcm: Int16Array): Uint8Array {
  const mulaw = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) mulaw[i] = ENCODE[(pcm[i]! >> 2) + 8192]!;
  return mulaw;
}
