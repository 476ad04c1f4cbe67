/**
 * An inbound call's answer webhook as Vonage sends it with `answer_method` POST: a JSON body
 * {to, from, uuid, conversation_uuid, region_url, …} (numbers without their +), its
 * `Authorization` a JWT signed with the signature secret over the body's hash. Built by whoever
 * plays the carrier: the carrier stand-in, and the demo page's calls (the Worker signs those
 * itself). `signedVonageRequest` makes any of Vonage's webhooks (the event webhook too).
 */
import { vonageAuthorization } from "./signature.js";

/** A Vonage call uuid, fresh each time. */
export function vonageCallUuid(): string {
  return crypto.randomUUID();
}

/** A signed POST of `body` (JSON) to `url`, as Vonage makes its webhooks. */
export async function signedVonageRequest(
  url: string,
  signatureSecret: string,
  body: Record<string, unknown>,
  iat?: number,
): Promise<Request> {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const authorization = await vonageAuthorization(signatureSecret, bytes, {
    apiKey: "abcd1234",
    applicationId: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
    ...(iat === undefined ? {} : { iat }),
  });
  return new Request(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: authorization },
    body: bytes,
  });
}

export interface InboundCall {
  /** The application's answer URL, as configured. */
  answerUrl: string;
  signatureSecret: string;
  uuid: string;
  from: string;
  to: string;
}

/** The signed answer webhook of a ringing inbound call. */
export function inboundCallWebhook(call: InboundCall): Promise<Request> {
  return signedVonageRequest(call.answerUrl, call.signatureSecret, {
    from: call.from.replace(/^\+/, ""),
    to: call.to.replace(/^\+/, ""),
    uuid: call.uuid,
    conversation_uuid: `CON-${crypto.randomUUID()}`,
    region_url: "https://api-us-3.vonage.com",
    custom_data: {},
  });
}
