/**
 * Plivo as a carrier (src/telephony/carrier-contract.ts): answer-URL and hangup webhooks
 * signed with Plivo's V3 signature (signature.ts), Plivo XML answers (plivo-xml.ts), a
 * bidirectional μ-law audio stream (stream-messages.ts, call-stream.ts), transfers and
 * hang-ups through the Voice API (call-api.ts). A transfer has Plivo fetch its <Dial> from
 * liveline's POST /v1/telephony/plivo/transfer?to=… (`dial` below), signed like any webhook.
 *
 * Its vars: PLIVO_AUTH_ID (the account's auth ID), PLIVO_AUTH_TOKEN (a wrangler secret: it
 * signs the webhooks and authenticates REST calls), PLIVO_API_BASE_URL (tests point it at a
 * stand-in). Numbers come without their + from Plivo: they are read as E.164.
 */
import { z } from "zod";
import { checkedString, optionalHttpUrl, secret } from "../../var-schemas.js";
import type { CallStreamRead, Carrier, Reattach } from "../carrier-contract.js";
import { readJson } from "../read-json.js";
import { hangUpCall, PLIVO_API_BASE_URL, transferCall } from "./call-api.js";
import { CALL_OVER, CallMetadata } from "./call-metadata.js";
import { plivoStreamLink } from "./call-stream.js";
import { connectStreamXml, dialXml, hangupXml, tokenFromHex } from "./plivo-xml.js";
import { isValidPlivoSignature, PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER } from "./signature.js";
import { extraHeaders, PlivoStreamEvent } from "./stream-messages.js";

const PlivoVars = z.object({
  /** The account's auth ID (MA… or SA…, 20 characters): REST calls name it. */
  PLIVO_AUTH_ID: checkedString("a Plivo auth ID: 20 capital letters and digits", (v) => {
    if (!/^[A-Z0-9]{20}$/.test(v)) throw new Error("is not 20 capital letters and digits");
  }),
  /** Secret: the account's auth token, which signs its webhooks (phone calls). */
  PLIVO_AUTH_TOKEN: secret(16),
  /** Where Plivo's REST API is: https://api.plivo.com unless set. */
  PLIVO_API_BASE_URL: optionalHttpUrl("https://api.plivo.com"),
});

/**
 * This carrier's `reattach` (carrier-contract.ts): whether and how a call whose stream closed
 * without a hang-up is connected to its session again.
 */
export const plivoReattach: Reattach = {
  kind: "none",
  why: "liveline's XML has nothing after <Stream keepCallAlive>: Plivo ends the call with its stream. (It runs the XML after <Stream> once the stream disconnects (Plivo <Stream>), so a <Redirect> there could reattach; not done.)",
};

const XML = "text/xml; charset=utf-8";

/** Plivo's numbers (`14155551234`) as E.164; a SIP URI or a name stays as it is. */
function e164(number: string | null): string {
  if (number === null) return "";
  return /^\d{6,15}$/.test(number) ? `+${number}` : number;
}

