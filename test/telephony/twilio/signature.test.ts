// X-Twilio-Signature against the example of Twilio's "Webhooks security" page
// (https://www.twilio.com/docs/usage/webhooks/webhooks-security), then tampering.
import { describe, expect, it } from "vitest";
import {
  isValidTwilioSignature,
  twilioSignature,
} from "../../../src/telephony/twilio/signature.js";

const AUTH_TOKEN = "12345";
const URL_ = "https://mycompany.com/myapp.php?foo=1&bar=2";
const PARAMS = {
  CallSid: "CA1234567890ABCDE",
  Caller: "+12349013030",
  Digits: "1234",
  From: "+12349013030",
  To: "+18005551212",
};
const EXPECTED = "0/KCTR6DLpKmkAf8muzZqo1nDgQ=";

describe("twilioSignature", () => {
  it("gives the documented signature for the documented request", async () => {
    expect(await twilioSignature(AUTH_TOKEN, URL_, PARAMS)).toBe(EXPECTED);
  });

  it("sorts by name whatever the order the form came in", async () => {
    const form = new URLSearchParams([
      ["To", PARAMS.To],
      ["Digits", PARAMS.Digits],
      ["From", PARAMS.From],
      ["CallSid", PARAMS.CallSid],
      ["Caller", PARAMS.Caller],
    ]);
    expect(await twilioSignature(AUTH_TOKEN, URL_, form)).toBe(EXPECTED);
  });
});

describe("isValidTwilioSignature", () => {
  it("accepts the documented signature", async () => {
    expect(await isValidTwilioSignature(AUTH_TOKEN, URL_, PARAMS, EXPECTED)).toBe(true);
  });

  it("refuses a changed parameter, an added one and a removed one", async () => {
    const changed = { ...PARAMS, Digits: "1235" };
    const added = { ...PARAMS, Extra: "x" };
    const { To: _to, ...removed } = PARAMS;
    for (const params of [changed, added, removed])
      expect(await isValidTwilioSignature(AUTH_TOKEN, URL_, params, EXPECTED)).toBe(false);
  });

  it("refuses a changed URL (host, path, query, scheme)", async () => {
    for (const url of [
      "https://evil.example/myapp.php?foo=1&bar=2",
      "https://mycompany.com/other.php?foo=1&bar=2",
      "https://mycompany.com/myapp.php?foo=1&bar=3",
      "http://mycompany.com/myapp.php?foo=1&bar=2",
    ])
      expect(await isValidTwilioSignature(AUTH_TOKEN, url, PARAMS, EXPECTED)).toBe(false);
  });

  it("refuses another auth token, a changed signature, a missing or empty header", async () => {
    expect(await isValidTwilioSignature("54321", URL_, PARAMS, EXPECTED)).toBe(false);
    expect(
      await isValidTwilioSignature(AUTH_TOKEN, URL_, PARAMS, `${EXPECTED.slice(0, -2)}A=`),
    ).toBe(false);
    expect(await isValidTwilioSignature(AUTH_TOKEN, URL_, PARAMS, null)).toBe(false);
    expect(await isValidTwilioSignature(AUTH_TOKEN, URL_, PARAMS, "")).toBe(false);
  });
});
