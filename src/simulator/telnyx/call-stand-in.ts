/**
 * The Telnyx stand-in: plays Telnyx toward liveline for one inbound call of a TeXML
 * application (the call engine is ../phone-line.ts). As Telnyx documents it:
 * - The voice webhook (telephony/telnyx/inbound-call.ts): a form POST, signed with Ed25519 over
 *   `${telnyx-timestamp}|${body}` with the stand-in's private key (the Worker's
 *   TELNYX_PUBLIC_KEY must be its pair).
 * - The answer ("TeXML <Connect>", "<Stream>"): must be `<Response><Connect><Stream url="wss://…"
 *   bidirectionalMode="rtp">` with optional `codec`, `bidirectionalCodec`, `track`
 *   ("inbound_track") and <Parameter>s; anything else is a CallSetupError saying what came
 *   back. `codec` absent (or "default") streams the call's own codec (`callCodec`, PCMU unless
 *   given); `bidirectionalCodec` absent is PCMU.
 * - The stream ("Stream call media over WebSocket"): `connected`, then `start` (stream_id,
 *   call_control_id = the CallSid, from, to, custom_parameters, media_format), `media`
 *   (inbound track, 20 ms, chunk and timestamp as decimal strings), `dtmf`, `mark` echoes,
 *   `stop`; every message after `connected` carries a sequence_number from "1".
 * - What liveline sends is read strictly (stream-messages.ts): media of 20 ms to 30 s of the
 *   bidirectional codec's bytes (no file header), `mark`, `clear` (which gives back the
 *   marks it dropped at once).
 * `lieAbout`: a test's control — the caller's audio goes in that law while the start declares
 * the answer's codec (a trunk misconfigured: the mistake liveline must notice).
 */

import { ALAW_LINE, type LineCodec, MULAW_LINE } from "../../audio/line-audio.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import { readJson } from "../../telephony/read-json.js";
import {
  inboundCallWebhook,
  telnyxAccountSid,
  telnyxCallSid,
} from "../../telephony/telnyx/inbound-call.js";
import {
  TELNYX_SIGNATURE_HEADER,
  TELNYX_TIMESTAMP_HEADER,
  telnyxSignature,
} from "../../telephony/telnyx/signature.js";
import { TelnyxStreamCommand } from "../../telephony/telnyx/stream-messages.js";
import {
  type LineCommand,
  type PhoneLineOptions,
  PhoneLineStandIn,
  type StandInWire,
  type StreamAnswerOf,
} from "../phone-line.js";
import { parseXml, type XmlElement } from "../twilio/twiml-reader.js";

export const TELNYX_VOICE_PATH = "/v1/telephony/telnyx/voice";
export const TELNYX_STATUS_PATH = "/v1/telephony/telnyx/status";

type G711 = "PCMU" | "PCMA";

export interface TelnyxAnswer extends StreamAnswerOf {
  /** <Parameter>s by name: the start's custom_parameters. */
  parameters: Record<string, string>;
  codec: G711;
  bidirectionalCodec: G711;
}

const lineOf = (codec: G711): LineCodec => (codec === "PCMA" ? ALAW_LINE : MULAW_LINE);

function only(parent: XmlElement, name: string): XmlElement {
  const [child, ...more] = parent.children;
  if (child?.name !== name || more.length > 0 || parent.text !== "")
    throw new Error(`expected <${parent.name}> to hold one <${name}>`);
  return child;
}

function g711(value: string | undefined, fallback: G711, attribute: string): G711 {
  if (value === undefined || value === "default") return fallback;
  if (value === "PCMU" || value === "PCMA") return value;
  throw new Error(`<Stream ${attribute}="${value}">: the stand-in speaks PCMU and PCMA only`);
}

