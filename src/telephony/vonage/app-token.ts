/**
 * The JWT that authenticates liveline's calls of Vonage's Voice API ("Authentication: JSON
 * Web Tokens", https://developer.vonage.com/en/getting-started/concepts/authentication):
 * RS256, signed with the Vonage application's private key, its claims `application_id`,
 * `iat`, `exp` and `jti`. Made per request, valid for a minute.
 */
import { base64ToBytes, bytesToBase64Url } from "../../providers/base64.js";

const TOKEN_TTL_S = 60;
const RS256 = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as const;

const part = (value: object) => bytesToBase64Url(new TextEncoder().encode(JSON.stringify(value)));

/** The key's DER bytes, from its PEM (PKCS#8: `-----BEGIN PRIVATE KEY-----`). */
export function pkcs8FromPem(pem: string): Uint8Array {
  const body = pem
    .replace(/-----BEGIN PRIVATE KEY-----|-----END PRIVATE KEY-----/g, "")
    .replace(/\\n/g, "")
    .replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+=*$/.test(body)) throw new Error("not a PKCS#8 PEM private key");
  return base64ToBytes(body);
}

/** A fresh application token for one REST call. */
export async function applicationToken(
  applicationId: string,
  privateKeyPem: string,
  nowS = Math.floor(Date.now() / 1000),
): Promise<string> {
  const key = await crypto.subtle.importKey("pkcs8", pkcs8FromPem(privateKeyPem), RS256, false, [
    "sign",
  ]);
  const header = part({ alg: "RS256", typ: "JWT" });
  const claims = part({
    application_id: applicationId,
    iat: nowS,
    exp: nowS + TOKEN_TTL_S,
    jti: crypto.randomUUID(),
  });
  const signature = new Uint8Array(
    await crypto.subtle.sign(RS256, key, new TextEncoder().encode(`${header}.${claims}`)),
  );
  return `${header}.${claims}.${bytesToBase64Url(signature)}`;
}