export const plivoCarrier: Carrier<(typeof PlivoVars)["shape"], CallMetadata> = {
  reattach: plivoReattach,
  audio: "g711_ulaw",
  vars: PlivoVars,
  call: CallMetadata,
  unavailable: (vars) =>
    vars.PLIVO_AUTH_TOKEN === undefined
      ? "phone calls need PLIVO_AUTH_TOKEN (wrangler secret put PLIVO_AUTH_TOKEN)"
      : null,

  async readWebhook(vars, request) {
    if (vars.PLIVO_AUTH_TOKEN === undefined) return null;
    // Read as bytes: the runtime warns on .text() of a form body.
    const params = new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
    const signed = await isValidPlivoSignature(
      vars.PLIVO_AUTH_TOKEN,
      request.url,
      params,
      request.headers.get(PLIVO_SIGNATURE_HEADER),
      request.headers.get(PLIVO_NONCE_HEADER),
    );
    return signed ? params : null;
  },

  inboundCall(params, demo, url) {
    const callUuid = params.get("CallUUID");
    if (callUuid === null || callUuid === "")
      return { ok: false, problem: "the webhook has no CallUUID" };
    const call: CallMetadata = {
      carrier: "plivo",
      callUuid,
      from: e164(params.get("From")),
      to: e164(params.get("To")),
      origin: new URL(url).origin,
      ...(demo ? { demo: true as const } : {}),
    };
    return { ok: true, callId: callUuid, call };
  },

  endedCall(params) {
    const callUuid = params.get("CallUUID");
    if (callUuid === null || callUuid === "") return null;
    return CALL_OVER.has(params.get("CallStatus") ?? "") ? callUuid : null;
  },

  connect: (streamUrl, token) => ({ body: connectStreamXml(streamUrl, token), contentType: XML }),
  hangUp: () => ({ body: hangupXml(), contentType: XML }),
  dial: (number) => ({ body: dialXml(number), contentType: XML }),

  readStreamEvent(data): CallStreamRead {
    if (typeof data !== "string") return { ok: false, problem: "a binary message" };
    const read = readJson(PlivoStreamEvent, data);
    if (!read.ok) return read;
    const message = read.message;
    switch (message.event) {
      case "start": {
        const { callId, streamId, mediaFormat } = message.start;
        if (mediaFormat.encoding !== "audio/x-mulaw" || mediaFormat.sampleRate !== 8000)
          return {
            ok: false,
            problem: `the stream carries ${mediaFormat.encoding} at ${mediaFormat.sampleRate} Hz: liveline asked for audio/x-mulaw at 8000 Hz`,
          };
        const hex = extraHeaders(message.extra_headers).get("token");
        const token = hex === undefined ? null : tokenFromHex(hex);
        return {
          ok: true,
          event: { kind: "start", streamId, callId, token, line: "audio/x-mulaw;rate=8000" },
        };
      }
      case "media":
        if (message.media.track !== "inbound") return { ok: true, event: { kind: "ack" } };
        return { ok: true, event: { kind: "audio", payload: message.media.payload } };
      case "playedStream":
        return { ok: true, event: { kind: "mark", name: message.name } };
      case "dtmf":
        return { ok: true, event: { kind: "key", digit: message.dtmf.digit } };
      case "clearedAudio":
        return { ok: true, event: { kind: "ack" } };
      default: {
        const unreachable: never = message;
        throw new Error(`unhandled media stream event ${JSON.stringify(unreachable)}`);
      }
    }
  },

  streamLink: (ws, streamId, hooks, sessionAudio) =>
    plivoStreamLink(ws, streamId, hooks, sessionAudio),

  callId: (call) => call.callUuid,

  transferProblem(vars, call) {
    if (call.origin === undefined)
      return "this call's session has no origin to fetch the transfer from";
    if (vars.PLIVO_AUTH_ID === undefined || vars.PLIVO_AUTH_TOKEN === undefined)
      return "transfers need PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN";
    return null;
  },

  async transfer(vars, call, number) {
    const alegUrl = new URL("/v1/telephony/plivo/transfer", call.origin ?? "https://invalid");
    alegUrl.searchParams.set("to", number);
    return transferCall({
      baseUrl: vars.PLIVO_API_BASE_URL ?? PLIVO_API_BASE_URL,
      authId: vars.PLIVO_AUTH_ID ?? "",
      authToken: vars.PLIVO_AUTH_TOKEN ?? "",
      callUuid: call.callUuid,
      alegUrl: alegUrl.toString(),
    });
  },

  async endCall(vars, call) {
    if (vars.PLIVO_AUTH_ID === undefined || vars.PLIVO_AUTH_TOKEN === undefined || call.demo)
      return { ok: false, problem: "no PLIVO_AUTH_ID: the stream's close ends it" };
    return hangUpCall({
      baseUrl: vars.PLIVO_API_BASE_URL ?? PLIVO_API_BASE_URL,
      authId: vars.PLIVO_AUTH_ID,
      authToken: vars.PLIVO_AUTH_TOKEN,
      callUuid: call.callUuid,
    });
  },
};
