import { describe, expect, it } from "vitest";
import { isLocalHostname, safeEqual } from "../src/http/auth.js";
import { providerUnavailable } from "../src/provider-registry.js";
import { parseClientFrame } from "../src/session/client-frames.js";
import { ConfigError, configLoader } from "../src/worker-config.js";

/** The settings of an env with nothing given in code. */
const loadConfig = (env: object) => configLoader().settings(env);

describe("loadConfig", () => {
  it("fills the documented defaults", () => {
    expect(loadConfig({})).toEqual({
      PROVIDER: "simulator",
      TOKEN_TTL_SECONDS: 900,
      IDLE_TIMEOUT_MS: 60_000,
      MAX_FRAME_BYTES: 262_144,
      MAX_FRAMES_PER_SECOND: 100,
      MAX_AUDIO_FRAMES_PER_SECOND: 250,
      MAX_CLIENTS_PER_SESSION: 8,
      STALE_SOCKET_MS: 30_000,
      CLIENT_SOCKETS: "streaming",
      CALL_RECONNECT_GRACE_MS: 30_000,
      TOOL_TIMEOUT_MS: 15_000,
      MODEL_TIMEOUT_MS: 15_000,
      UTTERANCE_QUIET_MS: 1_500,
      TIMELINE_MAX_ROWS: 10_000,
      SUBREQUEST_BUDGET: 10_000,
      DEMO_PAGE: "off",
      FAULT_INJECTION: "off",
      SIMULATOR_ROUTE: "off",
      RECORDING_PART_MS: 5_000,
      RECORDING_MAX_BYTES: 256 * 1024 * 1024,
      providers: ["simulator", "gemini", "openai", "gpt-live", "xai", "azure"],
    });
  });

  it("parses strings, treats empty as unset and splits ALLOWED_ORIGINS", () => {
    const config = loadConfig({
      PROVIDER: "gemini",
      GEMINI_API_KEY: "k",
      API_KEY: "",
      TOKEN_SECRET: "a-token-secret-of-20",
      TOKEN_TTL_SECONDS: "60",
      ALLOWED_ORIGINS: " https://A.example/ , https://b.example,,",
    });
    expect(config.PROVIDER).toBe("gemini");
    expect(config.API_KEY).toBeUndefined();
    expect(config.TOKEN_SECRET).toBe("a-token-secret-of-20");
    expect(config.TOKEN_TTL_SECONDS).toBe(60);
    expect(config.ALLOWED_ORIGINS).toEqual(["https://a.example", "https://b.example"]);
  });

  it("rejects bad values naming the var but never showing the value", () => {
    for (const env of [
      { PROVIDER: "claude-secret" },
      { MAX_FRAME_BYTES: "-5" },
      { TOKEN_TTL_SECONDS: "1.5" },
      { GEMINI_LIVE_URL: "not a url" },
      { GEMINI_ENDPOINT: "moon" },
      { OPENAI_REALTIME_URL: "still not a url" },
      { GEMINI_CAPABILITIES: "{not json" },
      { GEMINI_CAPABILITIES: '{"silentHonoured":"sometimes"}' },
      { GEMINI_COMPRESSION_TRIGGER_TOKENS: "12abc" },
      { SIMULATOR_KNOBS: "timeScale=abcSECRET" },
      { TOKEN_TTL_SECONDS: "9000000000000" },
      { MAX_FRAMES_PER_SECOND: "Infinity" },
      { API_KEY: " padded-key-123 " },
      { TOKEN_SECRET: "short-secret" },
      { OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://collector-SECRET" },
      { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc-SECRET" },
      { OTEL_EXPORTER_OTLP_HEADERS: "x-k=SECRET%0D%0Ainjected:%20yes" },
      { OTEL_EXPORTER_OTLP_HEADERS: "x-k=SECRET%00" },
      { OTEL_EXPORTER_OTLP_HEADERS: "no pair SECRET" },
      { OTEL_EXPORTER_OTLP_HEADERS: "x-k=%E0%A4%ASECRET" },
      // The carriers' vars are checked with the rest (src/carrier-registry.ts).
      { TELNYX_PUBLIC_KEY: "AAAASECRET" },
      { TELNYX_CODEC: "OPUS-SECRET" },
      { PLIVO_AUTH_ID: "ma-lowercase-SECRET" },
      { PLIVO_AUTH_TOKEN: "short-SECRET" },
      { VONAGE_APPLICATION_ID: "not-a-uuid-SECRET" },
      { VONAGE_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY----- SECRET" },
    ]) {
      const [name, value] = Object.entries(env)[0]!;
      let thrown: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, name).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).message).toContain(name);
      expect((thrown as ConfigError).message).not.toContain(value);
    }
  });

  it("knows which providers can serve", () => {
    expect(providerUnavailable({}, "simulator")).toBeNull();
    expect(providerUnavailable({}, "gemini")).toMatch(/GEMINI_API_KEY/);
    expect(providerUnavailable({ GEMINI_API_KEY: "k" }, "gemini")).toBeNull();
    expect(providerUnavailable({ GEMINI_API_KEY: "k" }, "openai")).toMatch(/OPENAI_API_KEY/);
    expect(providerUnavailable({ OPENAI_API_KEY: "k" }, "openai")).toBeNull();
    expect(providerUnavailable({ GEMINI_ENDPOINT: "vertex" }, "gemini")).toMatch(/VERTEX/);
  });
});

