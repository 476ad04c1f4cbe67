/**
 * A session's audio recording, in its object: the interpreter's audio tap. Each chunk the
 * session hears or says is noted as it passes — a reference and the time, nothing more, so the
 * per-chunk path pays a push — and a timer, every half second while audio comes, decodes what
 * was noted and places it (recording/audio-recording.ts), and writes each part once the clock
 * has passed it (recording-parts.ts). The session's end writes the rest.
 */
import {
  type AudioEvent,
  AudioRecording,
  PART_CLOSE_SLACK_MS,
} from "../recording/audio-recording.js";
import { type AudioManifest, audioManifestKey, audioPartKey } from "../recording/layout.js";
import type { AudioTap } from "./interpreter-ports.js";
import type { RecordingParts } from "./recording-parts.js";

/** What was noted is decoded and placed at least this often while audio comes (ms). */
const TAKE_EVERY_MS = 500;

export class AudioRecorder implements AudioTap {
  private events: AudioEvent[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly recording: AudioRecording;
  private readonly startedAt: number;
  private finished = false;

  constructor(
    private readonly manifest: AudioManifest,
    private readonly parts: RecordingParts,
    encoding: "pcm16" | "g711_ulaw",
    private readonly clock: () => number = Date.now,
  ) {
    this.startedAt = Date.parse(manifest.startedAt);
    this.recording = new AudioRecording(
      { encoding, rate: manifest.sampleRate },
      manifest.partMs,
      this.clock() - this.startedAt,
    );
    parts.describe(audioManifestKey(manifest.sessionId), manifest);
  }

  heard(clientId: string, pcm: Uint8Array): void {
    if (this.parts.stopped || this.finished) return;
    this.events.push({ kind: "heard", client: clientId, at: this.clock() - this.startedAt, pcm });
    if (this.timer === null) this.schedule();
  }

  said(pcm: Uint8Array): void {
    if (this.parts.stopped || this.finished) return;
    this.events.push({ kind: "said", at: this.clock() - this.startedAt, pcm });
    if (this.timer === null) this.schedule();
  }

  /** The reply being said was cut (a barge-in): what was sent after now was never heard. */
  cut(): void {
    if (this.parts.stopped) return;
    this.note({ kind: "cut", at: this.now() });
  }

  /** A key typed on `clientId`'s line that its agent keeps from the model (a PIN digit). */
  key(clientId: string): void {
    if (this.parts.stopped) return;
    this.note({ kind: "key", client: clientId, at: this.now() });
  }

  /** The session ends: what is noted is placed and every part written. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flush(true);
  }

  /** Writes the parts the clock has passed (all of them when `final`). */
  flush(final = false): void {
    this.timer = null;
    if (this.parts.stopped) {
      this.events = [];
      return;
    }
    const events = this.events;
    this.events = [];
    this.recording.take(events);
    const ready = final ? this.recording.remainingParts() : this.recording.closedParts(this.now());
    for (const part of ready)
      if (!this.parts.write(audioPartKey(this.manifest.sessionId, part.index), part.bytes)) break;
    // Audio still coming (some was noted since the last flush): the next batch soon.
    if (!final && !this.parts.stopped && this.recording.pending) this.schedule(events.length > 0);
  }

  private note(event: AudioEvent): void {
    if (this.finished) return;
    this.events.push(event);
    if (this.timer === null && !this.finished) this.schedule();
  }

  /**
   * The next flush: when the oldest open part closes (its end, and the slack), or sooner while
   * audio is noted — what was noted is decoded in small batches, so that the work never holds
   * the loop up for long between two chunks.
   */
  private schedule(soon = true): void {
    if (this.finished) return;
    const partMs = this.manifest.partMs;
    const now = this.now();
    const closes =
      (Math.floor((now - PART_CLOSE_SLACK_MS) / partMs) + 1) * partMs + PART_CLOSE_SLACK_MS;
    const due = soon ? Math.min(closes, now + TAKE_EVERY_MS) : closes;
    this.timer = setTimeout(() => this.flush(), Math.max(50, due - now));
  }

  private now(): number {
    return this.clock() - this.startedAt;
  }
}
