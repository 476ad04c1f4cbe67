import { describe, expect, it } from "vitest";
import { redactCredentials, redactSecrets } from "../../src/recording/wire-format.js";
import { recordingChoice, secretsOf } from "../../src/session/recordings.js";

describe("what a session records", () => {
  it("its creator's choice over its agent's, the smaller budget, an announcement only when recorded", () => {
    const agent = { audio: true, wire: false, announce: "This call is recorded.", maxBytes: 1000 };
    expect(recordingChoice(agent, {}, 5000)).toEqual({
      audio: true,
      wire: false,
      maxBytes: 1000,
      announce: "This call is recorded.",
    });
    expect(recordingChoice(agent, { audio: false, wire: true, maxBytes: 400 }, 5000)).toEqual({
      audio: false,
      wire: true,
      maxBytes: 400,
      announce: "This call is recorded.",
    });
    // Nothing recorded: nothing to announce.
    expect(recordingChoice(agent, { audio: false }, 5000).announce).toBeNull();
    // No agent choice: nothing, and the Worker's budget.
    expect(recordingChoice(undefined, {}, 5000)).toEqual({
      audio: false,
      wire: false,
      maxBytes: 5000,
      announce: null,
    });
  });
});

describe("a wire recording's redaction", () => {
  it("blanks the Worker's secret values out of any text, longest first; leaves other vars", () => {
    const env = {
      API_KEY: "key-abcdef",
      OPENAI_API_KEY: "sk-live-key-abcdef-long",
      TWILIO_AUTH_TOKEN: "twilio-token-1",
      PROVIDER: "gemini",
      // A count and a number: no secrets (a frame's "100000" must stay).
      GEMINI_COMPRESSION_TRIGGER_TOKENS: "100000",
      TOKEN_TTL_SECONDS: "900",
    };
    const secrets = secretsOf(env);
    expect(secrets).toEqual(["sk-live-key-abcdef-long", "twilio-token-1", "key-abcdef"]);
    const text = `{"a":"sk-live-key-abcdef-long","b":"key-abcdef","c":"gemini"}`;
    expect(redactSecrets(text, secrets)).toBe(`{"a":"[redacted]","b":"[redacted]","c":"gemini"}`);
    // Control: without the secrets nothing is blanked.
    expect(redactSecrets(text, [])).toBe(text);
  });

  it("blanks fields named like a credential in metadata, at any depth", () => {
    expect(
      redactCredentials({
        tenant: "a",
        mcp: { apiToken: "x", url: "https://m" },
        list: [{ secret: "y" }],
      }),
    ).toEqual({
      tenant: "a",
      mcp: { apiToken: "[redacted]", url: "https://m" },
      list: [{ secret: "[redacted]" }],
    });
  });
});
