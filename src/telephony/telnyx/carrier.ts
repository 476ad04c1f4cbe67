/**
 * Telnyx as a carrier (src/telephony/carrier-contract.ts), through a TeXML application: voice
 * and status webhooks signed with Ed25519 (signature.ts), TeXML answers (texml.ts), a
 * bidirectional RTP media stream in G.711 μ-law or A-law (stream-messages.ts,
 * call-stream.ts), transfers and hang-ups through the TeXML REST API (call-api.ts).
 *
 * Its vars: TELNYX_PUBLIC_KEY (the account's webhook public key: it verifies the webhooks),
 * TELNYX_API_KEY (a wrangler secret: transfers and hang-ups), TELNYX_CODEC (PCMU unless set;
 * PCMA for A-law trunks, Europe's among them: the stream then runs A-law both ways),
 * TELNYX_API_BASE_URL (tests point it at a stand-in), and TELNYX_DEMO_SIGNING_KEY (local
 * development only: the private key the demo page's calls are signed with, the pair of a
 * local TELNYX_PUBLIC_KEY).
 */
import { z } from "zod";
import { checkedString, optionalHttpUrl, optionalOneOf, secret } from "../../var-schemas.js";
import type { CallStreamRead, Carrier, Reattach } from "../carrier-contract.js";
import { readJson } from "../read-json.js";
import { TELNYX_API_BASE_URL, updateTexmlCall } from "./call-api.js";
import { CALL_OVER, CallMetadata } from "./call-metadata.js";
import { telnyxStreamLink } from "./call-stream.js";
import {
  isTelnyxPublicKey,
  isValidTelnyxSignature,
  TELNYX_SIGNATURE_HEADER,
  TELNYX_TIMESTAMP_HEADER,
} from "./signature.js";
import { TelnyxStreamEvent } from "./stream-messages.js";
import { connectStreamTexml, dialTexml, hangupTexml } from "./texml.js";

const TelnyxVars = z.object({
  /** The account's webhook public key (base64, 32 bytes): it verifies Telnyx's webhooks. */
  TELNYX_PUBLIC_KEY: checkedString("Telnyx's webhook public key: 32 bytes of base64", (v) => {
    if (!isTelnyxPublicKey(v)) throw new Error("is not 32 bytes of base64");
  }),
  /** Secret: the API key that authenticates transfers and hang-ups (TeXML REST). */
  TELNYX_API_KEY: secret(16),
  /** The codec of the calls' streams, both ways: PCMU (μ-law, default) or PCMA (A-law). */
  TELNYX_CODEC: optionalOneOf(["PCMU", "PCMA"] as const),
  /** Where Telnyx's REST API is: https://api.telnyx.com unless set. */
  TELNYX_API_BASE_URL: optionalHttpUrl("https://api.telnyx.com"),
  /** Secret, local development only: the demo page's calls are signed with it (PKCS#8, base64). */
  TELNYX_DEMO_SIGNING_KEY: secret(32),
});

/**
 * This carrier's `reattach` (carrier-contract.ts): whether and how a call whose stream closed
 * without a hang-up is connected to its session again.
 */
export const telnyxReattach: Reattach = {
  kind: "none",
  why: "liveline's TeXML has nothing after <Connect>: Telnyx ends the call with its stream. (It runs the TeXML after <Connect> once the stream stops (TeXML <Connect>), so a <Redirect> there could reattach; not done.)",
};

const XML = "text/xml; charset=utf-8";

