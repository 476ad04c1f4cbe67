/**
 * The Vonage stand-in: plays Vonage toward liveline for one inbound call (the call engine is
 * ../phone-line.ts). As Vonage documents it:
 * - The answer webhook (telephony/vonage/inbound-call.ts): a JSON POST (the application's
 *   answer_method set to POST), `Authorization: Bearer` a JWT signed with the signature
 *   secret over the body's SHA-256.
 * - The answer ("NCCO reference: connect"; "WebSockets"): a JSON NCCO whose first action is a
 *   `connect` to one `websocket` endpoint with `uri` (wss://), `content-type`
 *   (audio/l16;rate=16000 or 8000) and optional `headers` (512 bytes at most, put at the top
 *   level of the first message); anything else is a CallSetupError.
 * - The WebSocket: `websocket:connected` (the content-type and the headers), then the caller's
 *   audio as binary frames of 20 ms of 16-bit little-endian PCM, `websocket:dtmf`,
 *   `websocket:notify` when a notify's audio has played, `websocket:cleared` after a clear
 *   (whose notifies never come back). No stop: the caller's hang-up closes the socket.
 * - What liveline sends is read strictly: binary frames of exactly 20 ms (640 bytes at 16 kHz),
 *   `{"action": "notify", "payload"}`, `{"action": "clear"}`; Vonage buffers 3072 frames, and
 *   more is a violation.
 */
import type { LineCodec } from "../../audio/line-audio.js";
import { readJson } from "../../telephony/read-json.js";
import {
  inboundCallWebhook,
  signedVonageRequest,
  vonageCallUuid,
} from "../../telephony/vonage/inbound-call.js";
import { VonageStreamCommand } from "../../telephony/vonage/stream-messages.js";
import {
  type LineCommand,
  type PhoneLineOptions,
  PhoneLineStandIn,
  type StandInWire,
  type StreamAnswerOf,
} from "../phone-line.js";

export const VONAGE_ANSWER_PATH = "/v1/telephony/vonage/voice";
export const VONAGE_EVENT_PATH = "/v1/telephony/vonage/status";

/** Frames Vonage buffers before it drops more (about a minute of audio). */
const BUFFERED_FRAMES = 3072;

export interface VonageAnswer extends StreamAnswerOf {
  contentType: "audio/l16;rate=16000" | "audio/l16;rate=8000";
  headers: Record<string, unknown>;
}

/** The websocket endpoint of an NCCO answer's `connect`. */
export function readNccoAnswer(body: string, allowInsecure: boolean): VonageAnswer {
  const ncco: unknown = JSON.parse(body);
  if (!Array.isArray(ncco) || ncco.length === 0) throw new Error("the answer is not an NCCO array");
  const [connect] = ncco as Array<Record<string, unknown>>;
  if (connect?.action !== "connect")
    throw new Error(`the NCCO's first action is ${JSON.stringify(connect?.action)}, not connect`);
  const endpoints = connect.endpoint;
  if (!Array.isArray(endpoints) || endpoints.length !== 1)
    throw new Error("the connect action needs one endpoint");
  const endpoint = endpoints[0] as Record<string, unknown>;
  if (endpoint.type !== "websocket")
    throw new Error(`the endpoint is ${String(endpoint.type)}, not websocket`);
  const uri = endpoint.uri;
  if (typeof uri !== "string") throw new Error("the websocket endpoint has no uri");
  const url = new URL(uri);
  if (url.protocol !== "wss:" && !(allowInsecure && url.protocol === "ws:"))
    throw new Error(`the websocket uri is not wss://: ${uri}`);
  const contentType = endpoint["content-type"];
  if (contentType !== "audio/l16;rate=16000" && contentType !== "audio/l16;rate=8000")
    throw new Error(`content-type ${String(contentType)}: audio/l16;rate=16000 or 8000`);
  const headers = (endpoint.headers ?? {}) as Record<string, unknown>;
  if (typeof headers !== "object" || Array.isArray(headers))
    throw new Error("headers is not an object");
  if (JSON.stringify(headers).length > 512)
    throw new Error("the endpoint's headers are over 512 bytes");
  const codec: LineCodec = {
    kind: "l16",
    rate: contentType === "audio/l16;rate=8000" ? 8000 : 16000,
  };
  return { streamUrl: uri, contentType, headers, callerCodec: codec, replyCodec: codec };
}

