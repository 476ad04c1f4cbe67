/**
 * OpenAI's webhooks are signed as the Standard Webhooks scheme says (OpenAI's webhooks guide;
 * standardwebhooks.com): three headers, `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature` (space-separated `v1,<base64>` entries, one per active secret), and the
 * signature is HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed by the secret's bytes (the
 * base64 after `whsec_`). A delivery older or newer than the tolerance is refused (a replay);
 * every candidate is compared in constant time. Only `v1` entries are candidates (the scheme's
 * one version; OpenAI sends no other).
 */
import { safeEqual } from "../../safe-equal.js";

/** How far a delivery's timestamp may be from now: the SDKs' default (5 minutes). */
export const WEBHOOK_TOLERANCE_S = 300;

const SECRET_PREFIX = "whsec_";

/**
 * The secret's key bytes: the base64 after `whsec_` (the form OpenAI's dashboard gives), or a
 * secret without that prefix as its own UTF-8 bytes (as the official SDK takes one). Null for
 * an empty secret, or `whsec_` followed by no base64 (a setting to fix).
 */
export function webhookKey(secret: string): Uint8Array | null {
  if (secret === "") return null;
  if (!secret.startsWith(SECRET_PREFIX)) return new TextEncoder().encode(secret);
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return null;
  try {
    return Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** Why a delivery was refused (for the timeline and tests; the answer is a bare 403). */
export type WebhookRefusal = "missing_headers" | "stale" | "bad_signature" | "bad_secret";

/**
 * Whether `body` with these headers was signed with `secret` within the tolerance of
 * `nowMs`: null when it was, else why not.
 */
export async function webhookRefusal(
  secret: string,
  headers: Headers,
  body: string,
  nowMs: number,
): Promise<WebhookRefusal | null> {
  const key = webhookKey(secret);
  if (key === null) return "bad_secret";
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signatures = headers.get("webhook-signature");
  if (id === null || timestamp === null || signatures === null) return "missing_headers";
  if (!/^\d{1,12}$/.test(timestamp)) return "stale";
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_S) return "stale";
  const expected = await sign(key, `${id}.${timestamp}.${body}`);
  let matched = false;
  for (const entry of signatures.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma === -1 || entry.slice(0, comma) !== "v1") continue;
    // Every entry is compared (no early exit): which one matched does not show in the time.
    if (await safeEqual(entry.slice(comma + 1), expected)) matched = true;
  }
  return matched ? null : "bad_signature";
}

async function sign(key: Uint8Array, content: string): Promise<string> {
  const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(content)),
  );
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return btoa(binary);
}
