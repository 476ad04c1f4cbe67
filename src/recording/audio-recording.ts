/**
 * What a session's audio recording makes of the audio as it passed: each chunk the session
 * heard or said, taken at the moment it passed (ms since the session's start, the timeline's
 * clock), decoded to PCM16 at the recording's rate and placed on its track (audio-timeline.ts):
 *
 * - **Heard** (a client's audio in): a client streams in real time, so its chunks follow each
 *   other, through a stall of up to MAX_LAG_MS; a chunk that comes after a longer pause ends
 *   where it came (it was spoken just before).
 *   A stream that ran ahead of the clock by more than a second (a client sending faster than
 *   real time) is placed where the clock is again. Clients are mixed.
 * - **Said** (the model's audio out, as sent to the clients): a model sends faster than real
 *   time, and a client plays it from when it comes, at its pace; so each chunk follows the
 *   last, never before the moment it was sent. A reply cut (a barge-in) was heard only up to
 *   the cut: what was placed after it is cleared.
 * - **Keys** typed to an agent that keeps them from the model (`keypad: "tools"`, a PIN): the
 *   heard track is silent from `KEY_SILENT_BEFORE_MS` before the key's stream position to
 *   `KEY_SILENT_AFTER_MS` after (a phone sends the key's tone in its audio, then the event).
 *
 * Pure: no clock, no I/O. The shell (session/audio-recorder.ts) feeds it and writes its parts.
 */
import { mulawToPcm16 } from "../audio/g711.js";
import { pcm16FromBytes } from "../audio/pcm.js";
import { createResampler, type Resampler, type SampleRate } from "../audio/resample.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import { AudioTimeline, HEARD, type RecordedPart, SAID } from "./audio-timeline.js";

/** A key's tone comes before its event: this much of the heard audio before it is silenced. */
export const KEY_SILENT_BEFORE_MS = 400;
/** …and this much after (a tone still sounding, or a carrier's late event). */
export const KEY_SILENT_AFTER_MS = 200;
/**
 * A heard stream this far ahead of the clock (a client sending faster than real time) is
 * placed at the clock again.
 */
const MAX_LEAD_MS = 5_000;
/**
 * A client's chunk that comes up to this late still follows the one before it: a stalled
 * network delivers what was said meanwhile late, then in a burst, and the stream stays whole
 * (no hole, no overlap). Later than this, it was a pause: the chunk ends when it came.
 */
const MAX_LAG_MS = 1_000;
/**
 * A part is taken once the clock is this far past its end: a key's silence reaches back
 * KEY_SILENT_BEFORE_MS, and a heard chunk that comes late still lands in its part.
 */
export const PART_CLOSE_SLACK_MS = 500;

export type AudioEvent =
  | { kind: "heard"; client: string; at: number; pcm: Uint8Array }
  | { kind: "said"; at: number; pcm: Uint8Array }
  /** The reply being said was cut at `at` (the clients were told `interrupted`). */
  | { kind: "cut"; at: number }
  /** A key typed on `client`'s line that the recording must not keep. */
  | { kind: "key"; client: string; at: number };

export interface RecordingFormat {
  /** How the session's audio is encoded both ways (its model connection's). */
  encoding: AudioEncoding;
  /** The recording's rate: 16 kHz, or a phone call's 8 kHz. */
  rate: 8000 | 16000;
}

export class AudioRecording {
  private readonly timeline: AudioTimeline;
  private readonly heardEnd = new Map<string, number>();
  private readonly heardDecoders = new Map<string, (bytes: Uint8Array) => Int16Array>();
  private readonly saidDecoder: (bytes: Uint8Array) => Int16Array;
  private saidEnd = 0;

  constructor(
    private readonly format: RecordingFormat,
    partMs: number,
    /** When this recording begins, in ms since the session's start (later after a restart). */
    startMs = 0,
  ) {
    this.timeline = new AudioTimeline(format.rate, partMs, this.sample(startMs));
    this.saidDecoder = decoder(format, "said");
    this.saidEnd = this.sample(startMs);
  }

  get rate(): number {
    return this.format.rate;
  }

  /** Places the events, in order. */
  take(events: readonly AudioEvent[]): void {
    for (const event of events) this.takeOne(event);
  }

  /** The parts the clock (`nowMs`) is past, by the slack: nothing more can fall in them. */
  closedParts(nowMs: number): RecordedPart[] {
    return this.timeline.takeBefore(this.sample(nowMs - PART_CLOSE_SLACK_MS));
  }

  /** Every part still open (the recording ends). */
  remainingParts(): RecordedPart[] {
    return this.timeline.takeAll();
  }

  get pending(): boolean {
    return this.timeline.pending;
  }

  /** Samples lost because they fell in a part already written. */
  get lateSamples(): number {
    return this.timeline.lateSamples;
  }

  private takeOne(event: AudioEvent): void {
    const at = this.sample(event.at);
    switch (event.kind) {
      case "heard": {
        const samples = this.heardDecoder(event.client)(event.pcm);
        const end = this.heardEnd.get(event.client);
        const after = at - samples.length;
        let start = end === undefined || end < after - this.sample(MAX_LAG_MS) ? after : end;
        if (start > at + this.sample(MAX_LEAD_MS)) start = at - samples.length;
        this.timeline.mix(HEARD, start, samples);
        this.heardEnd.set(event.client, start + samples.length);
        return;
      }
      case "said": {
        const samples = this.saidDecoder(event.pcm);
        const start = Math.max(this.saidEnd, at);
        this.timeline.mix(SAID, start, samples);
        this.saidEnd = start + samples.length;
        return;
      }
      case "cut":
        if (this.saidEnd > at) this.timeline.clearFrom(SAID, at);
        this.saidEnd = Math.min(this.saidEnd, Math.max(at, 0));
        return;
      case "key": {
        const position = this.heardEnd.get(event.client) ?? at;
        this.timeline.silence(
          HEARD,
          Math.min(position, at) - this.sample(KEY_SILENT_BEFORE_MS),
          Math.max(position, at) + this.sample(KEY_SILENT_AFTER_MS),
        );
        return;
      }
      default: {
        const unreachable: never = event;
        throw new Error(`unknown audio event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private heardDecoder(client: string): (bytes: Uint8Array) => Int16Array {
    let decode = this.heardDecoders.get(client);
    if (decode === undefined) {
      // Each client's stream keeps its own resampler history.
      decode = decoder(this.format, "heard");
      this.heardDecoders.set(client, decode);
    }
    return decode;
  }

  private sample(ms: number): number {
    return Math.round((ms * this.format.rate) / 1000);
  }
}

/** Bytes of one direction of the session's audio → PCM16 at the recording's rate. */
function decoder(format: RecordingFormat, track: "heard" | "said"): (b: Uint8Array) => Int16Array {
  if (format.encoding === "g711_ulaw") {
    const resampler = resamplerOf(8000, format.rate);
    return (bytes) => resampler.push(mulawToPcm16(bytes));
  }
  // The protocol's PCM16: 16 kHz from clients, 24 kHz from models.
  const resampler = resamplerOf(track === "heard" ? 16000 : 24000, format.rate);
  return (bytes) => resampler.push(pcm16FromBytes(bytes));
}

/** Filtered for listening later (a third of the line's work per sample: it runs per chunk). */
function resamplerOf(from: SampleRate, to: SampleRate): Resampler {
  return createResampler(from, to, "review");
}
