/**
 * G.711 μ-law and A-law against the standard's tables (Sun's g711.c, the ITU reference): the
 * codes' values, every PCM16 value's error within its segment, every code surviving a round
 * trip, and the tables between the two laws.
 */
import { describe, expect, it } from "vitest";
import {
  alawToMulaw,
  alawToPcm16,
  mulawToAlaw,
  mulawToPcm16,
  pcm16ToAlaw,
  pcm16ToMulaw,
} from "../../src/telephony/audio/g711.js";

const decode = (code: number) => mulawToPcm16(Uint8Array.of(code))[0]!;
const encode = (pcm: number) => pcm16ToMulaw(Int16Array.of(pcm))[0]!;
/** A code's segment (its exponent): the wire inverts every bit. */
const segmentOf = (code: number) => (~code >> 4) & 7;

describe("μ-law code points", () => {
  it("decodes codes to the values in G.711's table", () => {
    // [code, PCM16]: both zeros, both ends, a segment's edges, the smallest steps.
    const table: [number, number][] = [
      [0xff, 0],
      [0x7f, 0],
      [0x80, 32124],
      [0x00, -32124],
      [0x81, 31100],
      [0x01, -31100],
      [0x8f, 16764],
      [0x10, -15996],
      [0xf0, 120],
      [0xef, 132],
      [0x70, -120],
      [0xfe, 8],
      [0x7e, -8],
    ];
    for (const [code, pcm] of table) expect([code, decode(code)]).toEqual([code, pcm]);
  });

  it("encodes zero as 0xFF and the extremes as the top codes", () => {
    expect(encode(0)).toBe(0xff);
    expect(encode(32767)).toBe(0x80);
    expect(encode(-32768)).toBe(0x00);
    expect(encode(32124)).toBe(0x80);
    expect(encode(-32124)).toBe(0x00);
    expect(encode(8)).toBe(0xfe);
    expect(encode(-8)).toBe(0x7e);
  });
});

describe("μ-law round trips", () => {
  it("brings every PCM16 value back within half its segment's step (plus the 2 bits G.711 drops)", () => {
    const pcm = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const codes = pcm16ToMulaw(pcm);
    const back = mulawToPcm16(codes);
    const over: number[] = [];
    for (let i = 0; i < pcm.length; i++) {
      const step = 8 << segmentOf(codes[i]!);
      const error = Math.abs(back[i]! - pcm[i]!);
      // Beyond the top code's step (|x| > 32124 + 512) the encoder clips: the error grows
      // there but stays within one step.
      const clipped = Math.abs(pcm[i]!) > 32124 + step / 2;
      if (error > (clipped ? step : step / 2 + 3)) over.push(pcm[i]!);
    }
    expect(over).toEqual([]);
  });

  it("keeps every code through decode then encode, but −0 (0x7F), which becomes +0 (0xFF)", () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const again = pcm16ToMulaw(mulawToPcm16(codes));
    const changed = [...codes].filter((code) => again[code] !== code);
    expect(changed).toEqual([0x7f]);
    expect(again[0x7f]).toBe(0xff);
  });

  it("is monotonic: a larger code in the positive (or negative) half is a larger magnitude", () => {
    for (let code = 0x80; code < 0xff; code++)
      expect(decode(code)).toBeGreaterThan(decode(code + 1));
    for (let code = 0x00; code < 0x7f; code++) expect(decode(code)).toBeLessThan(decode(code + 1));
  });
});

const decodeA = (code: number) => alawToPcm16(Uint8Array.of(code))[0]!;
const encodeA = (pcm: number) => pcm16ToAlaw(Int16Array.of(pcm))[0]!;
/** An A-law code's segment: the wire inverts the even bits. */
const segmentOfA = (code: number) => ((code ^ 0x55) >> 4) & 7;

describe("A-law code points", () => {
  it("decodes codes to the values in G.711's table", () => {
    // [code, PCM16]: the two smallest, both ends, the segments' first steps.
    const table: [number, number][] = [
      [0xd5, 8],
      [0x55, -8],
      [0xd4, 24],
      [0xaa, 32256],
      [0x2a, -32256],
      [0xc5, 264],
      [0xf5, 528],
      [0x80, 5504],
      [0x00, -5504],
    ];
    for (const [code, pcm] of table) expect([code, decodeA(code)]).toEqual([code, pcm]);
  });

  it("encodes zero as 0xD5, −1 as 0x55 and the extremes as the top codes", () => {
    expect(encodeA(0)).toBe(0xd5);
    expect(encodeA(-1)).toBe(0x55);
    expect(encodeA(32767)).toBe(0xaa);
    expect(encodeA(-32768)).toBe(0x2a);
  });
});

describe("A-law round trips", () => {
  it("brings every PCM16 value back within half its segment's step (plus the 3 bits G.711 drops)", () => {
    const pcm = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
    const codes = pcm16ToAlaw(pcm);
    const back = alawToPcm16(codes);
    const over: number[] = [];
    for (let i = 0; i < pcm.length; i++) {
      const segment = segmentOfA(codes[i]!);
      const step = segment < 2 ? 32 : 16 << segment;
      const error = Math.abs(back[i]! - pcm[i]!);
      // Past the top code (|x| > 32256 + a half step) the encoder clips, within one step.
      const clipped = Math.abs(pcm[i]!) > 32256 + step / 2;
      if (error > (clipped ? step : step / 2 + 8)) over.push(pcm[i]!);
    }
    expect(over).toEqual([]);
  });

  it("keeps every code through decode then encode", () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect([...pcm16ToAlaw(alawToPcm16(codes))]).toEqual([...codes]);
  });
});

describe("between the laws", () => {
  const codes = Uint8Array.from({ length: 256 }, (_, i) => i);

  it("maps each A-law code to the μ-law code of its value, and back", () => {
    expect([...alawToMulaw(codes)]).toEqual([...pcm16ToMulaw(alawToPcm16(codes))]);
    expect([...mulawToAlaw(codes)]).toEqual([...pcm16ToAlaw(mulawToPcm16(codes))]);
  });

  it("loses at most one step of the coarser law (A-law's small values have finer steps)", () => {
    const a = alawToPcm16(codes);
    const viaMulaw = mulawToPcm16(alawToMulaw(codes));
    for (let i = 0; i < 256; i++) {
      const step = Math.max(
        16 << Math.max(1, segmentOfA(i)),
        8 << ((~alawToMulaw(codes)[i]! >> 4) & 7),
      );
      expect(Math.abs(viaMulaw[i]! - a[i]!), `code ${i}`).toBeLessThanOrEqual(step);
    }
  });

  it("is no identity: the same bytes read by the other law are another signal", () => {
    // μ-law silence (0xFF) read as A-law is a constant 848: what a line declared wrong sounds like.
    expect(decodeA(0xff)).toBe(848);
    expect(decode(0xd5)).toBe(716);
  });
});
