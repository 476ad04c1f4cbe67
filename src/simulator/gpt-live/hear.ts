/**
 * Input audio (`session.input_audio.append`): no commit, no speech events on this wire; the
 * service finds the user's utterances in the stream itself. Here: the energy detector
 * (../vad.ts, `vadThreshold`, `vadSilenceMs`) in the session's format, or, with
 * `utteranceMs`, every that-many ms of audio is one utterance (for tests that send silence
 * bytes). The `vad` knob is not read: this service has no VAD switch.
 */
import { UTTERANCES } from "../script.js";
import { hear, pcmOf } from "../vad.js";
import { bytesPerMs, toPcm16 } from "./live-audio.js";
import { answerUtterance } from "./respond.js";
import { inputTranscript, yieldSpeech } from "./speech.js";
import type { Ctx } from "./state.js";

export function onAudio(ctx: Ctx, audio: string): void {
  const s = ctx.s;
  const bytes = pcmOf(audio);
  if (bytes === null) {
    ctx.error("invalid_value", "Invalid 'audio': expected base64-encoded audio.", "audio");
    return;
  }
  if (s.format.type === "audio/pcm" && bytes.length % 2 !== 0) {
    // The brief: PCM appends are an even number of bytes (whole 16-bit samples).
    ctx.error(
      "invalid_value",
      "Invalid 'audio': PCM16 audio must have an even byte length.",
      "audio",
    );
    return;
  }
  const ms = bytes.length / bytesPerMs(s.format);
  // Between utterances, audio that comes after a pause is placed at the timeline's present
  // (paced: the wall clock; at timeScale 0: after everything said), not where the last ended.
  const idle = s.knobs.utteranceMs > 0 ? s.utteranceHeardMs === 0 : s.vad.segment === null;
  const present = ctx.timeline();
  if (idle && present > s.origin + s.heardMs) s.origin = present - s.heardMs;
  if (s.knobs.utteranceMs > 0) counted(ctx, ms);
  else detected(ctx, s.muted ? new Uint8Array(bytes.length) : bytes);
  s.heardMs += ms;
}

/** `utteranceMs`: every byte is speech; each `utteranceMs` of it is one utterance. */
function counted(ctx: Ctx, ms: number): void {
  const s = ctx.s;
  if (s.muted) return;
  if (s.utteranceHeardMs === 0) {
    s.utteranceStart = s.origin + s.heardMs;
    yieldSpeech(ctx);
  }
  s.utteranceHeardMs += ms;
  if (s.utteranceHeardMs >= s.knobs.utteranceMs) {
    const end = s.utteranceStart + s.utteranceHeardMs;
    s.utteranceHeardMs = 0;
    utterance(ctx, s.utteranceStart, end);
  }
}

/** The energy detector: an utterance starts (the model yields) and ends in the audio itself. */
function detected(ctx: Ctx, bytes: Uint8Array): void {
  const s = ctx.s;
  const sampleRate = s.format.type === "audio/pcm" ? s.format.rate : 8000;
  const pcm = toPcm16(s.format, bytes);
  for (const event of hear(s.vad, pcm, { ...s.knobs, sampleRate })) {
    if (event.type === "start") {
      s.utteranceStart = s.origin + event.atMs;
      yieldSpeech(ctx);
    } else if (event.type === "end") utterance(ctx, s.utteranceStart, s.origin + event.atMs);
  }
}

/** What the user said (the simulator's script of utterances), transcribed, then answered. */
function utterance(ctx: Ctx, start: number, end: number): void {
  const s = ctx.s;
  const text = UTTERANCES[s.utterances++ % UTTERANCES.length]!;
  inputTranscript(ctx, text, start, end);
  answerUtterance(ctx, text, end);
}
