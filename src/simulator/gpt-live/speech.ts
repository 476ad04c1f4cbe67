/**
 * What goes on the session's one timeline (ms from `session.started`, end exclusive): the
 * model's speech (`session.output_transcript.delta` with `start_ms`/`end_ms` and
 * `session.output_audio.delta`) and the transcript of what the user said
 * (`session.input_transcript.delta`). No event marks the end of a spoken reply: there are no
 * turns on this wire.
 */
import { chunkWords, wordCount } from "../script.js";
import { spokenAudio } from "../spoken-audio.js";
import { spoken } from "./live-audio.js";
import type { Ctx, Json } from "./state.js";

/** Queue a server event for wall time `at`. */
export function later(
  ctx: Ctx,
  at: number,
  message: Json,
  speech = false,
  to: "all" | "primary" | "sideband" = "all",
): void {
  ctx.s.queue.push({ at, kind: "send", to, message, speech });
}

/** Wall time of timeline position `t`, seen from now (paced by timeScale; never in the past). */
function wallOf(ctx: Ctx, t: number): number {
  return Math.max(ctx.now, ctx.after(t - ctx.timeline()));
}

/**
 * The model says `text`, starting at timeline `from` or after what it is saying already.
 * Each chunk: its audio (on the primary socket bare, as the SDK says; reflected to sidebands
 * as 24 kHz PCM with its range) and its transcript with the same range. Returns the range.
 */
export function speak(
  ctx: Ctx,
  text: string,
  from: number,
  prompted = true,
): { start: number; end: number } {
  const s = ctx.s;
  const start = Math.max(from, s.speechEnd);
  let t = start;
  const chunks = chunkWords(text, () => ctx.draw());
  for (const chunk of chunks) {
    // At msPerWord=0 a chunk still takes a millisecond: a range is never empty.
    const ms = Math.max(1, s.knobs.msPerWord * wordCount(chunk));
    const range = { start_ms: t, end_ms: t + ms };
    const at = wallOf(ctx, t);
    later(
      ctx,
      at,
      { type: "session.output_audio.delta", delta: spoken(s.format, ms) },
      true,
      "primary",
    );
    later(
      ctx,
      at,
      { type: "session.output_audio.delta", delta: spokenAudio(ms), ...range },
      true,
      "sideband",
    );
    later(ctx, at, { type: "session.output_transcript.delta", delta: chunk, ...range }, true);
    t += ms;
  }
  if (chunks.length > 0) {
    s.lastReply = chunks;
    s.speechEnd = t;
    // Cumulative usage once the reply has been said (the cadence is assumed).
    s.queue.push({ at: wallOf(ctx, t), kind: "usage" });
    const quiet = s.knobs.unpromptedAfterMs;
    if (prompted && quiet > 0)
      s.queue.push({ at: wallOf(ctx, t + quiet), kind: "unprompted", after: t });
  }
  return { start, end: t };
}

/** The user's words over `[start, end)` of the timeline, cut in chunks spread over it. */
export function inputTranscript(ctx: Ctx, text: string, start: number, end: number): void {
  const chunks = chunkWords(text, () => ctx.draw());
  const words = Math.max(1, wordCount(text));
  let done = 0;
  for (const chunk of chunks) {
    const from = start + Math.round(((end - start) * done) / words);
    done += wordCount(chunk);
    const to = start + Math.round(((end - start) * done) / words);
    ctx.send({ type: "session.input_transcript.delta", delta: chunk, start_ms: from, end_ms: to });
  }
}

/**
 * The user speaks over the model: it yields (assumed: no event says so; its speech just
 * stops). Speech not yet sent is dropped, and the timeline's speech ends where it stopped.
 */
export function yieldSpeech(ctx: Ctx): void {
  const s = ctx.s;
  let cut = Number.POSITIVE_INFINITY;
  for (const due of s.queue) {
    if (due.kind === "send" && due.speech && typeof due.message.start_ms === "number") {
      cut = Math.min(cut, due.message.start_ms);
    }
  }
  s.queue = s.queue.filter((due) => due.kind !== "send" || !due.speech);
  if (cut < s.speechEnd) s.speechEnd = cut;
}
