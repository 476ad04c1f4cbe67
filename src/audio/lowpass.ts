/**
 * Low-pass FIR design: a windowed sinc with a Kaiser window, sized by Kaiser's formula for a
 * given stopband attenuation and transition width. The resamplers design one filter per rate
 * pair, once, and run it at the upsampled rate.
 */

export interface LowpassSpec {
  /** The rate the filter runs at, Hz. */
  sampleRate: number;
  /** The edge of the passband, Hz: flat up to here. */
  passbandHz: number;
  /** The edge of the stopband, Hz: at least `attenuationDb` down from here on. */
  stopbandHz: number;
  attenuationDb: number;
  /** The filter's length is rounded up to a multiple of this (a polyphase filter's phase count). */
  lengthMultipleOf: number;
}

/** The taps, their sum normalised to 1 (unity gain at DC). */
export function designLowpass(spec: LowpassSpec): Float64Array {
  const { sampleRate, passbandHz, stopbandHz, attenuationDb, lengthMultipleOf } = spec;
  const transition = (2 * Math.PI * (stopbandHz - passbandHz)) / sampleRate;
  const minimum = Math.ceil((attenuationDb - 7.95) / (2.285 * transition)) + 1;
  const length = Math.ceil(minimum / lengthMultipleOf) * lengthMultipleOf;
  const beta = kaiserBeta(attenuationDb);
  // The sinc's cutoff sits in the middle of the transition band (its −6 dB point).
  const cutoff = (passbandHz + stopbandHz) / 2 / sampleRate;
  const middle = (length - 1) / 2;
  const taps = new Float64Array(length);
  let sum = 0;
  for (let n = 0; n < length; n++) {
    const t = n - middle;
    const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
    const ratio = middle === 0 ? 0 : t / middle;
    const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - ratio * ratio))) / besselI0(beta);
    taps[n] = sinc * window;
    sum += sinc * window;
  }
  for (let n = 0; n < length; n++) taps[n] = taps[n]! / sum;
  return taps;
}

/** Kaiser's β for a stopband attenuation in dB. */
function kaiserBeta(attenuationDb: number): number {
  if (attenuationDb > 50) return 0.1102 * (attenuationDb - 8.7);
  if (attenuationDb >= 21)
    return 0.5842 * (attenuationDb - 21) ** 0.4 + 0.07886 * (attenuationDb - 21);
  return 0;
}

/** The modified Bessel function of the first kind, order 0, by its power series. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarterSquare = (x * x) / 4;
  for (let k = 1; term > sum * 1e-12; k++) {
    term *= quarterSquare / (k * k);
    sum += term;
  }
  return sum;
}
