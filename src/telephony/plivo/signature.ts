/**
 * Plivo's V3 webhook signature, as Plivo documents it ("Validate requests from Plivo",
 * https://www.plivo.com/docs/voice/concepts/signature-validation) and its SDKs compute it
 * (plivo-node, lib/utils/v3Security.js): for a POST, the URL Plivo requested — scheme, host,
 * path — then `?` and its query's parameters sorted by name (`name=value` joined by `&`), then
 * `.` if there were both, then the POST parameters sorted by name as `name=value` with no
 * separator; then `.` and the request's nonce (`X-Plivo-Signature-V3-Nonce`); HMAC-SHA256 of
 * that with the account's auth token; base64. `X-Plivo-Signature-V3` may hold several
 * signatures, comma-separated (an account with more than one auth token): any one will do.
 *
 * A name that occurs more than once contributes each of its values, sorted, as the SDK does.
 * Compared in constant time, so a forger learns nothing from how long a refusal takes.
 */
import { bytesToBase64 } from "../../providers/base64.js";
import { safeEqual } from "../../safe-equal.js";

export const PLIVO_SIGNATURE_HEADER = "X-Plivo-Signature-V3";
export const PLIVO_NONCE_HEADER = "X-Plivo-Signature-V3-Nonce";

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Each name with its values sorted, the names sorted (code-unit order, as the SDK sorts). */
function sortedPairs(params: URLSearchParams): Array<[string, string]> {
  return [...params.entries()].sort(([an, av], [bn, bv]) => byName(an, bn) || byName(av, bv));
}

/** The string a POST of `params` to `url` is signed over, before its nonce. */
export function plivoSignedBase(url: string, params: URLSearchParams): string {
  const parsed = new URL(url);
  const query = sortedPairs(parsed.searchParams)
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  let base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  const hasPost = [...params.keys()].length > 0;
  if (query.length > 0 || hasPost) base += `?${query}`;
  if (query.length > 0 && hasPost) base += ".";
  return (
    base +
    sortedPairs(params)
      .map(([name, value]) => `${name}=${value}`)
      .join("")
  );
}

/** The V3 signature Plivo would send for a POST of `params` to `url` with `nonce`. */
export async function plivoSignature(
  authToken: string,
  url: string,
  nonce: string,
  params: URLSearchParams,
): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(authToken),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    enc.encode(`${plivoSignedBase(url, params)}.${nonce}`),
  );
  return bytesToBase64(new Uint8Array(mac));
}

/** Whether the header (null when absent) holds Plivo's signature of this request. */
export async function isValidPlivoSignature(
  authToken: string,
  url: string,
  params: URLSearchParams,
  signatures: string | null,
  nonce: string | null,
): Promise<boolean> {
  if (signatures === null || signatures === "" || nonce === null || nonce === "") return false;
  const expected = await plivoSignature(authToken, url, nonce, params);
  let matched = false;
  // Every offered signature is compared, whatever matched first.
  for (const offered of signatures.split(",").slice(0, 8))
    if (await safeEqual(offered.trim(), expected)) matched = true;
  return matched;
}
