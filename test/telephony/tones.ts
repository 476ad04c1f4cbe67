/**
 * Tone measurement for the audio tests: sines to feed in, and a single-bin DFT to read how
 * strong a frequency is in what comes out. Signals are cut to whole cycles of the tones they
 * are measured at, so a bin sees no leakage from its own tone.
 */

/** `count` samples of a sine of `amplitude` at `hz`, sampled at `rate`. */
export function sine(hz: number, rate: number, count: number, amplitude = 10_000): Int16Array {
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return samples;
}

/** The amplitude of the component at `hz` (the DFT at that frequency, scaled to a sine's peak). */
export function toneAmplitude(samples: ArrayLike<number>, hz: number, rate: number): number {
  let re = 0;
  let im = 0;
  const step = (2 * Math.PI * hz) / rate;
  for (let i = 0; i < samples.length; i++) {
    re += samples[i]! * Math.cos(step * i);
    im -= samples[i]! * Math.sin(step * i);
  }
  return (2 * Math.hypot(re, im)) / samples.length;
}

/** The amplitude at each DFT bin from `fromHz` up to `toHz`, with the bins' frequencies. */
export function spectrum(
  samples: ArrayLike<number>,
  rate: number,
  fromHz: number,
  toHz: number,
): { hz: number; amplitude: number }[] {
  const binHz = rate / samples.length;
  const bins: { hz: number; amplitude: number }[] = [];
  for (let bin = Math.ceil(fromHz / binHz); bin * binHz <= toHz; bin++) {
    bins.push({ hz: bin * binHz, amplitude: toneAmplitude(samples, bin * binHz, rate) });
  }
  return bins;
}

/** How far `amplitude` is below `reference`, in dB (positive when quieter). */
export function dbBelow(reference: number, amplitude: number): number {
  return 20 * Math.log10(reference / Math.max(amplitude, 1e-9));
}
