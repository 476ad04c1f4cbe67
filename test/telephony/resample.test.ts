/**
 * The resamplers filter: a tone in the band keeps its level and frequency, a tone above the
 * new Nyquist is removed before decimation (naive decimation, the control, folds it into the
 * band at full level), upsampling leaves little image energy. And they stream: any split of
 * the input gives the same samples, with ⌊N·to/from⌋ out after N in.
 */
import { describe, expect, it } from "vitest";
import { createResampler, type SampleRate } from "../../src/telephony/audio/resample.js";
import { dbBelow, sine, spectrum, toneAmplitude } from "./tones.js";

const PAIRS: [SampleRate, SampleRate][] = [
  [24000, 8000],
  [16000, 8000],
  [8000, 16000],
  [8000, 24000],
  [16000, 24000],
  [24000, 16000],
];

/** The input resampled in one push, with the first `settle` output samples (the filter filling) dropped. */
function resampled(
  from: SampleRate,
  to: SampleRate,
  input: Int16Array,
  settle: number,
): Int16Array {
  return createResampler(from, to).push(input).subarray(settle);
}

/** A deterministic noise signal (a linear congruential generator). */
function noise(count: number, seed = 1): Int16Array {
  let state = seed;
  return Int16Array.from({ length: count }, () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return (state % 40001) - 20000;
  });
}

describe("24 kHz → 8 kHz: anti-aliasing", () => {
  it("keeps a 1 kHz tone's level (within 1 dB) and frequency", () => {
    const out = resampled(24000, 8000, sine(1000, 24000, 24000), 400);
    const measured = out.subarray(0, 1600);
    expect(Math.abs(dbBelow(10_000, toneAmplitude(measured, 1000, 8000)))).toBeLessThan(1);
    const peak = spectrum(measured, 8000, 0, 4000).reduce((a, b) =>
      b.amplitude > a.amplitude ? b : a,
    );
    expect(peak.hz).toBe(1000);
  });

  it("removes a 5 kHz tone (≥ 30 dB down where it would alias, at 3 kHz); naive decimation does not", () => {
    const input = sine(5000, 24000, 24000);
    const filtered = resampled(24000, 8000, input, 400).subarray(0, 1600);
    const filteredDb = dbBelow(10_000, toneAmplitude(filtered, 3000, 8000));
    expect(filteredDb).toBeGreaterThanOrEqual(30);
    // The control: every third sample, no filter. 5 kHz folds to 3 kHz at full level.
    const naive = input.filter((_, i) => i % 3 === 0).subarray(400, 2000);
    const naiveDb = dbBelow(10_000, toneAmplitude(naive, 3000, 8000));
    expect(naiveDb).toBeLessThan(1);
    expect(naiveDb).toBeLessThan(30);
  });

  it("removes everything between 4.2 and 12 kHz by at least 30 dB", () => {
    for (let hz = 4200; hz < 12000; hz += 400) {
      const out = resampled(24000, 8000, sine(hz, 24000, 24000), 400).subarray(0, 1600);
      const aliasHz = Math.abs(((hz + 4000) % 8000) - 4000);
      expect([hz, dbBelow(10_000, toneAmplitude(out, aliasHz, 8000))]).toSatisfy(
        ([, db]: number[]) => db! >= 30,
      );
    }
  });
});

describe("16 kHz → 8 kHz: anti-aliasing", () => {
  it("keeps 1 kHz and removes 5 kHz (aliasing to 3 kHz) by ≥ 30 dB; naive decimation does not", () => {
    const kept = resampled(16000, 8000, sine(1000, 16000, 16000), 400).subarray(0, 1600);
    expect(Math.abs(dbBelow(10_000, toneAmplitude(kept, 1000, 8000)))).toBeLessThan(1);
    const input = sine(5000, 16000, 16000);
    const removed = resampled(16000, 8000, input, 400).subarray(0, 1600);
    expect(dbBelow(10_000, toneAmplitude(removed, 3000, 8000))).toBeGreaterThanOrEqual(30);
    const naive = input.filter((_, i) => i % 2 === 0).subarray(400, 2000);
    expect(dbBelow(10_000, toneAmplitude(naive, 3000, 8000))).toBeLessThan(30);
  });
});

