/**
 * Plivo's V3 signature, against Node's HMAC over the string Plivo's SDK builds (the URL, its
 * sorted query, `.`, the sorted POST parameters as name=value, `.`, the nonce): what it signs
 * verifies, in any of several comma-separated signatures; a changed parameter, URL, nonce or
 * token does not.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  isValidPlivoSignature,
  plivoSignature,
  plivoSignedBase,
} from "../../../src/telephony/plivo/signature.js";

const TOKEN = "MzU0NjU0Njg0NjU0Njg0";
const url = "https://gw.test/v1/telephony/plivo/voice?simulator=wire%3Dgemini&b=2";
const params = new URLSearchParams({ To: "15550002222", CallUUID: "c-1", From: "15550001111" });
const nonce = "05429567804466091622";

/** Node's HMAC over the string, as written out by hand from the SDK's rules. */
const expected = createHmac("sha256", TOKEN)
  .update(
    "https://gw.test/v1/telephony/plivo/voice?b=2&simulator=wire=gemini.CallUUID=c-1From=15550001111To=15550002222." +
      nonce,
  )
  .digest("base64");

describe("Plivo's V3 signature", () => {
  it("signs the URL, its sorted query and the sorted parameters, then the nonce", async () => {
    expect(plivoSignedBase(url, params)).toBe(
      "https://gw.test/v1/telephony/plivo/voice?b=2&simulator=wire=gemini.CallUUID=c-1From=15550001111To=15550002222",
    );
    expect(await plivoSignature(TOKEN, url, nonce, params)).toBe(expected);
    // No query: `?` then the parameters; no parameters and no query: the URL alone.
    expect(plivoSignedBase("https://gw.test/a", params)).toBe(
      "https://gw.test/a?CallUUID=c-1From=15550001111To=15550002222",
    );
    expect(plivoSignedBase("https://gw.test/a", new URLSearchParams())).toBe("https://gw.test/a");
  });

  it("verifies any one of several signatures (an account with two tokens)", async () => {
    expect(await isValidPlivoSignature(TOKEN, url, params, expected, nonce)).toBe(true);
    expect(await isValidPlivoSignature(TOKEN, url, params, `bm90IGl0,${expected}`, nonce)).toBe(
      true,
    );
  });

  it("refuses a changed parameter, URL, nonce or token, and missing headers", async () => {
    const changed = new URLSearchParams(params);
    changed.set("To", "15550009999");
    expect(await isValidPlivoSignature(TOKEN, url, changed, expected, nonce)).toBe(false);
    expect(await isValidPlivoSignature(TOKEN, `${url}&demo=1`, params, expected, nonce)).toBe(
      false,
    );
    expect(await isValidPlivoSignature(TOKEN, url, params, expected, "1")).toBe(false);
    expect(await isValidPlivoSignature("another-token-0000", url, params, expected, nonce)).toBe(
      false,
    );
    expect(await isValidPlivoSignature(TOKEN, url, params, null, nonce)).toBe(false);
    expect(await isValidPlivoSignature(TOKEN, url, params, expected, null)).toBe(false);
  });
});
