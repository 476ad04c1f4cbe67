/**
 * Per-session options, agents as functions of the session, and placement (issue 13): what
 * `POST /v1/sessions` takes is checked against the agent, stored with the session and in
 * force at every start of its object; a jurisdiction keeps sessions in their own namespace.
 */

import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createLiveline, defineAgent, defineTool } from "../../src/index.js";
import { BASE, errorOf, withKey } from "../support/gateway.js";

const post = (body: unknown) =>
  exports.default.fetch(`${BASE}/v1/sessions`, {
    method: "POST",
    headers: { ...withKey(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

describe("per-session options", () => {
  it("are stored with the session when the agent allows them", async () => {
    const res = await post({
      instructions: "Answer in one short sentence.",
      voice: "Puck",
      language: "de-DE",
      locationHint: "weur",
    });
    expect(res.status).toBe(201);
    const { sessionId } = (await res.json()) as { sessionId: string };
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    const options = await runInDurableObject(
      stub,
      (_o, state) => state.storage.sql.exec("SELECT options FROM meta").one().options,
    );
    expect(JSON.parse(String(options))).toEqual({
      instructions: "Answer in one short sentence.",
      voice: "Puck",
      language: "de-DE",
    });
  });
});

describe("an app's agents", () => {
  const seen: string[] = [];
  const whoAmI = defineTool({
    name: "who_am_i",
    description: "Say who the user is.",
    args: z.object({}),
    runOn: "server",
    followUp: "speak",
    run: async (_args, ctx) => ({ user: ctx.metadata.user ?? null, agent: ctx.agent }),
  });
  const concierge = defineAgent((session) => {
    seen.push(`${session.agent}:${String(session.metadata.user)}`);
    if (typeof session.metadata.user !== "string") throw new Error("metadata.user is required");
    return {
      instructions: `You serve ${session.metadata.user}.`,
      tools: [whoAmI],
      model: "gemini-3.1-flash-live-preview",
      allow: ["voice"],
    };
  });
  const app = createLiveline({ agents: { concierge } });
  const appFetch = (path: string, init?: RequestInit, vars: Record<string, string> = {}) =>
    app.fetch(new Request(`${BASE}${path}`, init), { ...env, ...vars }, createExecutionContext());
  const create = (body: unknown, vars: Record<string, string> = {}) =>
    appFetch(
      "/v1/sessions",
      {
        method: "POST",
        headers: { ...withKey(), "Content-Type": "application/json" },
        body: JSON.stringify(body),
      },
      vars,
    );

  it("a function agent is asked at creation: it may refuse the session (400 agent_refused)", async () => {
    const res = await create({});
    expect(res.status).toBe(400);
    const error = await errorOf(res);
    expect(error.code).toBe("agent_refused");
    expect(error.message).toMatch(/metadata.user is required/);
    expect((await create({ model: "x", metadata: { user: "ada" } })).status).toBe(400);
  });

  it("is its app's default agent; what it allows is checked at creation", async () => {
    const res = await create({ metadata: { user: "ada" }, voice: "Kore" });
    expect(res.status).toBe(201);
    expect(seen).toContain("concierge:ada");
    const model = await create({ metadata: { user: "ada" }, model: "other" });
    expect((await errorOf(model)).code).toBe("option_not_allowed");
  });

  it("SESSION_JURISDICTION=eu is taken (local workerd has no jurisdictions: it says so once and uses the default namespace); a bad one is 503", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const eu = { SESSION_JURISDICTION: "eu" };
    const res = await create({ metadata: { user: "eve" } }, eu);
    expect(res.status).toBe(201);
    const { sessionId } = (await res.json()) as { sessionId: string };
    const read = await appFetch(`/v1/sessions/${sessionId}/history`, { headers: withKey() }, eu);
    expect(read.status).toBe(200);
    expect(warn.mock.calls.flat().join(" ")).toMatch(/SESSION_JURISDICTION=eu is not implemented/);
    warn.mockRestore();
    const bad = await appFetch("/health", {}, { SESSION_JURISDICTION: "moon" });
    expect(bad.status).toBe(503);
  });
});

describe("createLiveline refuses a broken app at the Worker's start", () => {
  const tool = (name: string, run = true) =>
    defineTool({
      name,
      description: "d",
      args: z.object({}),
      runOn: "server",
      followUp: "speak",
      ...(run ? { run: async () => ({}) } : {}),
    });
  it("names what is wrong: duplicate tools, a server tool with no run, a bad tool name, an unknown setting, no provider", () => {
    const agent = (tools: ReturnType<typeof tool>[]) => ({ instructions: "", tools });
    expect(() => createLiveline({ agents: { a: agent([tool("x"), tool("x")]) } })).toThrow(
      /agent "a": the tool "x" is declared twice/,
    );
    expect(() => createLiveline({ agents: { a: agent([tool("x", false)]) } })).toThrow(
      /server tool "x" has no run function/,
    );
    expect(() => createLiveline({ agents: { a: agent([tool("bad name!")]) } })).toThrow(
      /tool name "bad name!"/,
    );
    expect(() =>
      createLiveline({ agents: { a: agent([]) }, config: { TOKEN_TTL_SECOND: 60 } }),
    ).toThrow(/unknown setting in config: TOKEN_TTL_SECOND/);
    expect(() => createLiveline({ agents: { a: agent([]) }, providers: [] })).toThrow(
      /names no provider/,
    );
    expect(() => createLiveline({ agents: { a: agent([tool("ok_tool")]) } })).not.toThrow();
  });

  it("refuses an agent's MCP servers by name: a tool of its own in a server's names, a bad server", () => {
    const agent = (tools: ReturnType<typeof tool>[], mcp: unknown[]) =>
      ({ instructions: "", tools, mcp }) as Parameters<typeof createLiveline>[0]["agents"][string];
    const desk = { name: "desk", url: "https://mcp.example.com/mcp" };
    // The agent's own desk__lookup would be taken for the desk server's `lookup`.
    expect(() => createLiveline({ agents: { a: agent([tool("desk__lookup")], [desk]) } })).toThrow(
      /agent "a": the tool "desk__lookup" collides with the mcp server "desk"/,
    );
    expect(() => createLiveline({ agents: { a: agent([], [desk, desk]) } })).toThrow(
      /the mcp server "desk" is declared twice/,
    );
    expect(() =>
      createLiveline({ agents: { a: agent([], [{ name: "bad name", url: desk.url }]) } }),
    ).toThrow(/mcp server name "bad name"/);
    expect(() =>
      createLiveline({ agents: { a: agent([], [{ name: "desk", url: "ftp://x" }]) } }),
    ).toThrow(/the mcp server "desk": url must be an http\(s\) URL/);
    expect(() =>
      createLiveline({
        agents: { a: agent([], [{ ...desk, policy: { timeoutMs: 0, progress: "shout" } }]) },
      }),
    ).toThrow(/timeoutMs must be a positive number; .*progress must be "tell" or "say"/);
    expect(() => createLiveline({ agents: { a: agent([tool("lookup")], [desk]) } })).not.toThrow();
  });
});
