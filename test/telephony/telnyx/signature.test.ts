/**
 * Telnyx's webhook signature (Ed25519 over `timestamp|body`), against Node's own Ed25519 as
 * the independent signer: what it signs verifies; a changed body, another key, a stale
 * timestamp, a missing header or a malformed signature does not.
 */
import { createPrivateKey, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  isTelnyxPublicKey,
  isValidTelnyxSignature,
  telnyxSignature,
} from "../../../src/telephony/telnyx/signature.js";

/** A test key pair (the workers tests' TELNYX_PUBLIC_KEY and its private half). */
const PUBLIC = "yl/w8X7Qo9Qvfrmxbb3SHCCgTwhrTti3hS4uDxMTRJg=";
const PRIVATE = "MC4CAQAwBQYDK2VwBCIEIPwjsZWbzQ24tgIb6lMfHUAUSOMygqVSBuo+6mSr3WNl";
const OTHER_PRIVATE = "MC4CAQAwBQYDK2VwBCIEIBv6ObIekqIOMqnBDN/5MTB2lQxDGRANPPv7jIKvYvkp";

const body = new TextEncoder().encode("AccountSid=a&CallSid=v3%3Aabc&From=%2B15550001111");
const now = 1_760_000_000;
const ts = String(now);

/** Node's signature of `timestamp|body`: an implementation that is not ours. */
function nodeSignature(privateKey: string, timestamp: string, bytes: Uint8Array): string {
  const key = createPrivateKey({
    key: Buffer.from(privateKey, "base64"),
    format: "der",
    type: "pkcs8",
  });
  return sign(null, Buffer.concat([Buffer.from(`${timestamp}|`), bytes]), key).toString("base64");
}

describe("Telnyx's Ed25519 webhook signature", () => {
  it("verifies what Telnyx's scheme signs (Node as the signer) and signs as Node does", async () => {
    const signature = nodeSignature(PRIVATE, ts, body);
    expect(await isValidTelnyxSignature(PUBLIC, body, signature, ts, now)).toBe(true);
    expect(await telnyxSignature(PRIVATE, ts, body)).toBe(signature);
  });

  it("refuses a changed body, another key, and a signature over another timestamp", async () => {
    const signature = nodeSignature(PRIVATE, ts, body);
    const changed = new TextEncoder().encode("AccountSid=a&CallSid=v3%3Aabd&From=%2B15550001111");
    expect(await isValidTelnyxSignature(PUBLIC, changed, signature, ts, now)).toBe(false);
    const forged = nodeSignature(OTHER_PRIVATE, ts, body);
    expect(await isValidTelnyxSignature(PUBLIC, body, forged, ts, now)).toBe(false);
    expect(await isValidTelnyxSignature(PUBLIC, body, signature, String(now + 1), now)).toBe(false);
  });

  it("refuses a timestamp more than five minutes away, either way (a replay)", async () => {
    const old = String(now - 301);
    expect(
      await isValidTelnyxSignature(PUBLIC, body, nodeSignature(PRIVATE, old, body), old, now),
    ).toBe(false);
    const soon = String(now + 301);
    expect(
      await isValidTelnyxSignature(PUBLIC, body, nodeSignature(PRIVATE, soon, body), soon, now),
    ).toBe(false);
    const edge = String(now - 300);
    expect(
      await isValidTelnyxSignature(PUBLIC, body, nodeSignature(PRIVATE, edge, body), edge, now),
    ).toBe(true);
  });

  it("refuses missing headers and malformed signatures or keys, without throwing", async () => {
    const signature = nodeSignature(PRIVATE, ts, body);
    expect(await isValidTelnyxSignature(PUBLIC, body, null, ts, now)).toBe(false);
    expect(await isValidTelnyxSignature(PUBLIC, body, signature, null, now)).toBe(false);
    expect(await isValidTelnyxSignature(PUBLIC, body, "not base64!", ts, now)).toBe(false);
    expect(await isValidTelnyxSignature(PUBLIC, body, signature.slice(0, 40), ts, now)).toBe(false);
    expect(await isValidTelnyxSignature("AAAA", body, signature, ts, now)).toBe(false);
    expect(await isValidTelnyxSignature(PUBLIC, body, signature, "12ab", now)).toBe(false);
    expect(isTelnyxPublicKey(PUBLIC)).toBe(true);
    expect(isTelnyxPublicKey("AAAA")).toBe(false);
  });
});
