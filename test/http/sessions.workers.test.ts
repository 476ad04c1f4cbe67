import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { decode, verify } from "hono/jwt";
import { describe, expect, it } from "vitest";
import {
  API_KEY,
  BASE,
  connect,
  createSession,
  errorOf,
  httpUrl,
  TOKEN_SECRET,
  upgrade,
  withKey,
} from "../support/gateway.js";

const post = (path: string, body: unknown, headers: Record<string, string> = withKey()) =>
  exports.default.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("POST /v1/sessions", () => {
  it("answers 201 {sessionId, token, wsUrl, expiresAt} and the token opens the session", async () => {
    const before = Date.now();
    const res = await post("/v1/sessions", {});
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(Object.keys(body).sort()).toEqual(["expiresAt", "sessionId", "token", "wsUrl"]);
    const { sessionId, token, wsUrl, expiresAt } = body as Record<string, string>;
    expect(sessionId).toMatch(UUID);
    expect(wsUrl).toBe(
      `ws://liveline.test/v1/sessions/${sessionId}/ws?token=${encodeURIComponent(token!)}`,
    );
    // HS256 over {sid, exp}, signed with TOKEN_SECRET, good for TOKEN_TTL_SECONDS (900).
    const { header, payload } = decode(token!);
    expect(header.alg).toBe("HS256");
    expect(payload.sid).toBe(sessionId);
    await expect(verify(token!, TOKEN_SECRET, "HS256")).resolves.toMatchObject({ sid: sessionId });
    expect(new Date(expiresAt!).toISOString()).toBe(expiresAt);
    expect(Date.parse(expiresAt!)).toBe((payload.exp as number) * 1000);
    const ttl = Date.parse(expiresAt!) - before;
    expect(ttl).toBeGreaterThan(899_000);
    expect(ttl).toBeLessThanOrEqual(901_000);

    const client = await connect(httpUrl(wsUrl!));
    expect(await client.next()).toMatchObject({ type: "ready", sessionId });
    client.close();
  });

  it("gives wss:// URLs to https requests", async () => {
    const res = await exports.default.fetch("https://gw.example.com/v1/sessions", {
      method: "POST",
      headers: withKey(),
    });
    expect(res.status).toBe(201);
    const { wsUrl, sessionId } = (await res.json()) as Record<string, string>;
    expect(wsUrl).toMatch(
      new RegExp(`^wss://gw\\.example\\.com/v1/sessions/${sessionId}/ws\\?token=`),
    );
  });

  it("stores agent, provider and metadata in the session's object through init", async () => {
    const { sessionId } = await createSession({ agent: "greeter", metadata: { user: "u1", n: 2 } });
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    const rows = await runInDurableObject(stub, (_instance, state) => ({
      meta: state.storage.sql.exec("SELECT * FROM meta").toArray(),
      versions: state.storage.sql.exec("SELECT * FROM schema_version").toArray(),
    }));
    expect(rows.meta).toEqual([
      expect.objectContaining({
        session_id: sessionId,
        agent: "greeter",
        provider: "simulator",
        metadata: JSON.stringify({ user: "u1", n: 2 }),
        options: "{}",
        ended_at: null,
      }),
    ]);
    expect(rows.versions).toEqual(
      expect.arrayContaining([
        // What to record is a component of its own: `session` stays where the previous
        // release left it (test/session/previous-release.workers.test.ts).
        { component: "session", version: 4 },
        { component: "session_recording", version: 1 },
        { component: "history", version: 7 },
        { component: "usage", version: 3 },
      ]),
    );
  });

  it("needs the API key", async () => {
    const none = await post("/v1/sessions", {}, {});
    expect(none.status).toBe(401);
    expect((await errorOf(none)).code).toBe("unauthorized");
    const wrong = await post("/v1/sessions", {}, withKey(`${API_KEY}x`));
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong)).code).toBe("unauthorized");
    const notBearer = await post("/v1/sessions", {}, { Authorization: API_KEY });
    expect(notBearer.status).toBe(401);
  });

  it("rejects bodies of the wrong shape with 400 bad_request naming the field", async () => {
    for (const [body, field] of [
      [{ agent: 5 }, "agent"],
      [{ provider: "claude" }, "provider"],
      [{ metadata: [1, 2] }, "metadata"],
      [{ metadata: "x" }, "metadata"],
    ] as const) {
      const res = await post("/v1/sessions", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("bad_request");
      expect(error.message).toContain(field);
    }
    const notJson = await post("/v1/sessions", "{nope");
    expect(notJson.status).toBe(400);
    expect((await errorOf(notJson)).code).toBe("bad_request");
    const array = await post("/v1/sessions", "[]");
    expect(array.status).toBe(400);
  });

  it("rejects an unknown agent and providers that cannot serve", async () => {
    const agent = await post("/v1/sessions", { agent: "nobody" });
    expect(agent.status).toBe(400);
    expect((await errorOf(agent)).code).toBe("unknown_agent");
    const openai = await post("/v1/sessions", { provider: "openai" });
    expect(openai.status).toBe(400);
    expect((await errorOf(openai)).code).toBe("provider_unavailable");
    // The test deployment has no GEMINI_API_KEY.
    const gemini = await post("/v1/sessions", { provider: "gemini" });
    expect(gemini.status).toBe(400);
    expect((await errorOf(gemini)).code).toBe("provider_unavailable");
    const simulator = await post("/v1/sessions", { provider: "simulator" });
    expect(simulator.status).toBe(201);
  });

  it("refuses bodies over 64 KiB with 413", async () => {
    const res = await post("/v1/sessions", { metadata: { blob: "x".repeat(70_000) } });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
  });

  it("answers other methods with 405 and Allow", async () => {
    const res = await exports.default.fetch(`${BASE}/v1/sessions`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
    expect((await errorOf(res)).code).toBe("method_not_allowed");
  });
});

