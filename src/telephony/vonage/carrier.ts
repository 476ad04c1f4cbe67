/**
 * Vonage as a carrier (src/telephony/carrier-contract.ts): answer and event webhooks POSTed
 * as JSON and signed with a JWT over their body's hash (signature.ts), NCCO answers
 * (ncco.ts), a WebSocket of 16 kHz linear PCM (stream-messages.ts, call-stream.ts), transfers
 * and hang-ups through the Voice API with an application token (call-api.ts, app-token.ts).
 *
 * Its vars: VONAGE_SIGNATURE_SECRET (a wrangler secret: it signs the webhooks; the
 * application's answer and event URLs must use POST), VONAGE_APPLICATION_ID and
 * VONAGE_PRIVATE_KEY (a wrangler secret, the application's PKCS#8 PEM key: transfers and
 * hang-ups), VONAGE_API_BASE_URL (tests point it at a stand-in).
 */
import { z } from "zod";
import { checkedString, optionalHttpUrl, secret } from "../../var-schemas.js";
import type { CallStreamRead, Carrier, Reattach } from "../carrier-contract.js";
import { readJson } from "../read-json.js";
import { updateVonageCall, VONAGE_API_BASE_URL } from "./call-api.js";
import { CALL_OVER, CallMetadata } from "./call-metadata.js";
import { vonageStreamLink } from "./call-stream.js";
import { connectStreamNcco, dialNcco, refuseNcco } from "./ncco.js";
import { isValidVonageSignature } from "./signature.js";
import { VonageStreamEvent } from "./stream-messages.js";

const VonageVars = z.object({
  /** Secret: the account's signature secret, which signs Vonage's webhooks (HS256). */
  VONAGE_SIGNATURE_SECRET: secret(16),
  /** The Vonage application's id (a UUID): REST calls' tokens name it. */
  VONAGE_APPLICATION_ID: checkedString("a Vonage application id (a UUID)", (v) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v))
      throw new Error("is not a UUID");
  }),
  /** Secret: the application's private key (PKCS#8 PEM): it signs REST calls' tokens. */
  VONAGE_PRIVATE_KEY: checkedString(
    "the Vonage application's private key, PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)",
    (v) => {
      // A PEM ends with a newline: whitespace around it is no paste error here.
      if (!v.includes("-----BEGIN PRIVATE KEY-----"))
        throw new Error("is not a PKCS#8 PEM private key (BEGIN PRIVATE KEY)");
    },
  ),
  /** Where Vonage's REST API is: https://api.nexmo.com unless set. */
  VONAGE_API_BASE_URL: optionalHttpUrl("https://api.nexmo.com"),
});

/**
 * This carrier's `reattach` (carrier-contract.ts): whether and how a call whose stream closed
 * without a hang-up is connected to its session again.
 */
export const vonageReattach: Reattach = {
  kind: "none",
  why: "liveline's NCCO has nothing after its connect: Vonage completes the call when the socket closes. (A connect with eventType synchronous sends the event URL a disconnected event whose answer may be a new NCCO (Vonage's WebSockets guide), so a new connect could reattach; not done.)",
};

const JSON_TYPE = "application/json";
/** A caller's frame is 20 ms (640 bytes at 16 kHz); a few together are taken, no more. */
const MAX_FRAME_BYTES = 640 * 8;

/** Vonage's numbers (`447700900000`) as E.164; a SIP URI or a name stays as it is. */
function e164(number: string | null): string {
  if (number === null) return "";
  return /^\d{6,15}$/.test(number) ? `+${number}` : number;
}

/** A JSON webhook body's top-level values, as the parameters the contract reads. */
function paramsOf(body: Uint8Array): URLSearchParams | null {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return null;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(json))
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      params.set(name, String(value));
  return params;
}

