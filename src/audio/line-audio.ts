/**
 * A phone line's audio as its media stream declares it — G.711 μ-law or A-law at 8 kHz, or
 * linear PCM (16-bit little-endian) at 8 or 16 kHz — converted to and from the session's
 * audio: PCM16 (16 kHz in, 24 kHz out, as the protocol's clients speak), or μ-law 8 kHz both
 * ways where the model takes it itself (OpenAI's audio/pcmu). One converter per stream and
 * direction: each keeps its resampler's history, so a stream converted chunk by chunk sounds
 * as if converted whole.
 *
 * μ-law both ways is passed through untouched; A-law to a μ-law session is one table lookup
 * a sample (g711.ts), never through PCM and a resampler.
 */
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import {
  alawToMulaw,
  alawToPcm16,
  mulawToAlaw,
  mulawToPcm16,
  pcm16ToAlaw,
  pcm16ToMulaw,
} from "./g711.js";
import { pcm16FromBytes, pcm16ToBytes } from "./pcm.js";
import { createResampler, type Resampler } from "./resample.js";

/** The audio a line carries. */
export type LineCodec = { kind: "mulaw" } | { kind: "alaw" } | { kind: "l16"; rate: 8000 | 16000 };

export const MULAW_LINE: LineCodec = { kind: "mulaw" };
export const ALAW_LINE: LineCodec = { kind: "alaw" };

/** The line's sample rate. */
export function lineRate(codec: LineCodec): 8000 | 16000 {
  return codec.kind === "l16" ? codec.rate : 8000;
}

/** Bytes of the line's audio per millisecond. */
export function lineBytesPerMs(codec: LineCodec): number {
  return codec.kind === "l16" ? (codec.rate / 1000) * 2 : 8;
}

/** The byte silence is made of on the line (each law's code for zero; 0 for PCM). */
export function lineSilence(codec: LineCodec): number {
  switch (codec.kind) {
    case "mulaw":
      return 0xff;
    case "alaw":
      return 0xd5;
    case "l16":
      return 0;
    default: {
      const unreachable: never = codec;
      throw new Error(`unknown line codec ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The line's bytes as PCM16 at the line's rate (what the caller's loudness is read from). */
export function lineToPcm(codec: LineCodec, bytes: Uint8Array): Int16Array {
  switch (codec.kind) {
    case "mulaw":
      return mulawToPcm16(bytes);
    case "alaw":
      return alawToPcm16(bytes);
    case "l16":
      return pcm16FromBytes(bytes);
    default: {
      const unreachable: never = codec;
      throw new Error(`unknown line codec ${JSON.stringify(unreachable)}`);
    }
  }
}

/** PCM16 at the line's rate as the line's bytes. */
export function pcmToLine(codec: LineCodec, pcm: Int16Array): Uint8Array {
  switch (codec.kind) {
    case "mulaw":
      return pcm16ToMulaw(pcm);
    case "alaw":
      return pcm16ToAlaw(pcm);
    case "l16":
      return pcm16ToBytes(pcm);
    default: {
      const unreachable: never = codec;
      throw new Error(`unknown line codec ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The caller's audio: the session's bytes, and the line's samples (for its loudness). */
export interface CallerAudio {
  session: Uint8Array;
  pcm: Int16Array;
}

/** Line → session, for one stream. */
export class LineAudioIn {
  private readonly codec: LineCodec;
  private readonly session: AudioEncoding;
  private readonly resampler: Resampler | null;

  // No parameter properties: scripts run this file with Node's type stripping.
  constructor(codec: LineCodec, session: AudioEncoding) {
    this.codec = codec;
    this.session = session;
    const rate = lineRate(codec);
    this.resampler =
      session === "pcm16"
        ? createResampler(rate, 16000)
        : rate === 8000
          ? null
          : createResampler(rate, 8000);
  }

  push(bytes: Uint8Array): CallerAudio {
    const pcm = lineToPcm(this.codec, bytes);
    if (this.session === "g711_ulaw") {
      if (this.codec.kind === "mulaw") return { session: bytes, pcm };
      if (this.codec.kind === "alaw") return { session: alawToMulaw(bytes), pcm };
      return { session: pcm16ToMulaw(this.resample(pcm)), pcm };
    }
    return { session: pcm16ToBytes(this.resample(pcm)), pcm };
  }

  private resample(pcm: Int16Array): Int16Array {
    return this.resampler === null ? pcm : this.resampler.push(pcm);
  }
}

/** Session → line, for one stream; `reset` starts a new reply from silence. */
export class LineAudioOut {
  private readonly codec: LineCodec;
  private readonly session: AudioEncoding;
  private resampler: Resampler | null = null;

  constructor(codec: LineCodec, session: AudioEncoding) {
    this.codec = codec;
    this.session = session;
    this.reset();
  }

  /** A new reply: no filter history from the one before. */
  reset(): void {
    const rate = lineRate(this.codec);
    const from = this.session === "pcm16" ? 24000 : 8000;
    this.resampler = from === rate ? null : createResampler(from, rate);
  }

  push(audio: Uint8Array): Uint8Array {
    if (this.session === "g711_ulaw") {
      if (this.codec.kind === "mulaw") return audio;
      if (this.codec.kind === "alaw") return mulawToAlaw(audio);
      return pcm16ToBytes(this.resample(mulawToPcm16(audio)));
    }
    return pcmToLine(this.codec, this.resample(pcm16FromBytes(audio)));
  }

  private resample(pcm: Int16Array): Int16Array {
    return this.resampler === null ? pcm : this.resampler.push(pcm);
  }
}
