/**
 * The messages of a Vonage WebSocket call leg, both directions, as Vonage documents them
 * ("WebSockets", https://developer.vonage.com/en/voice/voice-api/concepts/websockets):
 *
 * - From Vonage: binary frames of audio — 16-bit linear PCM, little-endian, mono, 20 ms each
 *   (640 bytes at 16 kHz, 320 at 8 kHz) — and text frames of JSON: first
 *   `websocket:connected` {content-type, and each of the NCCO endpoint's `headers` at the top
 *   level}, then `websocket:dtmf` {digit, duration}, `websocket:notify` {payload} (a notify of
 *   ours: the audio before it has played), `websocket:cleared` (a clear done). There is no
 *   stop: the call's end closes the socket (and comes as the `completed` event webhook).
 * - To Vonage: binary frames of audio in the same format, exactly one 20 ms frame each
 *   (Vonage buffers 3072 of them, about a minute); text `{"action": "notify", "payload"}`
 *   and `{"action": "clear"}`.
 */
import { z } from "zod";

export const VONAGE_CONTENT_TYPE = "audio/l16;rate=16000";

/** `websocket:connected`: the audio format and the headers the answer gave the endpoint. */
export const VonageConnected = z.object({
  event: z.literal("websocket:connected"),
  "content-type": z.enum(["audio/l16;rate=16000", "audio/l16;rate=8000"]),
  /** liveline's headers: the stream's token and the call's uuid. */
  token: z.string().optional(),
  call: z.string().optional(),
});

export const VonageDtmf = z.object({
  event: z.literal("websocket:dtmf"),
  digit: z.string().regex(/^[0-9*#]$/, "a DTMF digit"),
  duration: z.number().optional(),
});

/** A notify of ours, its audio played. */
export const VonageNotify = z.object({
  event: z.literal("websocket:notify"),
  payload: z.object({ name: z.string() }),
});

export const VonageCleared = z.object({ event: z.literal("websocket:cleared") });

export const VonageStreamEvent = z.discriminatedUnion("event", [
  VonageConnected,
  VonageDtmf,
  VonageNotify,
  VonageCleared,
]);

export const VonageNotifyCommand = z
  .object({ action: z.literal("notify"), payload: z.object({ name: z.string() }).strict() })
  .strict();
export const VonageClearCommand = z.object({ action: z.literal("clear") }).strict();
export const VonageStreamCommand = z.discriminatedUnion("action", [
  VonageNotifyCommand,
  VonageClearCommand,
]);

export type VonageConnected = z.infer<typeof VonageConnected>;
export type VonageStreamEvent = z.infer<typeof VonageStreamEvent>;
export type VonageStreamCommand = z.infer<typeof VonageStreamCommand>;
