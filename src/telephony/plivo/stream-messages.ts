/**
 * The messages of a bidirectional Plivo audio stream, both directions, as Plivo documents
 * them ("Stream Event Protocol", https://www.plivo.com/docs/voice/audio-streaming/audio-streaming;
 * "The Stream element", https://www.plivo.com/docs/voice/xml/the-stream-element):
 *
 * - From Plivo (`PlivoStreamEvent`): `start` {sequenceNumber, start: {callId, streamId,
 *   accountId, tracks, mediaFormat: {encoding, sampleRate}}, extra_headers}; `media`
 *   {sequenceNumber, streamId, media: {track, timestamp, chunk, payload}}; `dtmf` {dtmf:
 *   {digit}}; `playedStream` {streamId, name} (a checkpoint's audio played — only if it
 *   played: a clear drops it); `clearedAudio` {streamId}. There is no `stop`: the caller's
 *   hang-up closes the socket, and comes as the hangup webhook. Fields Plivo adds later are
 *   dropped, not refused.
 * - To Plivo (`PlivoStreamCommand`): `playAudio` {media: {contentType, sampleRate, payload}},
 *   `checkpoint` {streamId, name}, `clearAudio` {streamId}. Strict.
 */
import { z } from "zod";

/** Standard base64 (padded): the audio payloads both ways. */
export const Base64Payload = z
  .string()
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64");

// ---- From Plivo ----

export const PlivoStart = z.object({
  event: z.literal("start"),
  sequenceNumber: z.number().int(),
  start: z.object({
    callId: z.string().min(1),
    streamId: z.string().min(1),
    accountId: z.string().optional(),
    tracks: z.array(z.string()).optional(),
    mediaFormat: z.object({ encoding: z.string(), sampleRate: z.number().int().positive() }),
  }),
  /** The <Stream>'s extraHeaders, as `name=value` pairs (`;` or `,` between them). */
  extra_headers: z.string().optional(),
});

export const PlivoMedia = z.object({
  event: z.literal("media"),
  sequenceNumber: z.number().int(),
  streamId: z.string().min(1),
  media: z.object({
    track: z.string(),
    timestamp: z.string(),
    chunk: z.number().int(),
    payload: Base64Payload,
  }),
});

export const PlivoDtmf = z.object({
  event: z.literal("dtmf"),
  dtmf: z.object({ digit: z.string().regex(/^[0-9*#]$/, "a DTMF digit") }),
});

/** A checkpoint of ours, its audio played. */
export const PlivoPlayedStream = z.object({
  event: z.literal("playedStream"),
  streamId: z.string().min(1),
  name: z.string(),
});

export const PlivoClearedAudio = z.object({
  event: z.literal("clearedAudio"),
  streamId: z.string().min(1),
});

export const PlivoStreamEvent = z.discriminatedUnion("event", [
  PlivoStart,
  PlivoMedia,
  PlivoDtmf,
  PlivoPlayedStream,
  PlivoClearedAudio,
]);

// ---- To Plivo ----

export const PlivoPlayAudio = z
  .object({
    event: z.literal("playAudio"),
    media: z
      .object({
        contentType: z.literal("audio/x-mulaw"),
        sampleRate: z.literal(8000),
        payload: Base64Payload.min(1),
      })
      .strict(),
  })
  .strict();

export const PlivoCheckpoint = z
  .object({ event: z.literal("checkpoint"), streamId: z.string().min(1), name: z.string() })
  .strict();

export const PlivoClearAudio = z
  .object({ event: z.literal("clearAudio"), streamId: z.string().min(1) })
  .strict();

export const PlivoStreamCommand = z.discriminatedUnion("event", [
  PlivoPlayAudio,
  PlivoCheckpoint,
  PlivoClearAudio,
]);

export type PlivoStart = z.infer<typeof PlivoStart>;
export type PlivoMedia = z.infer<typeof PlivoMedia>;
export type PlivoDtmf = z.infer<typeof PlivoDtmf>;
export type PlivoPlayedStream = z.infer<typeof PlivoPlayedStream>;
export type PlivoClearedAudio = z.infer<typeof PlivoClearedAudio>;
export type PlivoStreamEvent = z.infer<typeof PlivoStreamEvent>;
export type PlivoStreamCommand = z.infer<typeof PlivoStreamCommand>;

/** The `name=value` pairs of `extra_headers` (split at `;` or `,`). */
export function extraHeaders(text: string | undefined): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const part of (text ?? "").split(/[;,]/)) {
    const at = part.indexOf("=");
    if (at > 0) pairs.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return pairs;
}
