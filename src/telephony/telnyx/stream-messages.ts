/**
 * The messages of a bidirectional Telnyx media stream, both directions, as Telnyx documents
 * them ("Stream call media over WebSocket", the AsyncAPI of
 * https://developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket):
 *
 * - From Telnyx (`TelnyxStreamEvent`): `connected` {version}; `start` {sequence_number,
 *   stream_id, start: {call_control_id, from, to, custom_parameters, media_format: {encoding,
 *   sample_rate, channels}, …}}; `media` {sequence_number, stream_id, media: {track, chunk,
 *   timestamp, payload}}; `dtmf` {dtmf: {digit}}; `mark` {mark: {name}} (echoed when the media
 *   before it has played, at once when nothing is queued, and by a clear); `error` {payload:
 *   {code, title, detail}}; `stop`. Fields Telnyx adds later are dropped, not refused.
 * - To Telnyx (`TelnyxStreamCommand`): `media` {media: {payload}} (RTP payload, no header: the
 *   bidirectional codec's bytes, 20 ms to 30 s of them), `mark` {mark: {name}}, `clear`.
 *   Strict, so the carrier stand-in can refuse anything else.
 *
 * A TeXML call's `call_control_id` is its CallSid (the TeXML stream callback says so).
 */
import { z } from "zod";

const DecimalString = z.string().regex(/^\d+$/, "a decimal string");

/** Standard base64 (padded): the audio payloads both ways. */
export const Base64Payload = z
  .string()
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64");

/** The codecs a stream may carry (those of `<Stream codec>`), as its start names them. */
export const TelnyxEncoding = z.enum(["PCMU", "PCMA", "G722", "OPUS", "AMR-WB", "L16"]);
export type TelnyxEncoding = z.infer<typeof TelnyxEncoding>;

// ---- From Telnyx ----

export const TelnyxConnected = z.object({
  event: z.literal("connected"),
  version: z.string(),
});

export const TelnyxStart = z.object({
  event: z.literal("start"),
  sequence_number: DecimalString,
  stream_id: z.string().min(1),
  start: z.object({
    call_control_id: z.string().min(1),
    from: z.string().optional(),
    to: z.string().optional(),
    /** The TeXML <Stream>'s <Parameter>s, by name. */
    custom_parameters: z.record(z.string(), z.string()).optional(),
    media_format: z.object({
      encoding: TelnyxEncoding,
      sample_rate: z.number().int().positive(),
      channels: z.number().int().positive(),
    }),
  }),
});

export const TelnyxMedia = z.object({
  event: z.literal("media"),
  sequence_number: DecimalString,
  stream_id: z.string().min(1),
  media: z.object({
    track: z.enum(["inbound", "outbound"]),
    chunk: DecimalString,
    timestamp: DecimalString,
    payload: Base64Payload,
  }),
});

export const TelnyxDtmf = z.object({
  event: z.literal("dtmf"),
  stream_id: z.string().min(1),
  dtmf: z.object({ digit: z.string().regex(/^[0-9*#]$/, "a DTMF digit") }),
});

/** A mark of ours, echoed when the audio sent before it has played (or was cleared). */
export const TelnyxMarkEcho = z.object({
  event: z.literal("mark"),
  stream_id: z.string().min(1),
  mark: z.object({ name: z.string() }),
});

export const TelnyxError = z.object({
  event: z.literal("error"),
  payload: z.object({
    code: z.union([z.number(), z.string()]).optional(),
    title: z.string().optional(),
    detail: z.string().optional(),
  }),
});

export const TelnyxStop = z.object({
  event: z.literal("stop"),
  stream_id: z.string().min(1),
});

export const TelnyxStreamEvent = z.discriminatedUnion("event", [
  TelnyxConnected,
  TelnyxStart,
  TelnyxMedia,
  TelnyxDtmf,
  TelnyxMarkEcho,
  TelnyxError,
  TelnyxStop,
]);

// ---- To Telnyx ----

export const TelnyxMediaCommand = z
  .object({
    event: z.literal("media"),
    media: z.object({ payload: Base64Payload.min(1) }).strict(),
  })
  .strict();

export const TelnyxMarkCommand = z
  .object({ event: z.literal("mark"), mark: z.object({ name: z.string() }).strict() })
  .strict();

/** Stops playback and empties the queue; queued marks are sent back. */
export const TelnyxClearCommand = z.object({ event: z.literal("clear") }).strict();

export const TelnyxStreamCommand = z.discriminatedUnion("event", [
  TelnyxMediaCommand,
  TelnyxMarkCommand,
  TelnyxClearCommand,
]);

export type TelnyxStart = z.infer<typeof TelnyxStart>;
export type TelnyxMedia = z.infer<typeof TelnyxMedia>;
export type TelnyxDtmf = z.infer<typeof TelnyxDtmf>;
export type TelnyxMarkEcho = z.infer<typeof TelnyxMarkEcho>;
export type TelnyxStop = z.infer<typeof TelnyxStop>;
export type TelnyxStreamEvent = z.infer<typeof TelnyxStreamEvent>;
export type TelnyxStreamCommand = z.infer<typeof TelnyxStreamCommand>;