describe("POST /v1/sessions/:id/token", () => {
  it("issues a fresh token for the session, with the API key only", async () => {
    const { sessionId } = await createSession();
    const path = `/v1/sessions/${sessionId}/token`;
    const denied = await post(path, "", {});
    expect(denied.status).toBe(401);

    const res = await post(path, "");
    expect(res.status).toBe(200);
    const fresh = (await res.json()) as Record<string, string>;
    expect(fresh.sessionId).toBe(sessionId);
    expect(decode(fresh.token!).payload.sid).toBe(sessionId);
    const client = await connect(httpUrl(fresh.wsUrl!));
    expect(await client.next()).toMatchObject({ type: "ready", sessionId });
    client.close();
  });

  it("takes a session id in capitals as the same UUID (found by the attack: 404)", async () => {
    const { sessionId } = await createSession();
    const res = await post(`/v1/sessions/${sessionId.toUpperCase()}/token`, "");
    expect(res.status).toBe(200);
    expect(((await res.json()) as Record<string, string>).sessionId).toBe(sessionId);
  });

  it("answers 404 unknown_session for a session that was never created", async () => {
    const res = await post(`/v1/sessions/${crypto.randomUUID()}/token`, "");
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("unknown_session");
  });
});

describe("DELETE /v1/sessions/:id", () => {
  const del = (id: string, headers: Record<string, string> = withKey()) =>
    exports.default.fetch(`${BASE}/v1/sessions/${id}`, { method: "DELETE", headers });

  it("needs the API key and a known session", async () => {
    const { sessionId } = await createSession();
    expect((await del(sessionId, {})).status).toBe(401);
    const unknown = await del(crypto.randomUUID());
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe("unknown_session");
  });

  it("closes open sockets with 1000, then refuses upgrades with 410 and keeps history", async () => {
    const created = await createSession();
    const client = await connect(httpUrl(created.wsUrl));
    expect((await client.next()).type).toBe("ready");

    const res = await del(created.sessionId);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sessionId: created.sessionId, ended: true });
    expect((await client.closed).code).toBe(1000);

    const again = await upgrade(httpUrl(created.wsUrl));
    expect(again.status).toBe(410);
    expect((await errorOf(again)).code).toBe("session_ended");

    const history = await exports.default.fetch(
      `${BASE}/v1/sessions/${created.sessionId}/history`,
      { headers: withKey() },
    );
    expect(history.status).toBe(200);
    // What was recorded stays readable; the last word is the session's end.
    const { events } = (await history.json()) as { events: { kind: string; state?: string }[] };
    expect(events.at(-1)).toMatchObject({ kind: "status", state: "ended" });
    // Ending twice is harmless.
    expect((await del(created.sessionId)).status).toBe(200);
  });

  it("an ended session refuses a fresh token and a restart with 410 session_ended (found by the attack: 200)", async () => {
    const { sessionId } = await createSession({ provider: "simulator" });
    expect((await del(sessionId)).status).toBe(200);
    for (const path of [`/v1/sessions/${sessionId}/restart`, `/v1/sessions/${sessionId}/token`]) {
      const res = await post(path, "");
      expect(res.status, path).toBe(410);
      const error = await errorOf(res);
      expect(error.code).toBe("session_ended");
      expect(error.message).toMatch(/ended/);
    }
    // Still ended, still readable: neither did anything.
    const state = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      headers: withKey(),
    });
    expect(((await state.json()) as { connection: string }).connection).toBe("ended");
    // The API key is checked first, as for a live session.
    expect((await post(`/v1/sessions/${sessionId}/token`, "", {})).status).toBe(401);
  });
});

