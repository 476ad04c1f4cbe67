/**
 * An inbound call's voice webhook as Telnyx sends it to a TeXML application: a form-encoded
 * POST of the call's parameters (AccountSid, CallSid, From, To, CallStatus, Direction, …),
 * signed with `telnyx-signature-ed25519` over `${telnyx-timestamp}|${body}`. Built by whoever
 * plays the carrier: the carrier stand-in, and the demo page's calls (signed with a local
 * key the Worker is given for that).
 */
import { TELNYX_SIGNATURE_HEADER, TELNYX_TIMESTAMP_HEADER, telnyxSignature } from "./signature.js";

/** A TeXML CallSid (`v3:` and 54 URL-safe characters), fresh each time. */
export function telnyxCallSid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(40));
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  return `v3:${[...bytes].map((b) => alphabet[b % 64]).join("")}`;
}

/** A Telnyx account id (a UUID). */
export function telnyxAccountSid(): string {
  return crypto.randomUUID();
}

export interface InboundCall {
  /** The TeXML application's voice URL, as configured. */
  voiceUrl: string;
  /** The key Telnyx signs with (PKCS#8, base64): a stand-in's own. */
  privateKey: string;
  accountSid: string;
  callSid: string;
  from: string;
  to: string;
  /** Unix seconds the webhook is dated (now unless a test says otherwise). */
  timestamp?: number;
}

/** The signed voice webhook of a ringing inbound call. */
export async function inboundCallWebhook(call: InboundCall): Promise<Request> {
  const form = new URLSearchParams({
    AccountSid: call.accountSid,
    CallSid: call.callSid,
    CallSidLegacy: call.callSid,
    CallStatus: "ringing",
    Direction: "inbound",
    From: call.from,
    To: call.to,
  });
  const body = new TextEncoder().encode(form.toString());
  const timestamp = String(call.timestamp ?? Math.floor(Date.now() / 1000));
  return new Request(call.voiceUrl, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      [TELNYX_TIMESTAMP_HEADER]: timestamp,
      [TELNYX_SIGNATURE_HEADER]: await telnyxSignature(call.privateKey, timestamp, body),
    },
    body,
  });
}
