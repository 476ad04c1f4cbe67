/**
 * A session's audio recording as it is built: two tracks on the session's own timeline (sample
 * 0 is the session's start, as the timeline's `ms` 0 is), cut into parts of a fixed length.
 * Audio is mixed into the part it falls in; a part is taken (to be written) once the session's
 * clock has passed it, and nothing is placed in a taken part afterwards. Parts no audio fell in
 * are never made: an absent part is silence.
 *
 * Pure: the caller says what to place where, and when a part may be taken.
 */

/** What the session heard (its clients, mixed) and what it said (the model's audio sent). */
export const HEARD = 0;
export const SAID = 1;
export type Track = typeof HEARD | typeof SAID;
export const TRACKS = 2;

/** One part of the recording: its index (part i covers samples [i·n, (i+1)·n)), PCM16 LE stereo. */
export interface RecordedPart {
  index: number;
  bytes: Uint8Array;
}

export class AudioTimeline {
  /** Samples per part, per track. */
  readonly partSamples: number;
  /** Open parts by index, each its samples interleaved by track. */
  private readonly parts = new Map<number, Int16Array>();
  /** Parts before this one were taken (or precede this recording's start). */
  private firstOpen: number;
  /** Where the furthest sample placed ends (the last part is cut there). */
  private furthest = 0;
  /** Ranges of a track that stay silent, whatever is placed there later: [track, from, to). */
  private silenced: [Track, number, number][] = [];
  /** Samples that fell in a part already taken (not recorded). */
  lateSamples = 0;

  constructor(
    readonly rate: number,
    partMs: number,
    /** The first sample this recording may place (a restarted object starts where it is). */
    startSample = 0,
  ) {
    this.partSamples = Math.max(1, Math.round((rate * partMs) / 1000));
    this.firstOpen = Math.floor(startSample / this.partSamples);
  }

  /** Mixes `samples` into `track` from sample `start` on (added, clamped to 16 bits). */
  mix(track: Track, start: number, samples: Int16Array): void {
    const n = this.partSamples;
    let at = Math.max(0, Math.round(start));
    let from = at - Math.round(start);
    while (from < samples.length) {
      const index = Math.floor(at / n);
      const offset = at - index * n;
      const count = Math.min(samples.length - from, n - offset);
      if (index < this.firstOpen) {
        this.lateSamples += count;
      } else {
        const part = this.partAt(index);
        for (let i = 0; i < count; i++) {
          const j = (offset + i) * TRACKS + track;
          // Int16Array stores modulo 2^16: a sum past the range is clamped, not wrapped.
          part[j] = Math.max(-32768, Math.min(32767, part[j]! + samples[from + i]!));
        }
        this.furthest = Math.max(this.furthest, at + count);
      }
      at += count;
      from += count;
    }
    this.applySilences(track, Math.round(start), Math.round(start) + samples.length);
  }

  /** `track` is silent over [from, to): what is there now, and what is placed there later. */
  silence(track: Track, from: number, to: number): void {
    if (to <= from) return;
    this.silenced.push([track, Math.max(0, Math.round(from)), Math.round(to)]);
    this.zero(track, Math.max(0, Math.round(from)), Math.round(to));
  }

  /** Clears `track` from `from` to where anything was placed (a reply cut: it was never heard). */
  clearFrom(track: Track, from: number): void {
    this.zero(track, Math.max(0, Math.round(from)), this.furthest);
  }

  /** The parts wholly before sample `before`, in order; nothing is placed in them afterwards. */
  takeBefore(before: number): RecordedPart[] {
    const last = Math.floor(before / this.partSamples) - 1;
    return this.take(last, false);
  }

  /** Every part still open, the last cut where its audio ends (the recording is over). */
  takeAll(): RecordedPart[] {
    return this.take(Number.POSITIVE_INFINITY, true);
  }

  /** Whether any part is open (something placed and not yet taken). */
  get pending(): boolean {
    return this.parts.size > 0;
  }

  private take(last: number, trimLast: boolean): RecordedPart[] {
    const indexes = [...this.parts.keys()].filter((i) => i <= last).sort((a, b) => a - b);
    const out: RecordedPart[] = [];
    for (const index of indexes) {
      let samples = this.parts.get(index)!;
      this.parts.delete(index);
      if (trimLast && this.parts.size === 0) {
        const end = Math.min(this.partSamples, this.furthest - index * this.partSamples);
        samples = samples.subarray(0, Math.max(0, end) * TRACKS);
      }
      out.push({
        index,
        bytes: new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength),
      });
    }
    if (Number.isFinite(last)) this.firstOpen = Math.max(this.firstOpen, last + 1);
    else if (indexes.length > 0) this.firstOpen = indexes[indexes.length - 1]! + 1;
    const firstSample = this.firstOpen * this.partSamples;
    this.silenced = this.silenced.filter(([, , to]) => to > firstSample);
    return out;
  }

  private partAt(index: number): Int16Array {
    let part = this.parts.get(index);
    if (part === undefined) {
      part = new Int16Array(this.partSamples * TRACKS);
      this.parts.set(index, part);
    }
    return part;
  }

  private applySilences(track: Track, from: number, to: number): void {
    for (const [t, a, b] of this.silenced)
      if (t === track && a < to && b > from) this.zero(track, Math.max(a, from), Math.min(b, to));
  }

  private zero(track: Track, from: number, to: number): void {
    const n = this.partSamples;
    for (let at = from; at < to; ) {
      const index = Math.floor(at / n);
      const offset = at - index * n;
      const count = Math.min(to - at, n - offset);
      const part = this.parts.get(index);
      if (part !== undefined)
        for (let i = 0; i < count; i++) part[(offset + i) * TRACKS + track] = 0;
      at += count;
    }
  }
}