describe("GET /v1/sessions/:id/history and /timeline", () => {
  const get = (path: string, headers: Record<string, string> = {}) =>
    exports.default.fetch(`${BASE}${path}`, { headers });

  it("take the API key, or the session's token as ?token= or bearer; nothing else", async () => {
    const mine = await createSession();
    const other = await createSession();
    for (const what of ["history", "timeline"]) {
      const path = `/v1/sessions/${mine.sessionId}/${what}`;
      const q = (t: string) => `${path}?token=${encodeURIComponent(t)}`;
      expect((await get(path, withKey())).status, `${what} api key`).toBe(200);
      expect((await get(q(mine.token))).status, `${what} ?token`).toBe(200);
      expect((await get(path, withKey(mine.token))).status, `${what} bearer token`).toBe(200);

      const anonymous = await get(path);
      expect(anonymous.status, `${what} anonymous`).toBe(401);
      expect((await errorOf(anonymous)).code).toBe("unauthorized");
      expect((await get(q(other.token))).status, `${what} other's token`).toBe(401);
      expect((await get(path, withKey(other.token))).status, `${what} other's bearer`).toBe(401);
      expect((await get(path, withKey("wrong"))).status, `${what} wrong key`).toBe(401);
      expect((await get(q("not.a.jwt"))).status, `${what} garbage token`).toBe(401);
    }
  });

  it("take an empty ?token= as no token (found by the attack: 400, where none is 401)", async () => {
    const mine = await createSession();
    for (const what of ["", "/history", "/timeline"]) {
      const path = `/v1/sessions/${mine.sessionId}${what}`;
      const missing = await get(path);
      const empty = await get(`${path}?token=`);
      expect(empty.status, `${what} empty`).toBe(401);
      expect(await errorOf(empty)).toEqual(await errorOf(missing));
      // Absent, so the bearer counts: the API key, or the session's token.
      expect((await get(`${path}?token=`, withKey())).status, `${what} key`).toBe(200);
      expect((await get(`${path}?token=`, withKey(mine.token))).status, `${what} bearer`).toBe(200);
    }
  });

  it("with both, the API key as bearer wins; else the query's token is checked, not the bearer's", async () => {
    const mine = await createSession();
    const path = `/v1/sessions/${mine.sessionId}/history`;
    expect((await get(`${path}?token=not.a.jwt`, withKey())).status).toBe(200);
    expect((await get(`${path}?token=${mine.token}`, withKey("not.a.jwt"))).status).toBe(200);
    expect((await get(`${path}?token=not.a.jwt`, withKey(mine.token))).status).toBe(401);
  });

  it("answer with the documented shapes", async () => {
    const { sessionId } = await createSession();
    const history = await get(`/v1/sessions/${sessionId}/history`, withKey());
    expect(await history.json()).toEqual({ events: [], turns: [] });
    const timeline = await get(`/v1/sessions/${sessionId}/timeline`, withKey());
    const body = (await timeline.json()) as Record<string, unknown>;
    expect(body).toEqual({
      sessionId,
      startedAt: expect.any(String),
      rows: [],
      stats: expect.objectContaining({ events: 0, transactions: 0, modelEvents: 0 }),
    });
    expect(Math.abs(Date.parse(body.startedAt as string) - Date.now())).toBeLessThan(60_000);
  });

  it("answer 404 for unknown sessions, also for ids that are not session ids", async () => {
    for (const id of [crypto.randomUUID(), "not-a-session"]) {
      const res = await get(`/v1/sessions/${id}/history`, withKey());
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("unknown_session");
    }
  });

  it("leave no storage behind in objects of unknown ids", async () => {
    const id = crypto.randomUUID();
    expect((await get(`/v1/sessions/${id}/timeline`, withKey())).status).toBe(404);
    const stub = env.SESSION.get(env.SESSION.idFromName(id));
    const tables = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables.filter((t) => !String(t.name).startsWith("_cf"))).toEqual([]);
  });
});