export interface PlaceVonageCall {
  baseUrl: string;
  /** The account's signature secret: the key of the webhooks' JWT. */
  signatureSecret: string;
  from: string;
  to: string;
  uuid?: string;
  /** The application's answer URL when not `${baseUrl}/v1/telephony/vonage/voice`. */
  answerUrl?: string;
}

export interface PlacedVonageCall {
  uuid: string;
  streamUrl: string;
  headers: Record<string, unknown>;
}

export class VonageCallStandIn extends PhoneLineStandIn<VonageAnswer> {
  private uuid = "";

  constructor(options: PhoneLineOptions) {
    const wire: StandInWire<VonageAnswer> = {
      readAnswer: readNccoAnswer,
      opening: ({ answer }) => [
        JSON.stringify({
          event: "websocket:connected",
          "content-type": answer.contentType,
          ...answer.headers,
        }),
      ],
      media: (bytes) => bytes,
      dtmf: (digit) => JSON.stringify({ event: "websocket:dtmf", digit, duration: 260 }),
      stop: () => null,
      readCommand: (data) => {
        const read = readVonageCommand(data, this.call?.answer.contentType);
        if (
          !("problem" in read) &&
          read.kind === "audio" &&
          this.queuedMs() / 20 >= BUFFERED_FRAMES
        )
          return { problem: `more than ${BUFFERED_FRAMES} frames queued: Vonage drops them` };
        return read;
      },
      markEcho: (name) => JSON.stringify({ event: "websocket:notify", payload: { name } }),
      clearAck: () => JSON.stringify({ event: "websocket:cleared" }),
      clearEchoesMarks: false,
    };
    super(wire, options);
  }

  /** Rings liveline's answer URL, follows its NCCO and opens the WebSocket. */
  async placeCall(options: PlaceVonageCall): Promise<PlacedVonageCall> {
    this.uuid = options.uuid ?? vonageCallUuid();
    const webhook = await inboundCallWebhook({
      answerUrl: options.answerUrl ?? `${options.baseUrl.replace(/\/+$/, "")}${VONAGE_ANSWER_PATH}`,
      signatureSecret: options.signatureSecret,
      uuid: this.uuid,
      from: options.from,
      to: options.to,
    });
    await this.ring(webhook, this.uuid, this.uuid);
    return this.placed();
  }

  /** Follows an answer fetched elsewhere (the demo page's calls), and opens the socket. */
  async answerCall(ncco: string, uuid: string): Promise<PlacedVonageCall> {
    this.uuid = uuid;
    await this.follow({ status: 200, body: ncco }, uuid, uuid);
    return this.placed();
  }

  private placed(): PlacedVonageCall {
    const call = this.call!;
    return { uuid: this.uuid, streamUrl: call.answer.streamUrl, headers: call.answer.headers };
  }
}

/** What liveline sent, read as Vonage reads it. */
export function readVonageCommand(
  data: string | ArrayBuffer,
  contentType: string | undefined,
): LineCommand | { problem: string } {
  if (typeof data !== "string") {
    const frame = contentType === "audio/l16;rate=8000" ? 320 : 640;
    if (data.byteLength !== frame)
      return {
        problem: `a binary frame of ${data.byteLength} bytes: Vonage takes ${frame} (20 ms)`,
      };
    return { kind: "audio", bytes: new Uint8Array(data) };
  }
  const read = readJson(VonageStreamCommand, data);
  if (!read.ok) return { problem: `${read.problem} in ${data.slice(0, 200)}` };
  const command = read.message;
  switch (command.action) {
    case "notify":
      return { kind: "mark", name: command.payload.name };
    case "clear":
      return { kind: "clear" };
    default: {
      const unreachable: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Vonage's event webhook (the call is over, or not), signed as Vonage signs it. */
export function vonageEventWebhook(call: {
  eventUrl: string;
  signatureSecret: string;
  uuid: string;
  status: string;
}): Promise<Request> {
  return signedVonageRequest(call.eventUrl, call.signatureSecret, {
    uuid: call.uuid,
    conversation_uuid: `CON-${crypto.randomUUID()}`,
    status: call.status,
    direction: "inbound",
    timestamp: new Date().toISOString(),
  });
}
