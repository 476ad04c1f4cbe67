/**
 * The messages of a bidirectional Twilio Media Stream, both directions, as Twilio documents
 * them: "Media Streams - WebSocket Messages",
 * https://www.twilio.com/docs/voice/media-streams/websocket-messages
 *
 * - From Twilio (`TwilioStreamEvent`): connected, start, media, dtmf, mark, stop. Every field
 *   Twilio documents is required with its documented type: `sequenceNumber`, `media.chunk`
 *   and `media.timestamp` are decimal strings; `mediaFormat` is always μ-law, 8000 Hz, mono.
 *   Fields Twilio adds later are dropped, not refused: a gateway must not hang up on a call
 *   because the carrier grew a field.
 * - To Twilio (`TwilioStreamCommand`): media, mark, clear. Strict (no field beyond the
 *   documented ones), so liveline sends exactly what Twilio reads and the carrier stand-in
 *   (src/simulator/twilio) can refuse anything else.
 *
 * Named stream-messages.ts, not schemas.ts: check-imports keeps one base name per concept
 * and providers/{gemini,openai}/schemas.ts already hold that name.
 */
import { z } from "zod";

/** Twilio SIDs: a two-letter kind then 32 hex digits (34 characters). */
function sid(prefix: "AC" | "CA" | "MZ") {
  return z.string().regex(new RegExp(`^${prefix}[0-9a-fA-F]{32}$`), `a ${prefix}… SID`);
}

export const StreamSid = sid("MZ");
export const CallSid = sid("CA");
export const AccountSid = sid("AC");

/** A count Twilio sends as a decimal string ("1", "2", …). */
const DecimalString = z.string().regex(/^\d+$/, "a decimal string");

/** Standard base64 (padded): the audio payloads both ways. */
export const Base64Payload = z
  .string()
  .regex(/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/, "base64");

/** μ-law, 8000 Hz, mono: the only format of a bidirectional stream. */
export const TwilioMediaFormat = z.object({
  encoding: z.literal("audio/x-mulaw"),
  sampleRate: z.literal(8000),
  channels: z.literal(1),
});

// ---- From Twilio ----

export const TwilioConnected = z.object({
  event: z.literal("connected"),
  protocol: z.literal("Call"),
  version: z.string(),
});

export const TwilioStart = z.object({
  event: z.literal("start"),
  sequenceNumber: DecimalString,
  streamSid: StreamSid,
  start: z.object({
    streamSid: StreamSid,
    accountSid: AccountSid,
    callSid: CallSid,
    tracks: z.array(z.enum(["inbound", "outbound"])).min(1),
    /** The <Parameter>s of the TwiML <Stream>, by name. */
    customParameters: z.record(z.string(), z.string()),
    mediaFormat: TwilioMediaFormat,
  }),
});

export const TwilioMedia = z.object({
  event: z.literal("media"),
  sequenceNumber: DecimalString,
  streamSid: StreamSid,
  media: z.object({
    track: z.enum(["inbound", "outbound"]),
    /** The chunk's number, from "1". */
    chunk: DecimalString,
    /** Milliseconds since the stream started. */
    timestamp: DecimalString,
    payload: Base64Payload,
  }),
});

export const TwilioDtmf = z.object({
  event: z.literal("dtmf"),
  sequenceNumber: DecimalString,
  streamSid: StreamSid,
  dtmf: z.object({
    track: z.literal("inbound_track"),
    digit: z.string().regex(/^[0-9*#]$/, "a DTMF digit"),
  }),
});

/** A mark of ours, echoed when the audio sent before it has played (or was cleared). */
export const TwilioMarkEcho = z.object({
  event: z.literal("mark"),
  sequenceNumber: DecimalString,
  streamSid: StreamSid,
  mark: z.object({ name: z.string() }),
});

export const TwilioStop = z.object({
  event: z.literal("stop"),
  sequenceNumber: DecimalString,
  streamSid: StreamSid,
  stop: z.object({ accountSid: AccountSid, callSid: CallSid }),
});

export const TwilioStreamEvent = z.discriminatedUnion("event", [
  TwilioConnected,
  TwilioStart,
  TwilioMedia,
  TwilioDtmf,
  TwilioMarkEcho,
  TwilioStop,
]);

// ---- To Twilio ----

export const TwilioMediaCommand = z
  .object({
    event: z.literal("media"),
    streamSid: StreamSid,
    // Raw μ-law bytes: Twilio plays a file header as noise.
    media: z.object({ payload: Base64Payload.min(1) }).strict(),
  })
  .strict();

export const TwilioMarkCommand = z
  .object({
    event: z.literal("mark"),
    streamSid: StreamSid,
    mark: z.object({ name: z.string() }).strict(),
  })
  .strict();

/** Empties Twilio's playback buffer; every pending mark is echoed at once. */
export const TwilioClearCommand = z
  .object({ event: z.literal("clear"), streamSid: StreamSid })
  .strict();

export const TwilioStreamCommand = z.discriminatedUnion("event", [
  TwilioMediaCommand,
  TwilioMarkCommand,
  TwilioClearCommand,
]);

export type TwilioMediaFormat = z.infer<typeof TwilioMediaFormat>;
export type TwilioConnected = z.infer<typeof TwilioConnected>;
export type TwilioStart = z.infer<typeof TwilioStart>;
export type TwilioMedia = z.infer<typeof TwilioMedia>;
export type TwilioDtmf = z.infer<typeof TwilioDtmf>;
export type TwilioMarkEcho = z.infer<typeof TwilioMarkEcho>;
export type TwilioStop = z.infer<typeof TwilioStop>;
export type TwilioStreamEvent = z.infer<typeof TwilioStreamEvent>;
export type TwilioMediaCommand = z.infer<typeof TwilioMediaCommand>;
export type TwilioMarkCommand = z.infer<typeof TwilioMarkCommand>;
export type TwilioClearCommand = z.infer<typeof TwilioClearCommand>;
export type TwilioStreamCommand = z.infer<typeof TwilioStreamCommand>;

/** A text frame read with a schema: the message, or what is wrong with it (for logs). */
export type ReadResult<T> = { ok: true; message: T } | { ok: false; problem: string };

function readWith<T>(schema: z.ZodType<T>, text: string): ReadResult<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not JSON" };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "message";
  return { ok: false, problem: `${where}: ${issue?.message ?? "invalid"}` };
}

/** A frame from Twilio, parsed at the boundary (liveline's side). */
export function readTwilioStreamEvent(text: string): ReadResult<TwilioStreamEvent> {
  return readWith(TwilioStreamEvent, text);
}

/** A frame to Twilio, parsed as Twilio would take it (the carrier stand-in's side). */
export function readTwilioStreamCommand(text: string): ReadResult<TwilioStreamCommand> {
  return readWith(TwilioStreamCommand, text);
}