/** The <Stream> of a `<Response><Connect><Stream>` TeXML answer. */
export function readTexmlAnswer(
  texml: string,
  allowInsecure: boolean,
  callCodec: G711 = "PCMU",
): TelnyxAnswer {
  const response = parseXml(texml);
  if (response.name !== "Response") throw new Error(`the root is <${response.name}>`);
  const stream = only(only(response, "Connect"), "Stream");
  const known = [
    "url",
    "name",
    "track",
    "codec",
    "bidirectionalMode",
    "bidirectionalCodec",
    "bidirectionalSamplingRate",
  ];
  for (const attribute of Object.keys(stream.attributes))
    if (!known.includes(attribute)) throw new Error(`<Stream> has no attribute ${attribute}`);
  const { url, track, bidirectionalMode, bidirectionalSamplingRate } = stream.attributes;
  if (url === undefined) throw new Error("<Stream> has no url");
  const parsed = new URL(url);
  if (parsed.protocol !== "wss:" && !(allowInsecure && parsed.protocol === "ws:"))
    throw new Error(`<Stream url> is not wss://: ${url}`);
  if (bidirectionalMode !== "rtp")
    throw new Error(
      '<Stream> is not bidirectional RTP (bidirectionalMode="rtp"): nothing sent back would be heard',
    );
  if (track !== undefined && track !== "inbound_track")
    throw new Error(`<Stream track="${track}">: the caller's track is inbound_track`);
  if (bidirectionalSamplingRate !== undefined && bidirectionalSamplingRate !== "8000")
    throw new Error("<Stream bidirectionalSamplingRate>: G.711 is 8000 Hz");
  const parameters: Record<string, string> = {};
  for (const p of stream.children) {
    if (p.name !== "Parameter") throw new Error(`<Stream> holds <${p.name}>`);
    const { name, value } = p.attributes;
    if (name === undefined || value === undefined)
      throw new Error("<Parameter> needs name and value");
    parameters[name] = value;
  }
  const codec = g711(stream.attributes.codec, callCodec, "codec");
  const bidirectionalCodec = g711(
    stream.attributes.bidirectionalCodec,
    "PCMU",
    "bidirectionalCodec",
  );
  return {
    streamUrl: url,
    parameters,
    codec,
    bidirectionalCodec,
    callerCodec: lineOf(codec),
    replyCodec: lineOf(bidirectionalCodec),
  };
}

export interface TelnyxStandInOptions extends PhoneLineOptions {
  /** The call's own codec (what `codec="default"` streams): PCMU unless given. */
  callCodec?: G711;
  /** A control: the caller's audio is sent in this law, whatever the start declares. */
  lieAbout?: G711;
}

export interface PlaceTelnyxCall {
  /** Where liveline is, e.g. https://gw.example. */
  baseUrl: string;
  /** The key Telnyx signs with (PKCS#8, base64): the pair of the Worker's TELNYX_PUBLIC_KEY. */
  privateKey: string;
  from: string;
  to: string;
  callSid?: string;
  accountSid?: string;
  /** The application's voice URL when not `${baseUrl}/v1/telephony/telnyx/voice`. */
  voiceUrl?: string;
}

export interface PlacedTelnyxCall {
  callSid: string;
  accountSid: string;
  streamId: string;
  streamUrl: string;
  parameters: Record<string, string>;
}

export class TelnyxCallStandIn extends PhoneLineStandIn<TelnyxAnswer> {
  private ids = { callSid: "", accountSid: "", from: "", to: "" };

  constructor(options: TelnyxStandInOptions) {
    let sequence = 0;
    const next = () => String(++sequence);
    const callCodec = options.callCodec ?? "PCMU";
    const wire: StandInWire<TelnyxAnswer> = {
      readAnswer: (body, allowInsecure) => readTexmlAnswer(body, allowInsecure, callCodec),
      opening: ({ streamId, answer }) => {
        const ids = this.ids;
        return [
          JSON.stringify({ event: "connected", version: "1.0.0" }),
          JSON.stringify({
            event: "start",
            sequence_number: next(),
            stream_id: streamId,
            start: {
              user_id: ids.accountSid,
              call_control_id: ids.callSid,
              call_session_id: crypto.randomUUID(),
              from: ids.from,
              to: ids.to,
              client_state: null,
              custom_parameters: answer.parameters,
              media_format: { encoding: answer.codec, sample_rate: 8000, channels: 1 },
            },
          }),
        ];
      },
      media: (bytes, chunk, timestampMs) =>
        JSON.stringify({
          event: "media",
          sequence_number: next(),
          stream_id: this.call?.streamId,
          media: {
            track: "inbound",
            chunk: String(chunk),
            timestamp: String(timestampMs),
            payload: bytesToBase64(bytes),
          },
        }),
      dtmf: (digit) =>
        JSON.stringify({
          event: "dtmf",
          sequence_number: next(),
          stream_id: this.call?.streamId,
          occurred_at: new Date().toISOString(),
          dtmf: { digit },
        }),
      stop: () =>
        JSON.stringify({
          event: "stop",
          sequence_number: next(),
          stream_id: this.call?.streamId,
          stop: { user_id: this.ids.accountSid, call_control_id: this.ids.callSid },
        }),
      readCommand: (data) => readTelnyxCommand(data),
      markEcho: (name) =>
        JSON.stringify({
          event: "mark",
          sequence_number: next(),
          stream_id: this.call?.streamId,
          mark: { name },
        }),
      clearAck: () => null,
      clearEchoesMarks: true,
    };
    super(wire, options);
    this.lie = options.lieAbout;
  }

