/**
 * Energy voice-activity detection for both faces (knob `vad=energy`), as the real services
 * detect speech in a continuous stream (Gemini Live's automatic activity detection, OpenAI
 * Realtime's `server_vad`): a phone call sends 20 ms of audio every 20 ms, silence included,
 * and never says the caller stopped speaking.
 *
 * Pure: the state is plain data kept in the face's state; time is the audio's own (20 ms per
 * window heard), not the clock, so the same audio gives the same events however it is chunked
 * or paced. Audio that stops coming ends nothing (the services too: the Live API asks for
 * `audioStreamEnd` when the stream pauses).
 *
 * - a 20 ms window of PCM16 (little-endian) is speech when its RMS exceeds `vadThreshold`;
 * - a segment opens at its first speech window and holds until `vadSilenceMs` of non-speech
 *   follow its last speech window;
 * - it becomes an utterance (`start`, dated from its first speech window) once it holds
 *   `BARGE_IN_MS` of speech: shorter bursts (a click, a cough, a burst of line noise) are
 *   dropped, as the services' start-of-speech confirmation (Gemini's `prefixPaddingMs`: "the
 *   required duration of detected speech before start-of-speech is committed") drops them;
 * - every speech window of an utterance is `speech` (what barges in on a reply), and
 *   `vadSilenceMs` of non-speech after it is its `end`.
 */
import { base64ToBytes } from "../providers/base64.js";

/** The detector's window. */
export const VAD_WINDOW_MS = 20;

/** Speech (ms) that makes a segment an utterance; during a reply, a barge-in. */
export const BARGE_IN_MS = 100;

export interface VadSegment {
  /** Where its first speech window began (ms of audio heard). */
  startMs: number;
  /** Speech in it so far (ms). */
  speechMs: number;
  /** Non-speech since its last speech window (ms). */
  silenceMs: number;
  /** It held `BARGE_IN_MS` of speech: an utterance (`start` was reported). */
  started: boolean;
}

export interface VadState {
  /** Sum of squared samples and their count in the window being filled. */
  sumSq: number;
  samples: number;
  /** A chunk's odd last byte (the low half of a sample the next chunk ends), or -1. */
  carry: number;
  /** Audio heard, in whole windows (ms). */
  heardMs: number;
  segment: VadSegment | null;
}

export type VadEvent =
  /** A segment became an utterance; `atMs`: where its speech began. */
  | { type: "start"; atMs: number }
  /** A speech window of an utterance. */
  | { type: "speech" }
  /** `vadSilenceMs` of non-speech ended the utterance; `atMs`: where its speech ended. */
  | { type: "end"; atMs: number };

export interface VadConfig {
  sampleRate: number;
  vadThreshold: number;
  vadSilenceMs: number;
}

export function createVad(): VadState {
  return { sumSq: 0, samples: 0, carry: -1, heardMs: 0, segment: null };
}

/** Base64 PCM16 as bytes; null when it is not base64 (the audio is then not heard). */
export function pcmOf(data: string): Uint8Array | null {
  try {
    return base64ToBytes(data);
  } catch {
    return null;
  }
}

/** RMS of a sine of amplitude `a` is a/√2; of PCM16 full scale, 32768. */
export function rms(sumSq: number, samples: number): number {
  return samples === 0 ? 0 : Math.sqrt(sumSq / samples);
}

/** Hears one chunk of PCM16; returns what its completed windows showed, in order. */
export function hear(vad: VadState, pcm: Uint8Array, cfg: VadConfig): VadEvent[] {
  const events: VadEvent[] = [];
  const perWindow = Math.max(1, Math.round((cfg.sampleRate * VAD_WINDOW_MS) / 1000));
  let i = 0;
  if (vad.carry !== -1 && pcm.length > 0) {
    sample(vad, vad.carry | (pcm[0]! << 8), perWindow, cfg, events);
    vad.carry = -1;
    i = 1;
  }
  for (; i + 1 < pcm.length; i += 2) {
    sample(vad, pcm[i]! | (pcm[i + 1]! << 8), perWindow, cfg, events);
  }
  if (i < pcm.length) vad.carry = pcm[i]!;
  return events;
}

function sample(
  vad: VadState,
  word: number,
  perWindow: number,
  cfg: VadConfig,
  events: VadEvent[],
): void {
  const v = word >= 0x8000 ? word - 0x10000 : word;
  vad.sumSq += v * v;
  vad.samples++;
  if (vad.samples < perWindow) return;
  const speech = rms(vad.sumSq, vad.samples) > cfg.vadThreshold;
  vad.sumSq = 0;
  vad.samples = 0;
  judge(vad, speech, cfg, events);
}

function judge(vad: VadState, speech: boolean, cfg: VadConfig, events: VadEvent[]): void {
  const at = vad.heardMs;
  vad.heardMs += VAD_WINDOW_MS;
  let seg = vad.segment;
  if (speech) {
    if (seg === null) {
      seg = { startMs: at, speechMs: 0, silenceMs: 0, started: false };
      vad.segment = seg;
    }
    seg.speechMs += VAD_WINDOW_MS;
    seg.silenceMs = 0;
    if (!seg.started && seg.speechMs >= BARGE_IN_MS) {
      seg.started = true;
      events.push({ type: "start", atMs: seg.startMs });
    }
    if (seg.started) events.push({ type: "speech" });
    return;
  }
  if (seg === null) return;
  seg.silenceMs += VAD_WINDOW_MS;
  if (seg.silenceMs < cfg.vadSilenceMs) return;
  vad.segment = null;
  if (seg.started) events.push({ type: "end", atMs: vad.heardMs - seg.silenceMs });
}

/**
 * The stream ended (`audioStreamEnd`, `activityEnd`, a commit): the open segment closes and a
 * partial window is dropped. True when it was an utterance (it is then to be answered).
 */
export function endOfAudio(vad: VadState): boolean {
  const started = vad.segment?.started === true;
  vad.segment = null;
  vad.sumSq = 0;
  vad.samples = 0;
  vad.carry = -1;
  return started;
}
