/**
 * ITU-T G.711 μ-law and A-law, as in Sun's g711.c (the reference most telephony stacks copy): 16-bit
 * PCM is cut to 14 bits, biased by 33, and coded as sign, a 3-bit segment (the exponent)
 * and a 4-bit step within it; every bit of the code is inverted on the wire. Decoding puts a
 * value at the middle of its step. Both directions go through tables built once at load, so a
 * sample costs one lookup (this runs on every phone call's audio).
 *
 * Zero has two codes: 0xFF (+0) and 0x7F (−0). Both decode to 0 and 0 encodes to 0xFF, so
 * 0x7F is the one code that does not survive decode then encode. No zero-code trap (some
 * encoders avoid 0x00; G.711 itself does not).
 *
 * A-law (Europe's trunks, and many elsewhere): 16-bit PCM is cut to 13 bits and coded as sign,
 * a 3-bit segment and a 4-bit step, with no bias; segments 0 and 1 share one step size (the
 * linear part near zero). The sign bit is set for positive values, and the even bits are
 * inverted on the wire (XOR 0x55). A-law has no code for zero: 0 encodes to 0xD5 (+8 after
 * decoding) and -1 to 0x55 (-8).
 *
 * A line may carry either, and a model may take μ-law itself: `alawToMulaw` and
 * `mulawToAlaw` go between them through one table each (decode, then encode).
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

/** A-law: 13-bit magnitudes below these end segments 0…7 (Sun's seg_aend). */
const ALAW_SEGMENT_ENDS = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

/** One PCM16 sample to its A-law code (Sun's linear2alaw). */
function encodeAlawSample(pcm: number): number {
  let value = pcm >> 3;
  let mask = 0xd5;
  if (value < 0) {
    mask = 0x55;
    value = -value - 1;
  }
  let segment = 0;
  while (segment < 8 && value > ALAW_SEGMENT_ENDS[segment]!) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const step = segment < 2 ? (value >> 1) & 0x0f : (value >> segment) & 0x0f;
  return ((segment << 4) | step) ^ mask;
}

/** One A-law code to PCM16 (Sun's alaw2linear). */
function decodeAlawSample(code: number): number {
  const value = code ^ 0x55;
  const segment = (value & 0x70) >> 4;
  let magnitude = (value & 0x0f) << 4;
  if (segment === 0) magnitude += 8;
  else magnitude = (magnitude + 0x108) << (segment - 1);
  return value & 0x80 ? magnitude : -magnitude;
}

const ALAW_DECODE = Int16Array.from({ length: 256 }, (_, code) => decodeAlawSample(code));

/** (PCM16 >> 3) + 4096 → A-law code: the encoder only ever looks at the top 13 bits. */
const ALAW_ENCODE = Uint8Array.from({ length: 8192 }, (_, i) => encodeAlawSample((i - 4096) << 3));

const ALAW_TO_MULAW = Uint8Array.from(
  { length: 256 },
  (_, a) => ENCODE[(ALAW_DECODE[a]! >> 2) + 8192]!,
);
const MULAW_TO_ALAW = Uint8Array.from(
  { length: 256 },
  (_, u) => ALAW_ENCODE[(DECODE[u]! >> 3) + 4096]!,
);

export function alawToPcm16(alaw: Uint8Array): Int16Array {
  const pcm = new Int16Array(alaw.length);
  for (let i = 0; i < alaw.length; i++) pcm[i] = ALAW_DECODE[alaw[i]!]!;
  return pcm;
}

export function pcm16ToAlaw(pcm: Int16Array): Uint8Array {
  const alaw = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) alaw[i] = ALAW_ENCODE[(pcm[i]! >> 3) + 4096]!;
  return alaw;
}

/** A-law codes as the μ-law codes of the same values (one lookup a sample). */
export function alawToMulaw(alaw: Uint8Array): Uint8Array {
  const mulaw = new Uint8Array(alaw.length);
  for (let i = 0; i < alaw.length; i++) mulaw[i] = ALAW_TO_MULAW[alaw[i]!]!;
  return mulaw;
}

/** μ-law codes as the A-law codes of the same values (one lookup a sample). */
export function mulawToAlaw(mulaw: Uint8Array): Uint8Array {
  const alaw = new Uint8Array(mulaw.length);
  for (let i = 0; i < mulaw.length; i++) alaw[i] = MULAW_TO_ALAW[mulaw[i]!]!;
  return alaw;
}
