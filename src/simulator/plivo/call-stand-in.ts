/**
 * The Plivo stand-in: plays Plivo toward liveline for one inbound call (the call engine is
 * ../phone-line.ts). As Plivo documents it:
 * - The answer URL's request (telephony/plivo/inbound-call.ts): a form POST signed with
 *   X-Plivo-Signature-V3 over the exact URL and a fresh nonce, with the account's auth token.
 * - The answer ("The Stream element"): must be `<Response><Stream bidirectional="true"
 *   keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">wss://…</Stream></Response>`,
 *   with optional `audioTrack` ("inbound"), `streamTimeout`, `statusCallbackUrl`,
 *   `statusCallbackMethod` and `extraHeaders` (name=value pairs of letters and digits,
 *   comma-separated, 512 bytes at most); anything else is a CallSetupError.
 * - The stream ("Stream Event Protocol"): `start` (callId, streamId, accountId, tracks,
 *   mediaFormat, extra_headers), `media` (20 ms, chunk counting from 1, timestamp in epoch
 *   ms), `dtmf`, `playedStream` when a checkpoint's audio has played, `clearedAudio` after a
 *   clear (whose checkpoints never come back); every message carries a sequenceNumber from
 *   1. No `stop`: the caller's hang-up closes the socket.
 * - What liveline sends is read strictly: `playAudio` (μ-law 8000), `checkpoint` and
 *   `clearAudio` naming this stream.
 */

import { MULAW_LINE } from "../../audio/line-audio.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import {
  inboundCallWebhook,
  plivoCallUuid,
  signedPlivoRequest,
} from "../../telephony/plivo/inbound-call.js";
import { PlivoStreamCommand } from "../../telephony/plivo/stream-messages.js";
import { readJson } from "../../telephony/read-json.js";
import {
  type LineCommand,
  type PhoneLineOptions,
  PhoneLineStandIn,
  type StandInWire,
  type StreamAnswerOf,
} from "../phone-line.js";
import { parseXml } from "../twilio/twiml-reader.js";

export const PLIVO_ANSWER_PATH = "/v1/telephony/plivo/voice";
export const PLIVO_HANGUP_PATH = "/v1/telephony/plivo/status";

export interface PlivoAnswer extends StreamAnswerOf {
  /** `extraHeaders`, as the start's `extra_headers` gives them back. */
  extraHeaders: string;
}

/** The <Stream> of a `<Response><Stream bidirectional="true">` Plivo XML answer. */
export function readPlivoAnswer(xml: string, allowInsecure: boolean): PlivoAnswer {
  const response = parseXml(xml);
  if (response.name !== "Response") throw new Error(`the root is <${response.name}>`);
  const [stream, ...more] = response.children;
  if (stream?.name !== "Stream" || more.length > 0)
    throw new Error("expected <Response> to hold one <Stream> (and nothing after it)");
  const known = [
    "bidirectional",
    "audioTrack",
    "streamTimeout",
    "statusCallbackUrl",
    "statusCallbackMethod",
    "contentType",
    "extraHeaders",
    "keepCallAlive",
  ];
  for (const attribute of Object.keys(stream.attributes))
    if (!known.includes(attribute)) throw new Error(`<Stream> has no attribute ${attribute}`);
  const a = stream.attributes;
  if (a.bidirectional !== "true")
    throw new Error('<Stream> is not bidirectional="true": nothing sent back would be heard');
  if (a.keepCallAlive !== "true")
    throw new Error('<Stream keepCallAlive="true"> is missing: the call would go on without it');
  if (a.audioTrack !== undefined && a.audioTrack !== "inbound")
    throw new Error('a bidirectional <Stream> takes audioTrack="inbound" only');
  if (a.contentType !== "audio/x-mulaw;rate=8000")
    throw new Error(
      `<Stream contentType="${a.contentType ?? ""}">: the stand-in streams audio/x-mulaw;rate=8000`,
    );
  const extra = a.extraHeaders ?? "";
  if (extra.length > 512) throw new Error("<Stream extraHeaders> is over 512 bytes");
  if (extra !== "" && !/^[A-Za-z0-9]+=[A-Za-z0-9]+(,[A-Za-z0-9]+=[A-Za-z0-9]+)*$/.test(extra))
    throw new Error(`<Stream extraHeaders> allows letters and digits only: ${extra}`);
  const url = new URL(stream.text);
  if (url.protocol !== "wss:" && !(allowInsecure && url.protocol === "ws:"))
    throw new Error(`the <Stream> URL is not wss://: ${stream.text}`);
  return {
    streamUrl: stream.text,
    extraHeaders: extra.replace(/,/g, ";"),
    callerCodec: MULAW_LINE,
    replyCodec: MULAW_LINE,
  };
}

export interface PlacePlivoCall {
  baseUrl: string;
  /** The account's auth token: the key of X-Plivo-Signature-V3. */
  authToken: string;
  from: string;
  to: string;
  callUuid?: string;
  /** The application's answer URL when not `${baseUrl}/v1/telephony/plivo/voice`. */
  answerUrl?: string;
}

