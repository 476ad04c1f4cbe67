import { env } from "cloudflare:workers";
import { verify } from "hono/jwt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billing, greeter } from "../../examples/greeter/src/agent.js";
import { livelineApp } from "../../src/app-options.js";
import { createApp } from "../../src/http/app.js";
import { resetDevModeWarning } from "../../src/http/auth.js";
import { type Created, connect, errorOf, httpUrl, TOKEN_SECRET } from "../support/gateway.js";

// The app run directly with an env whose secrets are missing: local development.
const app = createApp(livelineApp({ agents: { greeter, billing } }));
const devEnv = { ...env, API_KEY: undefined, TOKEN_SECRET: undefined };
const devFetch = async (input: string, init?: RequestInit) =>
  app.fetch(new Request(input, init), devEnv);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("without API_KEY and TOKEN_SECRET", () => {
  it("runs open on a local host: no API key needed, tokens signed with a per-isolate secret, one warning", async () => {
    resetDevModeWarning();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const created: Created[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await devFetch("http://localhost:8787/v1/sessions", { method: "POST" });
      expect(res.status).toBe(201);
      created.push((await res.json()) as Created);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    const message = String(warn.mock.calls[0]?.[0]);
    expect(message).toContain("API_KEY");
    expect(message).toContain("TOKEN_SECRET");

    const { token, wsUrl, sessionId } = created[0]!;
    // Not signed with the configured secret (there is none here) but with a random one…
    await expect(verify(token, TOKEN_SECRET, "HS256")).rejects.toThrow();
    // …which this isolate accepts.
    const client = await connect(httpUrl(wsUrl), {}, devFetch);
    expect(await client.next()).toMatchObject({ type: "ready", sessionId });
    client.close();
    // Tokens are still required and still bound to their session.
    const other = created[1]!;
    const res = await devFetch(`${httpUrl(wsUrl).split("?")[0]}?token=${other.token}`, {
      headers: { Upgrade: "websocket" },
    });
    expect(res.status).toBe(401);
  });

  it("never runs open on a non-local host: 503 not_configured", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const host of ["https://liveline.example.workers.dev", "http://8.8.8.8"]) {
      const res = await devFetch(`${host}/v1/sessions`, { method: "POST" });
      expect(res.status, host).toBe(503);
      expect((await errorOf(res)).code).toBe("not_configured");
    }
  });

  it("with the secrets set, a local host still needs the API key", async () => {
    const res = await app.fetch(
      new Request("http://localhost:8787/v1/sessions", { method: "POST" }),
      env,
    );
    expect(res.status).toBe(401);
  });
});

describe("a broken configuration", () => {
  it("answers 503 not_configured naming the setting and its expected form, never its value", async () => {
    const res = await app.fetch(
      new Request("http://liveline.test/v1/sessions", { method: "POST" }),
      { ...env, MAX_FRAME_BYTES: "s3cr3t-value" },
    );
    expect(res.status).toBe(503);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("not_configured");
    expect(error.message).toMatch(/MAX_FRAME_BYTES: .*; expected a positive whole number/);
    expect(error.message).not.toContain("s3cr3t-value");
  });
});
