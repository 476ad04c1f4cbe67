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
export async function inboundCallWebhook(call: InboundCall): Promise<Request> {
  const form = new URLSearchParams({
    AccountSid: call.accountSid,
    ApiVersion: "2010-04-01",
    CallSid: call.callSid,
    CallStatus: "ringing",
    Called: call.to,
    Caller: call.from,
    Direction: "inbound",
    From: call.from,
    To: call.to,
  });
  return new Request(call.voiceUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      [TWILIO_SIGNATURE_HEADER]: await twilioSignature(call.authToken, call.voiceUrl, form),
      "User-Agent": "TwilioProxy/1.1",
    },
    body: form.toString(),
  });
}
