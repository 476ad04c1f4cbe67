/**
 * An inbound call's answer-URL request as Plivo sends it: a form-encoded POST of the call's
 * parameters (CallUUID, From, To, CallStatus, Direction, Event, …), signed with
 * X-Plivo-Signature-V3 over the exact URL with a fresh nonce. Built by whoever plays the
 * carrier: the carrier stand-in, and the demo page's calls (the Worker signs those itself).
 */
import { PLIVO_NONCE_HEADER, PLIVO_SIGNATURE_HEADER, plivoSignature } from "./signature.js";

/** A Plivo CallUUID, fresh each time. */
export function plivoCallUuid(): string {
  return crypto.randomUUID();
}

/** A fresh nonce, as Plivo sends one with each request (digits). */
export function plivoNonce(): string {
  return [...crypto.getRandomValues(new Uint8Array(10))].map((b) => String(b % 10)).join("");
}

/** A signed POST of `params` to `url`, as Plivo makes one. */
export async function signedPlivoRequest(
  url: string,
  authToken: string,
  params: URLSearchParams,
): Promise<Request> {
  const nonce = plivoNonce();
  return new Request(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      [PLIVO_NONCE_HEADER]: nonce,
      [PLIVO_SIGNATURE_HEADER]: await plivoSignature(authToken, url, nonce, params),
    },
    body: params.toString(),
  });
}

export interface InboundCall {
  /** The application's answer URL, as configured. */
  answerUrl: string;
  authToken: string;
  callUuid: string;
  from: string;
  to: string;
}

/** The signed answer-URL request of a ringing inbound call. */
export function inboundCallWebhook(call: InboundCall): Promise<Request> {
  return signedPlivoRequest(
    call.answerUrl,
    call.authToken,
    new URLSearchParams({
      CallUUID: call.callUuid,
      CallStatus: "ringing",
      Direction: "inbound",
      Event: "StartApp",
      From: call.from.replace(/^\+/, ""),
      To: call.to.replace(/^\+/, ""),
    }),
  );
}
