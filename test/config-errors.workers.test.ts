/**
 * Configuration that explains itself (issue 13): a bad setting, a misspelt body field, an
 * out-of-range simulator knob and a model service that refuses the connection each get an
 * error naming the cause — never a bare 500, never silent retries.
 */

import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { billing, greeter } from "../examples/greeter/src/agent.js";
import { createLiveline } from "../src/liveline.js";
import {
  BASE,
  type Client,
  connect,
  createSession,
  errorOf,
  httpUrl,
  withKey,
} from "./support/gateway.js";

const liveline = createLiveline({ agents: { greeter, billing } });
const withEnv = (vars: Record<string, string>) => (path: string, init?: RequestInit) =>
  liveline.fetch(
    new Request(`${BASE}${path}`, init),
    { ...env, ...vars },
    createExecutionContext(),
  );

describe("a bad setting", () => {
  const broken = withEnv({ PROVIDER: "openia", TOKEN_TTL_SECONDS: "15m" });

  it("makes /health answer 503 naming each setting, its problem and the expected form", async () => {
    const res = await broken("/health");
    expect(res.status).toBe(503);
    const body = (await res.json()) as {
      ok: boolean;
      error: { code: string; message: string };
      settings: { setting: string; problem: string; expected: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.error.code).toBe("not_configured");
    expect(body.settings.map((s) => s.setting).sort()).toEqual(["PROVIDER", "TOKEN_TTL_SECONDS"]);
    const provider = body.settings.find((s) => s.setting === "PROVIDER")!;
    expect(provider.expected).toMatch(/simulator, gemini, openai, gpt-live/);
    const ttl = body.settings.find((s) => s.setting === "TOKEN_TTL_SECONDS")!;
    expect(ttl.expected).toMatch(/positive whole number/);
    // Names and forms, never values (a value may be a secret pasted into the wrong var).
    expect(JSON.stringify(body)).not.toContain("openia");
    expect(JSON.stringify(body)).not.toContain("15m");
  });

  it("makes every other route answer 503 not_configured with the same text (never a bare 500)", async () => {
    const health = (await (await broken("/health")).json()) as { error: { message: string } };
    for (const [path, init] of [
      ["/v1/sessions", { method: "POST", headers: withKey() }],
      [`/v1/sessions/${crypto.randomUUID()}/history`, { headers: withKey() }],
      [`/v1/sessions/${crypto.randomUUID()}/ws`, { headers: { Upgrade: "websocket" } }],
    ] as const) {
      const res = await broken(path, init);
      expect(res.status, path).toBe(503);
      const error = await errorOf(res);
      expect(error.code).toBe("not_configured");
      expect(error.message).toBe(health.error.message);
      expect(error.message).toMatch(
        /PROVIDER: .*; expected one of simulator, gemini, openai, gpt-live/,
      );
    }
  });

  it("of a provider is reported too (OPENAI_REALTIME_URL), and a good env is served", async () => {
    const res = await withEnv({ OPENAI_REALTIME_URL: "not a url" })("/health");
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /OPENAI_REALTIME_URL: .*expected an absolute URL/,
    );
    expect((await withEnv({})("/health")).status).toBe(200);
  });
});

describe("the OpenAI family's other providers (xAI, Azure)", () => {
  it("a bad value of their settings is named on /health, never the value", async () => {
    const res = await withEnv({
      AZURE_ENDPOINT: "voicelive",
      AZURE_RESOURCE: "acme.openai.azure.com",
      XAI_REALTIME_URL: "not a url",
      XAI_API_KEY: " xai-SECRET-pasted ",
    })("/health");
    expect(res.status).toBe(503);
    const body = (await res.json()) as { settings: { setting: string }[] };
    expect(body.settings.map((s) => s.setting).sort()).toEqual([
      "AZURE_ENDPOINT",
      "AZURE_RESOURCE",
      "XAI_API_KEY",
      "XAI_REALTIME_URL",
    ]);
    expect(JSON.stringify(body)).not.toContain("SECRET");
  });

  it("as the default provider without its credentials: 503 naming the missing setting", async () => {
    expect(await (await withEnv({ PROVIDER: "xai" })("/health")).text()).toMatch(/XAI_API_KEY/);
    expect(
      await (await withEnv({ PROVIDER: "azure", AZURE_API_KEY: "azure-key-1" })("/health")).text(),
    ).toMatch(/AZURE_RESOURCE/);
    const health = async (vars: Record<string, string>) =>
      ((await (await withEnv(vars)("/health")).json()) as { provider: string }).provider;
    expect(await health({ XAI_API_KEY: "xai-key-1" })).toBe("xai");
    expect(await health({ AZURE_API_KEY: "azure-key-1", AZURE_RESOURCE: "acme" })).toBe("azure");
  });
});

