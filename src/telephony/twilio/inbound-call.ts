/**
 * An inbound call's voice webhook as Twilio sends it ("Webhooks security",
 * https://www.twilio.com/docs/usage/webhooks/webhooks-security): a form-encoded POST of the
 * call's parameters, signed over the exact URL. Built by whoever plays the carrier: the
 * carrier stand-in, and the demo page's calls (whose webhook the Worker signs itself).
 */
import { TWILIO_SIGNATURE_HEADER, twilioSignature } from "./signature.js";

/** A Twilio sid: its two-letter kind and 32 hex digits, fresh each time. */
export function twilioSid(prefix: "AC" | "CA" | "MZ"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return prefix + [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface InboundCall {
  /** The number's voice URL, as configured (signed as given, query string included). */
  voiceUrl: string;
  authToken: string;
  accountSid: string;
  callSid: string;
  from: string;
  to: string;
}

/** The signed voice webhook of a ringing inbound call. */
export function inboundCallWebhook(call: InboundCall): Promise<Request> {
  return callWebhook(call.voiceUrl, call, "ringing");
}

/**
 * The signed request to a `<Connect action>` URL, made when the `<Connect>` ends (its stream
 * closed) while the call goes on ("TwiML Voice: <Connect>", https://www.twilio.com/docs/voice/twiml/connect):
 * the call's parameters, `CallStatus` as the call stands.
 */
export function connectActionWebhook(
  actionUrl: string,
  call: Omit<InboundCall, "voiceUrl">,
  status: "in-progress" | "completed" = "in-progress",
): Promise<Request> {
  return callWebhook(actionUrl, call, status);
}

async function callWebhook(
  url: string,
  call: Omit<InboundCall, "voiceUrl">,
  status: string,
): Promise<Request> {
  const form = new URLSearchParams({
    AccountSid: call.accountSid,
    ApiVersion: "2010-04-01",
    CallSid: call.callSid,
    CallStatus: status,
    Called: call.to,
    Caller: call.from,
    Direction: "inbound",
    From: call.from,
    To: call.to,
  });
  return new Request(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      [TWILIO_SIGNATURE_HEADER]: await twilioSignature(call.authToken, url, form),
      "User-Agent": "TwilioProxy/1.1",
    },
    body: form.toString(),
  });
}