export interface PlacedPlivoCall {
  callUuid: string;
  streamId: string;
  streamUrl: string;
  extraHeaders: string;
}

export class PlivoCallStandIn extends PhoneLineStandIn<PlivoAnswer> {
  private callUuid = "";

  constructor(options: PhoneLineOptions) {
    let sequence = 0;
    const next = () => ++sequence;
    const wire: StandInWire<PlivoAnswer> = {
      readAnswer: readPlivoAnswer,
      opening: ({ callId, streamId, answer }) => [
        JSON.stringify({
          event: "start",
          sequenceNumber: next(),
          start: {
            callId,
            streamId,
            accountId: "MA0000000000000000000",
            tracks: ["inbound"],
            mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 },
          },
          extra_headers: answer.extraHeaders,
        }),
      ],
      media: (bytes, chunk) =>
        JSON.stringify({
          event: "media",
          sequenceNumber: next(),
          streamId: this.call?.streamId,
          media: {
            track: "inbound",
            timestamp: String(Date.now()),
            chunk,
            payload: bytesToBase64(bytes),
          },
          extra_headers: this.call?.answer.extraHeaders,
        }),
      dtmf: (digit) =>
        JSON.stringify({
          event: "dtmf",
          sequenceNumber: next(),
          streamId: this.call?.streamId,
          dtmf: { track: "inbound", digit },
          extra_headers: this.call?.answer.extraHeaders,
        }),
      stop: () => null,
      readCommand: (data) => {
        const read = readPlivoCommand(data);
        if ("problem" in read) return read;
        const streamId = this.call?.streamId;
        if (read.streamId !== undefined && read.streamId !== streamId)
          return { problem: `a command for streamId ${read.streamId}, not ${streamId}` };
        return read.command;
      },
      markEcho: (name) =>
        JSON.stringify({
          event: "playedStream",
          sequenceNumber: next(),
          streamId: this.call?.streamId,
          name,
        }),
      clearAck: () =>
        JSON.stringify({
          event: "clearedAudio",
          sequenceNumber: next(),
          streamId: this.call?.streamId,
        }),
      clearEchoesMarks: false,
    };
    super(wire, options);
  }

  /** Rings liveline's answer URL, follows its XML and starts the audio stream. */
  async placeCall(options: PlacePlivoCall): Promise<PlacedPlivoCall> {
    this.callUuid = options.callUuid ?? plivoCallUuid();
    const webhook = await inboundCallWebhook({
      answerUrl: options.answerUrl ?? `${options.baseUrl.replace(/\/+$/, "")}${PLIVO_ANSWER_PATH}`,
      authToken: options.authToken,
      callUuid: this.callUuid,
      from: options.from,
      to: options.to,
    });
    await this.ring(webhook, this.callUuid, crypto.randomUUID());
    return this.placed();
  }

  /** Follows an answer fetched elsewhere (the demo page's calls), and starts the stream. */
  async answerCall(xml: string, callUuid: string): Promise<PlacedPlivoCall> {
    this.callUuid = callUuid;
    await this.follow({ status: 200, body: xml }, callUuid, crypto.randomUUID());
    return this.placed();
  }

  private placed(): PlacedPlivoCall {
    const call = this.call!;
    return {
      callUuid: this.callUuid,
      streamId: call.streamId,
      streamUrl: call.answer.streamUrl,
      extraHeaders: call.answer.extraHeaders,
    };
  }
}

/** What liveline sent, read as Plivo reads it (with the stream it names). */
export function readPlivoCommand(
  data: string | ArrayBuffer,
): { command: LineCommand; streamId: string | undefined } | { problem: string } {
  if (typeof data !== "string") return { problem: "a binary frame (Plivo reads JSON text frames)" };
  const read = readJson(PlivoStreamCommand, data);
  if (!read.ok) return { problem: `${read.problem} in ${data.slice(0, 200)}` };
  const command = read.message;
  switch (command.event) {
    case "playAudio": {
      const bytes = base64ToBytes(command.media.payload);
      if (bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === "RIFF")
        return { problem: "playAudio carries a WAV header (send raw μ-law)" };
      return { command: { kind: "audio", bytes }, streamId: undefined };
    }
    case "checkpoint":
      return { command: { kind: "mark", name: command.name }, streamId: command.streamId };
    case "clearAudio":
      return { command: { kind: "clear" }, streamId: command.streamId };
    default: {
      const unreachable: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Plivo's hangup webhook (the call is over, or not), signed as Plivo signs it. */
export function plivoHangupWebhook(call: {
  hangupUrl: string;
  authToken: string;
  callUuid: string;
  status: string;
}): Promise<Request> {
  return signedPlivoRequest(
    call.hangupUrl,
    call.authToken,
    new URLSearchParams({
      CallUUID: call.callUuid,
      CallStatus: call.status,
      Event: "Hangup",
      HangupCause: "NORMAL_CLEARING",
    }),
  );
}