describe("settings checked at the first request, not at a session's creation", () => {
  it("a provider's setting parsed further than its type (JSON, knob lists, token counts) is a 503 on /health", async () => {
    const cases: Record<string, string>[] = [
      { GEMINI_API_KEY: "k", GEMINI_CAPABILITIES: "{not json" },
      { GEMINI_CAPABILITIES: '{"silentHonoured":"x"}' },
      { GEMINI_COMPRESSION_TRIGGER_TOKENS: "12abc" },
      { SIMULATOR_KNOBS: "timeScale=abcSECRET&zzKNOB=1" },
      { TOKEN_TTL_SECONDS: "9000000000000" },
      { API_KEY: " padded-key " },
    ];
    for (const vars of cases) {
      const res = await withEnv(vars)("/health");
      const text = await res.text();
      expect(res.status, JSON.stringify(vars)).toBe(503);
      expect(text).toContain(Object.keys(vars).at(-1)!);
      expect(text).not.toContain("abcSECRET");
      expect(text).not.toContain("padded-key");
      expect(text).not.toContain("9000000000000");
    }
  });

  it("a default provider that cannot serve (its key missing) is a 503 naming why, not a 400 per session", async () => {
    const res = await withEnv({ PROVIDER: "gemini" })("/health");
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/GEMINI_API_KEY/);
  });
});

describe("the default provider", () => {
  it("is the first real provider whose key is set, so a deployed gateway with a key is not the simulator", async () => {
    const health = async (vars: Record<string, string>) =>
      ((await (await withEnv(vars)("/health")).json()) as { provider: string }).provider;
    expect(await health({ GEMINI_API_KEY: "k" })).toBe("gemini");
    expect(await health({ OPENAI_API_KEY: "k" })).toBe("openai");
    expect(await health({ GEMINI_API_KEY: "k", PROVIDER: "simulator" })).toBe("simulator");
  });
});

describe("POST /v1/sessions is strict", () => {
  const post = (body: unknown) =>
    exports.default.fetch(`${BASE}/v1/sessions`, {
      method: "POST",
      headers: { ...withKey(), "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

  it("refuses an unknown field by name", async () => {
    const res = await post({ agnet: "greeter" });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/agnet/);
  });

  it("refuses an out-of-range or unknown simulator knob by name, at creation", async () => {
    const race = await post({ metadata: { simulator: { race: 5 } } });
    expect(race.status).toBe(400);
    expect((await errorOf(race)).message).toMatch(/race must be a number in \[0, 1\]/);
    const unknown = await post({ metadata: { simulator: { rcae: 1 } } });
    expect(unknown.status).toBe(400);
    expect((await errorOf(unknown)).message).toMatch(/unknown simulator knob: rcae/);
  });

  it("refuses an option the agent does not allow, naming it", async () => {
    const res = await post({ model: "gemini-live-2.5-flash" });
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe("option_not_allowed");
    expect(error.message).toMatch(/does not allow model/);
    expect((await post({ language: "not a code!" })).status).toBe(400);
    expect((await post({ locationHint: "mars" })).status).toBe(400);
  });
});

async function timeline(sessionId: string): Promise<{ kind: string; detail?: unknown }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string; detail?: unknown }[] }).rows;
}

async function nextOfType(client: Client, type: string): Promise<Record<string, unknown>> {
  for (;;) {
    const frame = await client.next(5000);
    if (frame.type === type) return frame;
  }
}

describe("a model service that refuses the connection", () => {
  it("is not retried: the reason is in the timeline and reaches the clients as an error frame; the session goes on", async () => {
    const created = await createSession({
      metadata: { simulator: { refuseUpgrade: 401, timeScale: 0 } },
    });
    const client = await connect(httpUrl(created.wsUrl));
    expect((await client.next()).type).toBe("ready");
    // The session opens its model connection as the first client joins: refused at once,
    // and the status says no connection is held (never left at `connecting`).
    const error = await nextOfType(client, "error");
    await new Promise((r) => setTimeout(r, 100));
    expect(client.statuses.at(-1)).toMatchObject({ state: "idle" });
    expect(error).toMatchObject({ code: "upstream_refused" });
    expect(String(error.message)).toMatch(/HTTP 401: API key not valid/);
    // Give a retry loop time to show itself: none may happen.
    await new Promise((r) => setTimeout(r, 1500));
    let rows = await timeline(created.sessionId);
    expect(rows.filter((r) => r.kind === "UPSTREAM_REFUSED")).toHaveLength(1);
    expect(rows.filter((r) => r.kind === "UPSTREAM_RECONNECT")).toHaveLength(0);
    expect(rows.filter((r) => r.kind === "UPSTREAM_CONNECT")).toHaveLength(1);

    // The session goes on: new input tries again, is told again, and its turn ends.
    client.send({ type: "text", text: "hello?" });
    const again = await nextOfType(client, "error");
    // The error belongs to the turn it ends, and comes before that turn's end.
    expect(again).toMatchObject({ code: "upstream_refused", turnId: expect.any(String) });
    expect(await nextOfType(client, "interrupted")).toMatchObject({ turnId: again.turnId });
    rows = await timeline(created.sessionId);
    expect(rows.filter((r) => r.kind === "UPSTREAM_CONNECT")).toHaveLength(2);
    const history = await exports.default.fetch(
      `${BASE}/v1/sessions/${created.sessionId}/history`,
      {
        headers: withKey(),
      },
    );
    const texts = ((await history.json()) as { events: { kind: string; text?: string }[] }).events
      .filter((e) => e.kind === "user")
      .map((e) => e.text);
    expect(texts).toEqual(["hello?"]);
    client.close();
  }, 20_000);
});