  private readonly lie: G711 | undefined;

  /** The law the caller's audio goes in: the declared one, or the lie. */
  override get callerCodec(): LineCodec {
    return this.lie === undefined ? super.callerCodec : lineOf(this.lie);
  }

  /** Rings liveline's voice webhook, follows its TeXML and starts the media stream. */
  async placeCall(options: PlaceTelnyxCall): Promise<PlacedTelnyxCall> {
    this.ids = {
      callSid: options.callSid ?? telnyxCallSid(),
      accountSid: options.accountSid ?? telnyxAccountSid(),
      from: options.from,
      to: options.to,
    };
    const webhook = await inboundCallWebhook({
      voiceUrl: options.voiceUrl ?? `${options.baseUrl.replace(/\/+$/, "")}${TELNYX_VOICE_PATH}`,
      privateKey: options.privateKey,
      ...this.ids,
    });
    await this.ring(webhook, this.ids.callSid, crypto.randomUUID());
    return this.placed();
  }

  /** Follows an answer fetched elsewhere (the demo page's calls), and starts the stream. */
  async answerCall(
    texml: string,
    ids: { callSid: string; accountSid: string; from: string; to: string },
  ): Promise<PlacedTelnyxCall> {
    this.ids = ids;
    await this.follow({ status: 200, body: texml }, ids.callSid, crypto.randomUUID());
    return this.placed();
  }

  private placed(): PlacedTelnyxCall {
    const call = this.call!;
    return {
      callSid: this.ids.callSid,
      accountSid: this.ids.accountSid,
      streamId: call.streamId,
      streamUrl: call.answer.streamUrl,
      parameters: call.answer.parameters,
    };
  }
}

/** What liveline sent, read as Telnyx reads it. */
export function readTelnyxCommand(data: string | ArrayBuffer): LineCommand | { problem: string } {
  if (typeof data !== "string")
    return { problem: "a binary frame (Telnyx reads JSON text frames)" };
  const read = readJson(TelnyxStreamCommand, data);
  if (!read.ok) return { problem: `${read.problem} in ${data.slice(0, 200)}` };
  const command = read.message;
  switch (command.event) {
    case "media": {
      const bytes = base64ToBytes(command.media.payload);
      if (bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === "RIFF")
        return { problem: "media payload carries a WAV header (send the RTP payload alone)" };
      // "RTP media chunks sent back to Telnyx can contain 20 milliseconds to 30 seconds".
      if (bytes.length < 160 || bytes.length > 240_000)
        return {
          problem: `media of ${bytes.length} bytes: Telnyx takes 20 ms to 30 s (160 to 240000)`,
        };
      return { kind: "audio", bytes };
    }
    case "mark":
      return { kind: "mark", name: command.mark.name };
    case "clear":
      return { kind: "clear" };
    default: {
      const unreachable: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A TeXML status callback, signed as Telnyx signs it (the call is over, or not). */
export async function telnyxStatusWebhook(call: {
  statusUrl: string;
  privateKey: string;
  callSid: string;
  accountSid: string;
  status: string;
}): Promise<Request> {
  const body = new TextEncoder().encode(
    new URLSearchParams({
      AccountSid: call.accountSid,
      CallSid: call.callSid,
      CallStatus: call.status,
      CallbackSource: "call-progress-events",
    }).toString(),
  );
  const timestamp = String(Math.floor(Date.now() / 1000));
  return new Request(call.statusUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      [TELNYX_TIMESTAMP_HEADER]: timestamp,
      [TELNYX_SIGNATURE_HEADER]: await telnyxSignature(call.privateKey, timestamp, body),
    },
    body,
  });
}
