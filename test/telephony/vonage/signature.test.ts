/**
 * Vonage's signed webhooks (an HS256 JWT over the body's SHA-256), against Node's HMAC as the
 * independent signer, and the RS256 application token of liveline's REST calls against Node's
 * verifier.
 */
import { createHash, createHmac, generateKeyPairSync, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import { applicationToken } from "../../../src/telephony/vonage/app-token.js";
import {
  isValidVonageSignature,
  vonageAuthorization,
} from "../../../src/telephony/vonage/signature.js";

const SECRET = "test-vonage-signature-secret";
const body = new TextEncoder().encode('{"uuid":"u-1","from":"447700900000","to":"447700900001"}');
const now = 1_760_000_000;
const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

/** A token as Vonage makes one, by Node's hand. */
function nodeToken(
  claims: Record<string, unknown>,
  header: object = { alg: "HS256", typ: "JWT" },
  secret = SECRET,
) {
  const head = b64url(JSON.stringify(header));
  const payload = b64url(JSON.stringify(claims));
  const signature = createHmac("sha256", secret).update(`${head}.${payload}`).digest("base64url");
  return `Bearer ${head}.${payload}.${signature}`;
}
const hash = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const claims = {
  iat: now,
  jti: "j-1",
  iss: "Vonage",
  payload_hash: hash(body),
  api_key: "k",
  application_id: "a",
};

describe("Vonage's signed webhooks", () => {
  it("verifies Vonage's token for this body, and signs one Node verifies", async () => {
    expect(await isValidVonageSignature(SECRET, body, nodeToken(claims), now)).toBe(true);
    const ours = await vonageAuthorization(SECRET, body, {
      apiKey: "k",
      applicationId: "a",
      iat: now,
    });
    expect(await isValidVonageSignature(SECRET, body, ours, now)).toBe(true);
    const [head, payload, signature] = ours.slice(7).split(".");
    expect(createHmac("sha256", SECRET).update(`${head}.${payload}`).digest("base64url")).toBe(
      signature,
    );
  });

  it("refuses another body (the payload hash), another secret, another algorithm", async () => {
    const other = new TextEncoder().encode('{"uuid":"u-2"}');
    expect(await isValidVonageSignature(SECRET, other, nodeToken(claims), now)).toBe(false);
    expect(
      await isValidVonageSignature(
        SECRET,
        body,
        nodeToken(claims, undefined, "another-secret-000"),
        now,
      ),
    ).toBe(false);
    expect(
      await isValidVonageSignature(SECRET, body, nodeToken(claims, { alg: "none" }), now),
    ).toBe(false);
    expect(
      await isValidVonageSignature(
        SECRET,
        body,
        nodeToken({ ...claims, payload_hash: undefined }),
        now,
      ),
    ).toBe(false);
  });

  it("refuses a token issued more than five minutes away (a replay), and no token", async () => {
    expect(
      await isValidVonageSignature(SECRET, body, nodeToken({ ...claims, iat: now - 301 }), now),
    ).toBe(false);
    expect(
      await isValidVonageSignature(SECRET, body, nodeToken({ ...claims, iat: now - 300 }), now),
    ).toBe(true);
    expect(await isValidVonageSignature(SECRET, body, null, now)).toBe(false);
    expect(await isValidVonageSignature(SECRET, body, "Basic abc", now)).toBe(false);
  });
});

describe("Vonage's application token", () => {
  it("is an RS256 JWT of the application, a minute long, that its public key verifies", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const token = await applicationToken("aaaaaaaa-bbbb-cccc-dddd-0123456789ab", pem, now);
    const [head, payload, signature] = token.split(".") as [string, string, string];
    expect(JSON.parse(Buffer.from(head, "base64url").toString())).toEqual({
      alg: "RS256",
      typ: "JWT",
    });
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toMatchObject({
      application_id: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
      iat: now,
      exp: now + 60,
    });
    const ok = verify(
      "sha256",
      Buffer.from(`${head}.${payload}`),
      publicKey,
      Buffer.from(signature, "base64url"),
    );
    expect(ok).toBe(true);
  });
});
