/**
 * A session's audio recording, in its object: the interpreter's audio tap. Each chunk the
 * session hears or says is noted as it passes — a reference and the time, nothing more, so the
 * per-chunk path pays a push — and a timer, when the current part's time is over, decodes
 * what was noted, places it (recording/audio-recording.ts) and writes the parts the clock has
 * passed (recording-parts.ts). The session's end writes the rest.
 */
import {
  type AudioEvent,
  AudioRecording,
  PART_CLOSE_SLACK_MS,
} from "../recording/audio-recording.js";
import { type AudioManifest, audioManifestKey, audioPartKey } from "../recording/layout.js";
import type { AudioTap } from "./interpreter.js";
import type { RecordingParts } from "./recording-parts.js";

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
    if (this.parts.stopped) return;
    this.events.push({ kind: "heard", client: clientId, at: this.clock() - this.startedAt, pcm });
    if (this.timer === null) this.arm();
  }

  said(pcm: Uint8Array): void {
    if (this.parts.stopped) return;
    this.events.push({ kind: "said", at: this.clock() - this.startedAt, pcm });
    if (this.timer === null) this.arm();
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
    if (!final && !this.parts.stopped && this.recording.pending) this.arm();
  }

  private note(event: AudioEvent): void {
    this.events.push(event);
    if (this.timer === null && !this.finished) this.arm();
  }

  /** The next flush: when the oldest open part closes (its end, and the slack). */
  private arm(): void {
    if (this.finished) return;
    const partMs = this.manifest.partMs;
    const now = this.now();
    const closes =
      (Math.floor((now - PART_CLOSE_SLACK_MS) / partMs) + 1) * partMs + PART_CLOSE_SLACK_MS;
    this.timer = setTimeout(() => this.flush(), Math.max(50, closes - now));
  }

  private now(): number {
    return this.clock() - this.startedAt;
  }
}