export const telnyxCarrier: Carrier<(typeof TelnyxVars)["shape"], CallMetadata> = {
  reattach: telnyxReattach,
  audio: "g711_ulaw",
  vars: TelnyxVars,
  call: CallMetadata,
  unavailable: (vars) =>
    vars.TELNYX_PUBLIC_KEY === undefined
      ? "phone calls need TELNYX_PUBLIC_KEY (the webhook public key of the Telnyx account)"
      : null,

  async readWebhook(vars, request) {
    if (vars.TELNYX_PUBLIC_KEY === undefined) return null;
    // Verified over the body exactly as sent: read as bytes, decoded only once signed.
    const body = new Uint8Array(await request.arrayBuffer());
    const signed = await isValidTelnyxSignature(
      vars.TELNYX_PUBLIC_KEY,
      body,
      request.headers.get(TELNYX_SIGNATURE_HEADER),
      request.headers.get(TELNYX_TIMESTAMP_HEADER),
      Math.floor(Date.now() / 1000),
    );
    return signed ? new URLSearchParams(new TextDecoder().decode(body)) : null;
  },

  inboundCall(params, demo) {
    const callSid = params.get("CallSid");
    if (callSid === null || callSid === "")
      return { ok: false, problem: "the webhook has no CallSid" };
    const accountSid = params.get("AccountSid");
    const call: CallMetadata = {
      carrier: "telnyx",
      callSid,
      from: params.get("From") ?? "",
      to: params.get("To") ?? "",
      ...(accountSid === null ? {} : { accountSid }),
      ...(demo ? { demo: true as const } : {}),
    };
    return { ok: true, callId: callSid, call };
  },

  endedCall(params) {
    const callSid = params.get("CallSid");
    if (callSid === null || callSid === "") return null;
    return CALL_OVER.has(params.get("CallStatus") ?? "") ? callSid : null;
  },

  connect: (streamUrl, token, vars) => ({
    body: connectStreamTexml({
      streamUrl,
      codec: vars.TELNYX_CODEC ?? "PCMU",
      parameters: { token },
    }),
    contentType: XML,
  }),
  hangUp: () => ({ body: hangupTexml(), contentType: XML }),

  readStreamEvent(data): CallStreamRead {
    if (typeof data !== "string") return { ok: false, problem: "a binary message" };
    const read = readJson(TelnyxStreamEvent, data);
    if (!read.ok) return read;
    const message = read.message;
    switch (message.event) {
      case "connected":
        return { ok: true, event: { kind: "connected" } };
      case "start": {
        const { call_control_id, custom_parameters, media_format } = message.start;
        const { encoding, sample_rate, channels } = media_format;
        if ((encoding !== "PCMU" && encoding !== "PCMA") || sample_rate !== 8000 || channels !== 1)
          return {
            ok: false,
            problem: `the stream carries ${encoding} at ${sample_rate} Hz (${channels} channels): liveline speaks PCMU or PCMA at 8000 Hz, mono`,
          };
        return {
          ok: true,
          event: {
            kind: "start",
            streamId: message.stream_id,
            callId: call_control_id,
            token: custom_parameters?.token ?? null,
            line: encoding,
          },
        };
      }
      case "media":
        // Both tracks may be streamed; the caller's is the inbound one.
        if (message.media.track !== "inbound") return { ok: true, event: { kind: "ack" } };
        return { ok: true, event: { kind: "audio", payload: message.media.payload } };
      case "mark":
        return { ok: true, event: { kind: "mark", name: message.mark.name } };
      case "dtmf":
        return { ok: true, event: { kind: "key", digit: message.dtmf.digit } };
      case "error": {
        const { code, title, detail } = message.payload;
        return {
          ok: false,
          problem: `Telnyx reported a stream error: ${detail ?? title ?? "no detail"}${code === undefined ? "" : ` (${code})`}`,
        };
      }
      case "stop":
        return { ok: true, event: { kind: "stop" } };
      default: {
        const unreachable: never = message;
        throw new Error(`unhandled media stream event ${JSON.stringify(unreachable)}`);
      }
    }
  },

  streamLink: (ws, _streamId, hooks, sessionAudio, line) =>
    telnyxStreamLink(ws, hooks, sessionAudio, line),

  callId: (call) => call.callSid,

  transferProblem(vars, call) {
    if (call.accountSid === undefined)
      return "this call's session has no AccountSid: it cannot be transferred";
    if (vars.TELNYX_API_KEY === undefined) return "transfers need TELNYX_API_KEY";
    return null;
  },

  async transfer(vars, call, number) {
    let texml: string;
    try {
      texml = dialTexml(number);
    } catch (error) {
      return { ok: false, problem: (error as Error).message };
    }
    return updateTexmlCall({
      baseUrl: vars.TELNYX_API_BASE_URL ?? TELNYX_API_BASE_URL,
      apiKey: vars.TELNYX_API_KEY ?? "",
      accountSid: call.accountSid ?? "",
      callSid: call.callSid,
      update: { Texml: texml },
    });
  },

  async endCall(vars, call) {
    if (vars.TELNYX_API_KEY === undefined || call.accountSid === undefined || call.demo === true)
      return {
        ok: false,
        problem: "no TELNYX_API_KEY (or no AccountSid): the stream's close ends it",
      };
    return updateTexmlCall({
      baseUrl: vars.TELNYX_API_BASE_URL ?? TELNYX_API_BASE_URL,
      apiKey: vars.TELNYX_API_KEY,
      accountSid: call.accountSid,
      callSid: call.callSid,
      update: { Status: "completed" },
    });
  },
};
