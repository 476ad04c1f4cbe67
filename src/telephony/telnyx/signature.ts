/**
 * Telnyx's webhook signature, as its documents and its SDK's verifier say ("Webhook sent when
 * a TeXML call is initiated" and every TeXML callback, https://developers.telnyx.com; the
 * telnyx-node verifier, src/lib/webhooks.ts): `telnyx-signature-ed25519` is the base64 Ed25519
 * signature of `${telnyx-timestamp}|${the raw body}`, made with Telnyx's private key; the
 * account's public key (32 bytes, base64, from the Mission Control portal) verifies it.
 * `telnyx-timestamp` is Unix seconds; one more than five minutes from now is refused (a
 * replay), as the SDK refuses it.
 *
 * An Ed25519 verification takes the same time whatever the signature: nothing to compare.
 */
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";

export const TELNYX_SIGNATURE_HEADER = "telnyx-signature-ed25519";
export const TELNYX_TIMESTAMP_HEADER = "telnyx-timestamp";
/** A webhook's timestamp may be this far (seconds) from now, either way. */
export const TELNYX_TOLERANCE_S = 300;

const ED25519 = { name: "Ed25519" } as const;

/** The bytes Telnyx signs: the timestamp, `|`, then the body exactly as sent. */
function signedBytes(timestamp: string, body: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(`${timestamp}|`);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** Bytes of strict, padded base64, or null. */
function decoded(base64: string): Uint8Array | null {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(base64)) return null;
  try {
    return base64ToBytes(base64);
  } catch {
    return null;
  }
}

/** Whether the public key is one Telnyx's verifier takes (32 bytes of base64). */
export function isTelnyxPublicKey(publicKey: string): boolean {
  return decoded(publicKey)?.length === 32;
}

/**
 * Whether a webhook carries Telnyx's signature of its body at a timestamp within the
 * tolerance of `nowS` (Unix seconds). Absent headers, a malformed key or signature: false.
 */
export async function isValidTelnyxSignature(
  publicKey: string,
  body: Uint8Array,
  signature: string | null,
  timestamp: string | null,
  nowS: number,
): Promise<boolean> {
  if (signature === null || timestamp === null || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowS - Number(timestamp)) > TELNYX_TOLERANCE_S) return false;
  const key = decoded(publicKey);
  const sig = decoded(signature);
  if (key === null || key.length !== 32 || sig === null || sig.length !== 64) return false;
  try {
    const verifier = await crypto.subtle.importKey("raw", key, ED25519, false, ["verify"]);
    return await crypto.subtle.verify(ED25519, verifier, sig, signedBytes(timestamp, body));
  } catch {
    return false;
  }
}

/**
 * Telnyx's signature of `body` at `timestamp`, with a private key (PKCS#8, base64): what the
 * carrier stand-in and the demo page's calls sign with (Telnyx itself holds the real key).
 */
export async function telnyxSignature(
  privateKey: string,
  timestamp: string,
  body: Uint8Array,
): Promise<string> {
  const key = await crypto.subtle.importKey("pkcs8", base64ToBytes(privateKey), ED25519, false, [
    "sign",
  ]);
  return bytesToBase64(
    new Uint8Array(await crypto.subtle.sign(ED25519, key, signedBytes(timestamp, body))),
  );
}