export const vonageCarrier: Carrier<(typeof VonageVars)["shape"], CallMetadata> = {
  reattach: vonageReattach,
  audio: "pcm16",
  vars: VonageVars,
  call: CallMetadata,
  unavailable: (vars) =>
    vars.VONAGE_SIGNATURE_SECRET === undefined
      ? "phone calls need VONAGE_SIGNATURE_SECRET (wrangler secret put VONAGE_SIGNATURE_SECRET)"
      : null,

  async readWebhook(vars, request) {
    if (vars.VONAGE_SIGNATURE_SECRET === undefined) return null;
    const body = new Uint8Array(await request.arrayBuffer());
    const signed = await isValidVonageSignature(
      vars.VONAGE_SIGNATURE_SECRET,
      body,
      request.headers.get("Authorization"),
      Math.floor(Date.now() / 1000),
    );
    return signed ? paramsOf(body) : null;
  },

  inboundCall(params, demo) {
    const uuid = params.get("uuid");
    if (uuid === null || uuid === "") return { ok: false, problem: "the webhook has no uuid" };
    const call: CallMetadata = {
      carrier: "vonage",
      uuid,
      from: e164(params.get("from")),
      to: e164(params.get("to")),
      ...(demo ? { demo: true as const } : {}),
    };
    return { ok: true, callId: uuid, call };
  },

  endedCall(params) {
    const uuid = params.get("uuid");
    if (uuid === null || uuid === "") return null;
    return CALL_OVER.has(params.get("status") ?? "") ? uuid : null;
  },

  connect: (streamUrl, token, _vars, callId) => ({
    body: JSON.stringify(connectStreamNcco(streamUrl, token, callId)),
    contentType: JSON_TYPE,
  }),
  hangUp: () => ({ body: JSON.stringify(refuseNcco()), contentType: JSON_TYPE }),

  readStreamEvent(data): CallStreamRead {
    // The caller's audio: a binary frame of 16-bit PCM, 20 ms (640 bytes at 16 kHz).
    if (typeof data !== "string") {
      if (data.byteLength === 0 || data.byteLength % 2 !== 0 || data.byteLength > MAX_FRAME_BYTES)
        return {
          ok: false,
          problem: `a binary frame of ${data.byteLength} bytes is no 16-bit audio frame`,
        };
      return { ok: true, event: { kind: "audio", payload: new Uint8Array(data) } };
    }
    const read = readJson(VonageStreamEvent, data);
    if (!read.ok) return read;
    const message = read.message;
    switch (message.event) {
      case "websocket:connected": {
        // Vonage's first message is the start: the headers the answer gave name the call.
        const call = message.call ?? "";
        return {
          ok: true,
          event: {
            kind: "start",
            streamId: call,
            callId: call,
            token: message.token ?? null,
            line: message["content-type"],
          },
        };
      }
      case "websocket:dtmf":
        return { ok: true, event: { kind: "key", digit: message.digit } };
      case "websocket:notify":
        return { ok: true, event: { kind: "mark", name: message.payload.name } };
      case "websocket:cleared":
        return { ok: true, event: { kind: "ack" } };
      default: {
        const unreachable: never = message;
        throw new Error(`unhandled WebSocket event ${JSON.stringify(unreachable)}`);
      }
    }
  },

  streamLink: (ws, _streamId, hooks, sessionAudio, line) =>
    vonageStreamLink(ws, hooks, sessionAudio, line),

  callId: (call) => call.uuid,

  transferProblem(vars) {
    if (vars.VONAGE_APPLICATION_ID === undefined || vars.VONAGE_PRIVATE_KEY === undefined)
      return "transfers need VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY";
    return null;
  },

  async transfer(vars, call, number) {
    let ncco: ReturnType<typeof dialNcco>;
    try {
      ncco = dialNcco(number, call.to);
    } catch (error) {
      return { ok: false, problem: (error as Error).message };
    }
    return updateVonageCall({
      baseUrl: vars.VONAGE_API_BASE_URL ?? VONAGE_API_BASE_URL,
      applicationId: vars.VONAGE_APPLICATION_ID ?? "",
      privateKey: vars.VONAGE_PRIVATE_KEY ?? "",
      uuid: call.uuid,
      update: { action: "transfer", destination: { type: "ncco", ncco } },
    });
  },

  async endCall(vars, call) {
    if (
      vars.VONAGE_APPLICATION_ID === undefined ||
      vars.VONAGE_PRIVATE_KEY === undefined ||
      call.demo === true
    )
      return { ok: false, problem: "no application key: the stream's close ends it" };
    return updateVonageCall({
      baseUrl: vars.VONAGE_API_BASE_URL ?? VONAGE_API_BASE_URL,
      applicationId: vars.VONAGE_APPLICATION_ID,
      privateKey: vars.VONAGE_PRIVATE_KEY,
      uuid: call.uuid,
      update: { action: "hangup" },
    });
  },
};
