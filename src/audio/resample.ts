/**
 * Streaming PCM16 resamplers between 8, 16 and 24 kHz (the phone line, the clients' audio in,
 * the models' audio out). Each is a rational L/M polyphase resampler: conceptually insert
 * L−1 zeros after every sample, low-pass at the upsampled rate (gain L, making up for the
 * zeros), keep every M-th sample. Only the kept samples are computed, and only with the taps
 * that meet non-zero inputs, so an output sample costs ⌈taps/L⌉ multiply-adds.
 *
 * The low-pass sits below the narrower of the two Nyquist frequencies: flat to 85% of it
 * (3.4 kHz for 8 kHz, the telephone band), 50 dB down from 105% of it (4.2 kHz). Going down,
 * that is the anti-aliasing filter (what folds in from 4–4.2 kHz lands at 3.8–4 kHz, above
 * the voice band); going up, it removes the images. 50 dB is below G.711's own
 * quantisation noise (about 38 dB SNR), so more taps would buy nothing audible.
 *
 * Streaming: the filter's history is kept between pushes (silence before the first), so any
 * split of a signal into chunks gives the same samples as one push. After pushes totalling
 * N input samples, exactly ⌊N·to/from⌋ samples have come out (no drift): a push returns
 * whatever that count grew by, which for chunks whose length is not a multiple of from/gcd
 * (e.g. 37 samples at 24→8 kHz) varies by one from push to push. The filter is causal, so the
 * output lags the input by its group delay: (taps−1)/2 samples at the upsampled rate, under
 * 2 ms for every pair here.
 */

import { designLowpass } from "./lowpass.js";

export type SampleRate = 8000 | 16000 | 24000;

export interface Resampler {
  /** The output these samples complete; see the header for how many. */
  push(samples: Int16Array): Int16Array;
}

/**
 * How well a resampler filters: `line` (the default) as above, for the audio a caller or a
 * model hears; `review`, for audio only kept to be listened to later (a recording): flat to
 * 75 % of the narrower Nyquist frequency, 35 dB down from 115 %, a third of the taps (an
 * output sample costs 15 multiply-adds from 24 to 16 kHz, against 45).
 */
export type ResampleQuality = "line" | "review";

const FILTERS: Record<
  ResampleQuality,
  { passband: number; stopband: number; attenuationDb: number }
> = {
  // Flat to 85 % of the narrower Nyquist frequency (3.4 kHz of 4), fully down from 105 % (4.2).
  line: { passband: 0.85, stopband: 1.05, attenuationDb: 50 },
  review: { passband: 0.75, stopband: 1.15, attenuationDb: 35 },
};

/**
 * One rate pair's filter, split by phase: phase p's taps are the prototype's p, p+L, p+2L, …
 * times L, stored newest-input-last so the inner loop walks input and taps forward together.
 */
interface Polyphase {
  up: number;
  down: number;
  tapsPerPhase: number;
  /** `up` phases of `tapsPerPhase` taps each, back to back. */
  taps: Float64Array;
}

/** Designed once per (from, to, quality), on first use. */
const designs = new Map<string, Polyphase>();

function polyphaseFor(from: SampleRate, to: SampleRate, quality: ResampleQuality): Polyphase {
  const key = `${from}>${to}:${quality}`;
  const known = designs.get(key);
  if (known) return known;
  const divisor = gcd(from, to);
  const up = to / divisor;
  const down = from / divisor;
  const nyquist = Math.min(from, to) / 2;
  const filter = FILTERS[quality];
  const prototype = designLowpass({
    sampleRate: from * up,
    passbandHz: filter.passband * nyquist,
    stopbandHz: filter.stopband * nyquist,
    attenuationDb: filter.attenuationDb,
    lengthMultipleOf: up,
  });
  const tapsPerPhase = prototype.length / up;
  const taps = new Float64Array(prototype.length);
  for (let phase = 0; phase < up; phase++) {
    for (let k = 0; k < tapsPerPhase; k++) {
      // Tap k of a phase meets the input k samples back; stored reversed (oldest first).
      taps[phase * tapsPerPhase + (tapsPerPhase - 1 - k)] = up * prototype[phase + k * up]!;
    }
  }
  const design = { up, down, tapsPerPhase, taps };
  designs.set(key, design);
  return design;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

const PASS_THROUGH: Resampler = { push: (samples) => samples };

/** A resampler from one rate to another; `from === to` returns its input as it is. */
export function createResampler(
  from: SampleRate,
  to: SampleRate,
  quality: ResampleQuality = "line",
): Resampler {
  if (from === to) return PASS_THROUGH;
  return new PolyphaseResampler(polyphaseFor(from, to, quality));
}

class PolyphaseResampler implements Resampler {
  private readonly filter: Polyphase;
  /**
   * Input kept from earlier pushes, in front of the new samples. Enough for a full filter
   * span plus the `down` samples an output still owed from before may start behind.
   */
  private readonly historyLength: number;
  /** The history then the current push's samples; grown, never shrunk, so pushes reuse it. */
  private work: Float64Array;
  private inputCount = 0;
  private outputCount = 0;
  /** The next output's position at the upsampled rate: newest input index and phase. */
  private nextInput = 0;
  private nextPhase = 0;

  constructor(filter: Polyphase) {
    this.filter = filter;
    this.historyLength = filter.tapsPerPhase + filter.down;
    this.work = new Float64Array(this.historyLength + 480);
  }

  push(samples: Int16Array): Int16Array {
    const { up, down, tapsPerPhase, taps } = this.filter;
    const history = this.historyLength;
    const chunk = samples.length;
    if (this.work.length < history + chunk) {
      const grown = new Float64Array(history + chunk);
      grown.set(this.work.subarray(0, history));
      this.work = grown;
    }
    const work = this.work;
    for (let i = 0; i < chunk; i++) work[history + i] = samples[i]!;

    const inputTotal = this.inputCount + chunk;
    // Output n is complete once (n+1)·M ≤ inputs·L: ⌊inputs·L/M⌋ outputs over the stream.
    const outputTotal = Math.floor((inputTotal * up) / down);
    const output = new Int16Array(outputTotal - this.outputCount);
    // work[j] holds input index inputCount − history + j; output at input i reads i−K+1 … i.
    const offset = history - this.inputCount - tapsPerPhase + 1;
    let input = this.nextInput;
    let phase = this.nextPhase;
    for (let n = 0; n < output.length; n++) {
      const start = input + offset;
      const base = phase * tapsPerPhase;
      let sum = 0;
      for (let k = 0; k < tapsPerPhase; k++) sum += taps[base + k]! * work[start + k]!;
      output[n] = Math.min(32767, Math.max(-32768, Math.round(sum)));
      phase += down;
      while (phase >= up) {
        phase -= up;
        input++;
      }
    }
    this.nextInput = input;
    this.nextPhase = phase;
    this.outputCount = outputTotal;
    this.inputCount = inputTotal;
    // Keep the newest `history` inputs (zeros still, early on) at the front for the next push.
    work.copyWithin(0, chunk, chunk + history);
    return output;
  }
}