describe("8 kHz → 16 kHz: interpolation", () => {
  it("keeps a 1 kHz tone's level and leaves ≥ 30 dB less energy above 4 kHz; sample repetition does not", () => {
    const input = sine(1000, 8000, 8000);
    const out = resampled(8000, 16000, input, 800).subarray(0, 3200);
    const level = toneAmplitude(out, 1000, 16000);
    expect(Math.abs(dbBelow(10_000, level))).toBeLessThan(1);
    expect(dbBelow(level, bandAmplitude(out, 16000, 4000, 8000))).toBeGreaterThanOrEqual(30);
    // The control: each sample twice (no filter). The 7 kHz image stays.
    const repeated = Int16Array.from({ length: input.length * 2 }, (_, i) => input[i >> 1]!);
    const control = repeated.subarray(800, 4000);
    expect(dbBelow(level, bandAmplitude(control, 16000, 4000, 8000))).toBeLessThan(30);
  });
});

describe("every rate pair", () => {
  it.each(PAIRS)(
    "%i → %i keeps a 1 kHz tone within 1 dB and images/aliases ≥ 30 dB down",
    (from, to) => {
      const out = resampled(from, to, sine(1000, from, from), to / 10);
      const measured = out.subarray(0, to / 5);
      const level = toneAmplitude(measured, 1000, to);
      expect(Math.abs(dbBelow(10_000, level))).toBeLessThan(1);
      // Everything else: the output's whole band but the tone's bin.
      const rest = spectrum(measured, to, 0, to / 2).filter((bin) => bin.hz !== 1000);
      const restAmplitude = Math.sqrt(rest.reduce((sum, bin) => sum + bin.amplitude ** 2, 0));
      expect(dbBelow(level, restAmplitude)).toBeGreaterThanOrEqual(30);
    },
  );
});

describe("streaming", () => {
  const input = noise(4801);

  it.each(PAIRS)("%i → %i gives the same samples however the input is split", (from, to) => {
    const whole = createResampler(from, to).push(input);
    for (const sizes of [[160], [37], [1], [3, 500, 7, 1, 2]]) {
      const resampler = createResampler(from, to);
      const parts: number[] = [];
      let at = 0;
      for (let i = 0; at < input.length; i++) {
        const size = sizes[i % sizes.length]!;
        parts.push(...resampler.push(input.subarray(at, at + size)));
        at += size;
      }
      expect(Int16Array.from(parts)).toEqual(whole);
    }
  });

  it.each(PAIRS)(
    "%i → %i has put out ⌊N·to/from⌋ samples after every push, N the inputs so far",
    (from, to) => {
      const resampler = createResampler(from, to);
      let inputs = 0;
      let outputs = 0;
      for (const size of [37, 1, 0, 160, 2, 3, 999, 5]) {
        outputs += resampler.push(input.subarray(0, size)).length;
        inputs += size;
        expect(outputs).toBe(Math.floor((inputs * to) / from));
      }
    },
  );

  it("clamps to the Int16 range instead of wrapping", () => {
    // A full-scale square wave overshoots (Gibbs) after filtering.
    const square = Int16Array.from({ length: 2400 }, (_, i) => (i % 24 < 12 ? 32767 : -32768));
    const out = createResampler(24000, 8000).push(square);
    expect(Math.max(...out)).toBe(32767);
    expect(Math.min(...out)).toBe(-32768);
  });

  it("passes audio through unchanged when the rates match", () => {
    const resampler = createResampler(16000, 16000);
    expect(resampler.push(input)).toEqual(input);
    expect(resampler.push(input.subarray(0, 37)).length).toBe(37);
  });
});

/** The combined amplitude of every DFT bin between two frequencies. */
function bandAmplitude(samples: Int16Array, rate: number, fromHz: number, toHz: number): number {
  const bins = spectrum(samples, rate, fromHz, toHz);
  return Math.sqrt(bins.reduce((sum, bin) => sum + bin.amplitude ** 2, 0));
}