describe("auth helpers", () => {
  it("compares secrets exactly", async () => {
    expect(await safeEqual("abc", "abc")).toBe(true);
    expect(await safeEqual("abc", "abd")).toBe(false);
    expect(await safeEqual("abc", "abcd")).toBe(false);
    expect(await safeEqual("", "x")).toBe(false);
  });

  it("counts only hosts a deployment cannot have as local", () => {
    for (const h of [
      "localhost",
      "app.localhost",
      "127.0.0.1",
      "[::1]",
      "192.168.1.20",
      "10.0.0.2",
      "172.20.1.1",
      "phone.local",
    ]) {
      expect(isLocalHostname(h), h).toBe(true);
    }
    for (const h of [
      "liveline.workers.dev",
      "example.com",
      "8.8.8.8",
      "172.32.0.1",
      "localhost.example.com",
    ]) {
      expect(isLocalHostname(h), h).toBe(false);
    }
  });
});

describe("parseClientFrame", () => {
  it("types every client frame of PROTOCOL.md", () => {
    expect(parseClientFrame('{"type":"text","text":"hi"}')).toEqual({
      ok: true,
      frame: { type: "text", text: "hi" },
    });
    expect(parseClientFrame('{"type":"audio_end"}')).toEqual({
      ok: true,
      frame: { type: "audio_end" },
    });
    expect(parseClientFrame('{"type":"ping","extra":1}')).toEqual({
      ok: true,
      frame: { type: "ping" },
    });
    expect(parseClientFrame('{"type":"tool_result","callId":"c","result":{"a":1}}')).toEqual({
      ok: true,
      frame: { type: "tool_result", callId: "c", result: { a: 1 } },
    });
    const pcm = new Uint8Array([1, 0, 2, 0]).buffer;
    expect(parseClientFrame(pcm)).toEqual({ ok: true, frame: { type: "audio", pcm } });
    // The project's extension: how much of the reply's audio the client played.
    expect(parseClientFrame('{"type":"played","ms":1250}')).toEqual({
      ok: true,
      frame: { type: "played", ms: 1250 },
    });
    expect(parseClientFrame('{"type":"played","ms":-1}').ok).toBe(false);
    expect(parseClientFrame('{"type":"played"}').ok).toBe(false);
    expect(parseClientFrame('{"type":"text","text":"  \\n "}')).toEqual({
      ok: false,
      message: "text frame: text: text must not be blank",
    });
  });

  it("explains what is wrong", () => {
    const messageOf = (data: string) => {
      const r = parseClientFrame(data);
      expect(r.ok).toBe(false);
      return r.ok ? "" : r.message;
    };
    expect(messageOf("{")).toMatch(/JSON/);
    expect(messageOf('{"type":"dance"}')).toMatch(/unknown frame type "dance"/);
    expect(messageOf('{"type":"text","text":1}')).toMatch(/^text frame: text:/);
    expect(messageOf('{"type":"text","text":""}')).toMatch(/text/);
  });
});
