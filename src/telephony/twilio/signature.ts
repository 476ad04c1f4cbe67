/**
 * X-Twilio-Signature, as Twilio documents it ("Webhooks security",
 * https://www.twilio.com/docs/usage/webhooks/webhooks-security): the full URL Twilio
 * requested (scheme, host, path, query string as sent), followed by each POST parameter's
 * name and value with no delimiters, the parameters sorted by name; HMAC-SHA1 of that string
 * keyed with the account's Auth Token; base64.
 *
 * A name that occurs more than once contributes each of its values (sorted), as Twilio's
 * helper libraries do. Requests with a JSON body (signed over a `bodySHA256` query
 * parameter) are not handled: voice webhooks are form-encoded.
 */
import { bytesToBase64 } from "../../providers/base64.js";
import { safeEqual } from "../../safe-equal.js";

export const TWILIO_SIGNATURE_HEADER = "X-Twilio-Signature";

export type WebhookParams = URLSearchParams | Record<string, string>;

function sortedPairs(params: WebhookParams): Array<[string, string]> {
  const pairs: Array<[string, string]> =
    params instanceof URLSearchParams ? [...params.entries()] : Object.entries(params);
  // Code-unit order, as the helper libraries' sort() gives.
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return pairs.sort(([an, av], [bn, bv]) => order(an, bn) || order(av, bv));
}

/** The signature Twilio would send for a POST of `params` to `url`. */
export async function twilioSignature(
  authToken: string,
  url: string,
  params: WebhookParams,
): Promise<string> {
  const data =
    url +
    sortedPairs(params)
      .map(([name, value]) => name + value)
      .join("");
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(authToken),
    { name: "HMAC", hash: "SHA-1" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, enc.encode(data));
  return bytesToBase64(new Uint8Array(mac));
}

/**
 * Whether `signature` (the header's value; null when absent) is Twilio's for this request.
 * Compared in constant time, so a forger learns nothing from how long a refusal takes.
 */
export async function isValidTwilioSignature(
  authToken: string,
  url: string,
  params: WebhookParams,
  signature: string | null,
): Promise<boolean> {
  if (signature === null || signature === "") return false;
  return safeEqual(signature, await twilioSignature(authToken, url, params));
}
