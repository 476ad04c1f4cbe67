/**
 * The SIP stand-in's webhook, signed as OpenAI signs its webhooks (Standard Webhooks, as the
 * `openai` package's `webhooks.verifySignature` checks them): `webhook-id`,
 * `webhook-timestamp` (Unix seconds), `webhook-signature: v1,<base64 HMAC-SHA256>` over
 * `{id}.{timestamp}.{body}`, keyed by the bytes the secret's base64 (after `whsec_`) encodes
 * (a secret without the prefix: its own bytes).
 * Written from the scheme, not from liveline's verifier: the two must not share one
 * understanding (the unit tests check both against the official SDK).
 */

export interface SignedDelivery {
  headers: Record<string, string>;
  body: string;
}

export async function signedDelivery(
  secret: string,
  event: unknown,
  nowMs: number,
  id: string,
): Promise<SignedDelivery> {
  const body = JSON.stringify(event);
  const timestamp = String(Math.floor(nowMs / 1000));
  // `whsec_` and base64 (the dashboard's form), or a secret taken as its own bytes.
  const keyBytes = secret.startsWith("whsec_")
    ? Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0))
    : new TextEncoder().encode(secret);
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)),
  );
  const signature = btoa(String.fromCharCode(...signed));
  return {
    headers: {
      "content-type": "application/json",
      "user-agent": "OpenAI/1.0 (+https://platform.openai.com/docs/webhooks)",
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${signature}`,
    },
    body,
  };
}
