/**
 * Playback of the model's speech (PCM16, 24 kHz, mono) with a small jitter buffer: chunks
 * are scheduled back to back, the first of a burst a little ahead, so that uneven arrival
 * does not click. `flush()` (on `interrupted`) stops at once and says how much was heard.
 */

export interface Player {
  /** Queues a chunk of the model's speech. */
  enqueue(pcm: ArrayBuffer): void;
  /** Stops what is playing and drops what is queued; returns the ms of this reply played. */
  flush(): number;
  /** The reply ended (turn_complete): the next chunk starts a new reply's count. */
  endReply(): void;
  /** Ms of the current reply played so far. */
  readonly playedMs: number;
  /** Ms queued ahead of what is playing. */
  readonly bufferedMs: number;
  /** Ms of speech received since the player was made (all replies). */
  readonly receivedMs: number;
  /** The audio output runs (false while the browser holds it until a user gesture). */
  readonly running: boolean;
  close(): void;
}

export function createPlayer(opts: { sampleRate?: number; leadMs?: number } = {}): Player {
  const rate = opts.sampleRate ?? 24_000;
  const lead = (opts.leadMs ?? 80) / 1000;
  const context = new AudioContext({ sampleRate: rate });
  let sources: AudioBufferSourceNode[] = [];
  let nextAt = 0;
  // When the current reply's first chunk began, and how much of it was scheduled.
  let replyStart: number | null = null;
  let replyEnd = 0;
  let received = 0;

  const played = () =>
    replyStart === null
      ? 0
      : Math.max(0, (Math.min(context.currentTime, replyEnd) - replyStart) * 1000);

  return {
    enqueue(pcm) {
      if (context.state === "suspended") void context.resume();
      const samples = new Int16Array(pcm, 0, Math.floor(pcm.byteLength / 2));
      if (samples.length === 0) return;
      received += (samples.length / rate) * 1000;
      const buffer = context.createBuffer(1, samples.length, rate);
      const channel = buffer.getChannelData(0);
      for (let i = 0; i < samples.length; i++) channel[i] = (samples[i] ?? 0) / 0x8000;
      const source = context.createBufferSource();
      source.buffer = buffer;
      source.connect(context.destination);
      const now = context.currentTime;
      // Starved (or the first chunk): start a little ahead, so the next chunks can follow.
      const at = nextAt < now ? now + lead : nextAt;
      source.start(at);
      nextAt = at + buffer.duration;
      replyStart ??= at;
      replyEnd = nextAt;
      sources.push(source);
      source.onended = () => {
        sources = sources.filter((s) => s !== source);
      };
    },
    flush() {
      const ms = played();
      for (const s of sources) {
        try {
          s.stop();
        } catch {
          // not started yet
        }
      }
      sources = [];
      nextAt = 0;
      replyStart = null;
      replyEnd = 0;
      return Math.round(ms);
    },
    endReply() {
      replyStart = null;
    },
    get playedMs() {
      return Math.round(played());
    },
    get running() {
      return context.state === "running";
    },
    get receivedMs() {
      return Math.round(received);
    },
    get bufferedMs() {
      return Math.max(0, (nextAt - context.currentTime) * 1000);
    },
    close() {
      void context.close();
    },
  };
}
