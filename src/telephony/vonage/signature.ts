/**
 * Vonage's signed webhooks, as Vonage documents them ("Signed webhooks",
 * https://developer.vonage.com/en/getting-started/concepts/signing-messages; the Voice API
 * webhook reference): `Authorization: Bearer <JWT>`, the JWT HS256-signed with the account's
 * signature secret, its claims `iat`, `jti`, `iss` ("Vonage"), `api_key`, `application_id`
 * and `payload_hash` — the SHA-256 (hex) of the request's body, which ties the token to this
 * very payload. Vonage's SDKs verify the signature; liveline also checks the payload hash
 * (the body may not be altered) and that `iat` is within five minutes of now (a token seen
 * once cannot be replayed later).
 *
 * The signature is compared in constant time.
 */
import { bytesToBase64Url } from "../../providers/base64.js";
import { safeEqual } from "../../safe-equal.js";

/** A token's `iat` may be this far (seconds) from now, either way. */
export const VONAGE_TOLERANCE_S = 300;

const enc = new TextEncoder();

async function hmac(secret: string, data: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return bytesToBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(data))));
}

/** SHA-256 of the body, hex (the `payload_hash` claim). */
export async function payloadHash(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function jsonPart(part: string): Record<string, unknown> | null {
  try {
    const text = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const part = (value: object) => bytesToBase64Url(enc.encode(JSON.stringify(value)));

/**
 * Whether `authorization` (the header; null when absent) carries a JWT Vonage signed with
 * `secret` for this body, issued within the tolerance of `nowS` (Unix seconds).
 */
export async function isValidVonageSignature(
  secret: string,
  body: Uint8Array,
  authorization: string | null,
  nowS: number,
): Promise<boolean> {
  const token = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(
    authorization ?? "",
  )?.[1];
  if (token === undefined) return false;
  const [header, claims, signature] = token.split(".") as [string, string, string];
  const head = jsonPart(header);
  if (head === null || head.alg !== "HS256") return false;
  if (!(await safeEqual(signature, await hmac(secret, `${header}.${claims}`)))) return false;
  const read = jsonPart(claims);
  if (read === null) return false;
  const { iat, payload_hash } = read;
  if (typeof iat !== "number" || Math.abs(nowS - iat) > VONAGE_TOLERANCE_S) return false;
  return typeof payload_hash === "string" && payload_hash === (await payloadHash(body));
}

/** The claims Vonage puts in a webhook's token, for the stand-in and the demo page's calls. */
export interface VonageWebhookClaims {
  apiKey: string;
  applicationId: string;
  /** Unix seconds (now unless a test says otherwise). */
  iat?: number;
}

/** A webhook's `Authorization` value, as Vonage signs one for `body`. */
export async function vonageAuthorization(
  secret: string,
  body: Uint8Array,
  claims: VonageWebhookClaims,
): Promise<string> {
  const header = part({ alg: "HS256", typ: "JWT" });
  const payload = part({
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    iss: "Vonage",
    payload_hash: await payloadHash(body),
    api_key: claims.apiKey,
    application_id: claims.applicationId,
  });
  return `Bearer ${header}.${payload}.${await hmac(secret, `${header}.${payload}`)}`;
}
