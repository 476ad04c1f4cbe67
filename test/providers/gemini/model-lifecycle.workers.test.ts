/**
 * A configured Gemini model past its shutdown date is named where an operator looks (issue
 * 52): `/health`'s `warnings`, and a new session's answer (which is created all the same).
 * Control: the same gateway on a current model says nothing.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billing, greeter } from "../../../examples/greeter/src/agent.js";
import { livelineApp } from "../../../src/app-options.js";
import { createApp } from "../../../src/http/app.js";
import { createLiveline } from "../../../src/liveline.js";
import { BASE, withKey } from "../../support/gateway.js";

const RETIRED = "gemini-2.5-flash-native-audio-preview-09-2025";
const liveline = createLiveline({ agents: { greeter, billing } });
const withEnv = (vars: Record<string, string>) => (path: string, init?: RequestInit) =>
  liveline.fetch(
    new Request(`${BASE}${path}`, init),
    { ...env, ...vars },
    createExecutionContext(),
  );

/**
 * A session's creation up to its object, whose own env is the test deployment's (no Gemini
 * key: it could not build a Gemini session): the objects are a stand-in that takes `init`.
 */
const created: string[] = [];
const SESSION = {
  idFromName: (name: string) => name,
  get: (id: string) => ({
    init: async () => {
      created.push(id);
    },
  }),
};
const app = createApp(livelineApp({ agents: { greeter, billing } }));
const create = (vars: Record<string, string>) =>
  app.fetch(
    new Request(`${BASE}/v1/sessions`, {
      method: "POST",
      headers: { ...withKey(), "Content-Type": "application/json" },
      body: JSON.stringify({ provider: "gemini" }),
    }),
    { ...env, ...vars, SESSION },
  );

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a configured model past its shutdown date", () => {
  it("is named in /health's warnings, with its replacement", async () => {
    const body = (await (
      await withEnv({ GEMINI_API_KEY: "k", GEMINI_MODEL: RETIRED })("/health")
    ).json()) as { ok: boolean; warnings?: string[] };
    expect(body.ok).toBe(true);
    expect(body.warnings).toEqual([expect.stringContaining(RETIRED)]);
    expect(body.warnings?.[0]).toContain("use gemini-3.8-live");
  });

  it("is named in a new session's answer, and logged; the session is created", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const res = await create({ GEMINI_API_KEY: "k", GEMINI_MODEL: RETIRED });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { sessionId: string; warnings?: string[] };
    expect(created).toContain(body.sessionId);
    expect(body.warnings).toEqual([expect.stringContaining(RETIRED)]);
    expect(String(warn.mock.calls[0]?.[0])).toContain(RETIRED);
  });

  it("control: on a current model, nothing is said", async () => {
    const health = (await (await withEnv({ GEMINI_API_KEY: "k" })("/health")).json()) as {
      warnings?: string[];
    };
    expect(health.warnings).toBeUndefined();
    const res = await create({ GEMINI_API_KEY: "k" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { warnings?: string[] }).warnings).toBeUndefined();
  });
});
