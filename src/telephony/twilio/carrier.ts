/**
 * Twilio as a carrier (src/telephony/carrier-contract.ts): voice and status webhooks signed
 * with X-Twilio-Signature, TwiML answers, a bidirectional Media Stream, transfers through the
 * REST API. Its vars: TWILIO_AUTH_TOKEN (a wrangler secret; it signs the webhooks and
 * authenticates REST calls) and TWILIO_API_BASE_URL (tests point it at the carrier stand-in).
 */
import { z } from "zod";
import { optionalHttpUrl, secret } from "../../var-schemas.js";
import type { CallStreamRead, Carrier } from "../carrier-contract.js";
import { TWILIO_API_BASE_URL, updateCall } from "./call-api.js";
import { CALL_OVER, CallMetadata } from "./call-metadata.js";
import { TwilioCallStream } from "./call-stream.js";
import { isValidTwilioSignature, TWILIO_SIGNATURE_HEADER } from "./signature.js";
import { readTwilioStreamEvent } from "./stream-messages.js";
import { connectStreamTwiml, dialTwiml, hangupTwiml } from "./twiml.js";

const TwilioVars = z.object({
  /** Secret: the Twilio account's auth token, which signs its webhooks (phone calls). */
  TWILIO_AUTH_TOKEN: secret(16),
  /** Where Twilio's REST API is (call transfers): https://api.twilio.com unless set. */
  TWILIO_API_BASE_URL: optionalHttpUrl("https://api.twilio.com"),
});

const XML = "text/xml; charset=utf-8";

export const twilioCarrier: Carrier<(typeof TwilioVars)["shape"], CallMetadata> = {
  audio: "g711_ulaw",
  vars: TwilioVars,
  call: CallMetadata,
  unavailable: (vars) =>
    vars.TWILIO_AUTH_TOKEN === undefined
      ? "phone calls need TWILIO_AUTH_TOKEN (wrangler secret put TWILIO_AUTH_TOKEN)"
      : null,

  async readWebhook(vars, request) {
    if (vars.TWILIO_AUTH_TOKEN === undefined) return null;
    // Read as bytes: the runtime warns on .text() of a form body.
    const params = new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
    const signature = request.headers.get(TWILIO_SIGNATURE_HEADER);
    const signed = await isValidTwilioSignature(
      vars.TWILIO_AUTH_TOKEN,
      request.url,
      params,
      signature,
    );
    return signed ? params : null;
  },

  inboundCall(params, demo) {
    const callSid = params.get("CallSid");
    if (callSid === null || callSid === "")
      return { ok: false, problem: "the webhook has no CallSid" };
    const accountSid = params.get("AccountSid");
    const call: CallMetadata = {
      carrier: "twilio",
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

  // <Connect action>: when the stream ends and the call goes on, Twilio POSTs the action URL
  // (signed) with the call's parameters and runs the TwiML it answers.
  reattach: {
    kind: "answer_webhook",
    callOf(params) {
      const callSid = params.get("CallSid");
      if (callSid === null || callSid === "") return null;
      return { callId: callSid, over: CALL_OVER.has(params.get("CallStatus") ?? "") };
    },
  },

  connect: (streamUrl, token, _vars, _callId, reconnectUrl) => ({
    body: connectStreamTwiml({
      streamUrl,
      parameters: { token },
      ...(reconnectUrl === null ? {} : { action: reconnectUrl }),
    }),
    contentType: XML,
  }),
  hangUp: () => ({ body: hangupTwiml(), contentType: XML }),

  readStreamEvent(data): CallStreamRead {
    if (typeof data !== "string") return { ok: false, problem: "a binary message" };
    const read = readTwilioStreamEvent(data);
    if (!read.ok) return read;
    const message = read.message;
    switch (message.event) {
      case "connected":
        return { ok: true, event: { kind: "connected" } };
      case "start": {
        const { streamSid, callSid, customParameters } = message.start;
        const token = customParameters.token ?? null;
        return { ok: true, event: { kind: "start", streamId: streamSid, callId: callSid, token } };
      }
      case "media":
        return { ok: true, event: { kind: "audio", payload: message.media.payload } };
      case "mark":
        return { ok: true, event: { kind: "mark", name: message.mark.name } };
      case "dtmf":
        return { ok: true, event: { kind: "key", digit: message.dtmf.digit } };
      case "stop":
        return { ok: true, event: { kind: "stop" } };
      default: {
        const unreachable: never = message;
        throw new Error(`unhandled media stream event ${JSON.stringify(unreachable)}`);
      }
    }
  },

  streamLink: (ws, streamId, hooks, sessionAudio) =>
    new TwilioCallStream(ws, streamId, hooks, sessionAudio),

  callId: (call) => call.callSid,

  transferProblem(vars, call) {
    if (call.accountSid === undefined)
      return "this call's session has no AccountSid: it cannot be transferred";
    if (vars.TWILIO_AUTH_TOKEN === undefined) return "transfers need TWILIO_AUTH_TOKEN";
    return null;
  },

  async transfer(vars, call, number) {
    let twiml: string;
    try {
      twiml = dialTwiml(number);
    } catch (error) {
      return { ok: false, problem: (error as Error).message };
    }
    return updateCall({
      baseUrl: vars.TWILIO_API_BASE_URL ?? TWILIO_API_BASE_URL,
      accountSid: call.accountSid ?? "",
      authToken: vars.TWILIO_AUTH_TOKEN ?? "",
      callSid: call.callSid,
      twiml,
    });
  },
};
