/**
 * Twilio's playback buffer for a bidirectional stream, as "Media Streams - WebSocket
 * Messages" describes it (https://www.twilio.com/docs/voice/media-streams/websocket-messages):
 * `media` sent to Twilio is queued and played in order at the call's rate (μ-law 8000 Hz: 8
 * bytes a millisecond); a `mark` is echoed when every `media` queued before it has played (at
 * once if nothing is queued); `clear` empties the queue and every pending mark is echoed at once.
 *
 * Pure: time is an argument (milliseconds on any clock), so it is tested without timers.
 * Silence is not credited: when the queue runs dry, playback of the next audio starts when it
 * arrives, as on a phone line.
 */

/** μ-law at 8000 Hz: one byte a sample. */
export const MULAW_BYTES_PER_MS = 8;

type Queued = { kind: "audio"; bytes: Uint8Array } | { kind: "mark"; name: string };

export interface PlaybackProgress {
  /** The bytes that finished playing since the last call, in order. */
  played: Uint8Array[];
  /** Marks whose audio has all played, in order: to echo. */
  marks: string[];
}

export class PlaybackBuffer {
  /** The line's bytes per millisecond: μ-law's 8 unless given (16 kHz linear PCM: 32). */
  private readonly bytesPerMs: number;
  private queue: Queued[] = [];
  /** Offset into the head audio item already played. */
  private headOffset = 0;
  /** When the current run of playback started (null: idle, nothing playing). */
  private runStartedAt: number | null = null;
  /** Bytes played since the run started. */
  private runPlayed = 0;

  constructor(bytesPerMs = MULAW_BYTES_PER_MS) {
    this.bytesPerMs = bytesPerMs;
  }

  enqueueAudio(bytes: Uint8Array, now: number): PlaybackProgress {
    const progress = this.advance(now);
    if (bytes.length === 0) return progress;
    this.queue.push({ kind: "audio", bytes });
    if (this.runStartedAt === null) {
      this.runStartedAt = now;
      this.runPlayed = 0;
    }
    return progress;
  }

  enqueueMark(name: string, now: number): PlaybackProgress {
    const progress = this.advance(now);
    this.queue.push({ kind: "mark", name });
    // A mark with no audio ahead of it is echoed at once.
    const more = this.advance(now);
    return {
      played: [...progress.played, ...more.played],
      marks: [...progress.marks, ...more.marks],
    };
  }

  /** Plays what is due by `now`. */
  advance(now: number): PlaybackProgress {
    const played: Uint8Array[] = [];
    const marks: string[] = [];
    let budget =
      this.runStartedAt === null
        ? 0
        : Math.floor((now - this.runStartedAt) * this.bytesPerMs) - this.runPlayed;
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.kind === "mark") {
        marks.push(head.name);
        this.queue.shift();
        continue;
      }
      if (budget <= 0) break;
      const take = Math.min(budget, head.bytes.length - this.headOffset);
      played.push(head.bytes.subarray(this.headOffset, this.headOffset + take));
      this.headOffset += take;
      this.runPlayed += take;
      budget -= take;
      if (this.headOffset === head.bytes.length) {
        this.queue.shift();
        this.headOffset = 0;
      }
    }
    if (!this.queue.some((item) => item.kind === "audio")) this.runStartedAt = null;
    return { played, marks };
  }

  /** Drops every queued byte; returns the pending marks, to echo at once. */
  clear(now: number): PlaybackProgress {
    const progress = this.advance(now);
    for (const item of this.queue) if (item.kind === "mark") progress.marks.push(item.name);
    this.queue = [];
    this.headOffset = 0;
    this.runStartedAt = null;
    return progress;
  }

  /** Milliseconds of audio queued and not yet played (as of the last advance). */
  queuedMs(): number {
    let bytes = 0;
    for (const item of this.queue) if (item.kind === "audio") bytes += item.bytes.length;
    return (bytes - this.headOffset) / this.bytesPerMs;
  }

  /** Whether anything (audio or marks) waits. */
  isIdle(): boolean {
    return this.queue.length === 0;
  }
}
