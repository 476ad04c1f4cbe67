import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { sign } from "hono/jwt";
import { describe, expect, it } from "vitest";
import {
  ALLOWED_ORIGIN,
  BASE,
  type Client,
  connect,
  createSession,
  errorOf,
  type Frame,
  httpUrl,
  sessionWithClient,
  TOKEN_SECRET,
  upgrade,
} from "../support/gateway.js";

const wsPath = (id: string, query = "") => `${BASE}/v1/sessions/${id}/ws${query}`;
const nowS = () => Math.floor(Date.now() / 1000);

describe("GET /v1/sessions/:id/ws: checks before the upgrade", () => {
  it("answers 401 JSON, without a socket, to a missing, wrong, expired or other session's token", async () => {
    const mine = await createSession();
    const other = await createSession();
    const id = mine.sessionId;
    const cases: [string, string][] = [
      ["missing", ""],
      ["garbage", "?token=abc"],
      [
        "other secret",
        `?token=${await sign({ sid: id, exp: nowS() + 60 }, "not-the-secret", "HS256")}`,
      ],
      ["expired", `?token=${await sign({ sid: id, exp: nowS() - 5 }, TOKEN_SECRET, "HS256")}`],
      ["other session", `?token=${other.token}`],
      ["no sid", `?token=${await sign({ exp: nowS() + 60 }, TOKEN_SECRET, "HS256")}`],
    ];
    for (const [what, query] of cases) {
      const res = await upgrade(wsPath(id, query));
      expect(res.status, what).toBe(401);
      expect((await errorOf(res)).code, what).toBe("unauthorized");
    }
    // The same session with its own token does connect.
    const ok = await upgrade(wsPath(id, `?token=${mine.token}`));
    expect(ok.status).toBe(101);
    ok.webSocket!.accept();
    ok.webSocket!.close(1000);
  });

  it("takes an empty ?token= as a missing token: 401 as without one (found by the attack: 400)", async () => {
    const { sessionId, token } = await createSession();
    const missing = await upgrade(wsPath(sessionId));
    const empty = await upgrade(wsPath(sessionId, "?token="));
    expect(empty.status).toBe(401);
    expect(await errorOf(empty)).toEqual(await errorOf(missing));
    // Empty is absent: a bearer token then counts, as it would without the parameter.
    const bearerToo = await upgrade(wsPath(sessionId, "?token="), {
      Authorization: `Bearer ${token}`,
    });
    expect(bearerToo.status).toBe(101);
    bearerToo.webSocket!.accept();
    bearerToo.webSocket!.close(1000);
  });

  it("with a token in the query and one in Authorization, the query's is the one checked", async () => {
    const { sessionId, token } = await createSession();
    const queryGood = await upgrade(wsPath(sessionId, `?token=${token}`), {
      Authorization: "Bearer not-a-token",
    });
    expect(queryGood.status).toBe(101);
    queryGood.webSocket!.accept();
    queryGood.webSocket!.close(1000);
    const queryBad = await upgrade(wsPath(sessionId, "?token=not-a-token"), {
      Authorization: `Bearer ${token}`,
    });
    expect(queryBad.status).toBe(401);
  });

  it("answers 404 unknown_session to a valid token for a session that was never created", async () => {
    const id = crypto.randomUUID();
    const token = await sign({ sid: id, exp: nowS() + 60 }, TOKEN_SECRET, "HS256");
    const res = await upgrade(wsPath(id, `?token=${token}`));
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("unknown_session");
  });

  it("answers 426 upgrade_required without Upgrade: websocket", async () => {
    const { wsUrl } = await createSession();
    const res = await exports.default.fetch(httpUrl(wsUrl));
    expect(res.status).toBe(426);
    expect((await errorOf(res)).code).toBe("upgrade_required");
  });

  it("answers 400 to a resumeFrom that is not a non-negative integer", async () => {
    const { wsUrl } = await createSession();
    for (const bad of ["-1", "abc", "1.5", "", "1e3", "99999999999999999999"]) {
      const res = await upgrade(`${httpUrl(wsUrl)}&resumeFrom=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("bad_request");
      expect(error.message).toContain("resumeFrom");
      // Past any seq: said so once, in words (the attack found zod's bound said twice).
      if (bad.length > 15) expect(error.message).toMatch(/^[^≤<]*beyond any session's last seq$/);
    }
  });

  it("refuses a browser Origin not in ALLOWED_ORIGINS with 403; listed or absent Origin passes", async () => {
    const { wsUrl } = await createSession();
    const evil = await upgrade(httpUrl(wsUrl), { Origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect((await errorOf(evil)).code).toBe("forbidden");
    const nullOrigin = await upgrade(httpUrl(wsUrl), { Origin: "null" });
    expect(nullOrigin.status).toBe(403);

    const listed = await connect(httpUrl(wsUrl), { Origin: ALLOWED_ORIGIN });
    expect((await listed.next()).type).toBe("ready");
    listed.close();
    // Compared case-insensitively, without trailing slashes; nothing else is normalised.
    const capitals = await connect(httpUrl(wsUrl), { Origin: "HTTPS://App.Example/" });
    expect((await capitals.next()).type).toBe("ready");
    capitals.close();
    for (const origin of [
      "https://app.example:443",
      "http://app.example",
      "https://app.example.evil.example",
      "https://app.example/path",
    ]) {
      const res = await upgrade(httpUrl(wsUrl), { Origin: origin });
      expect(res.status, origin).toBe(403);
    }
    const native = await connect(httpUrl(wsUrl)); // a phone app sends no Origin
    expect((await native.next()).type).toBe("ready");
    native.close();
  });
});

describe("GET /v1/sessions/:id/ws: the socket", () => {
  it("sends ready first: sessionId, lastSeq, resumed=false, audio rates", async () => {
    const { created, client, ready } = await sessionWithClient();
    expect(ready).toEqual({
      type: "ready",
      sessionId: created.sessionId,
      lastSeq: 0,
      resumed: false,
      audio: { inputRate: 16000, outputRate: 24000 },
    });
    client.close();
  });

  it("says resumed=true when the URL has resumeFrom, and ignores a client-sent resume header", async () => {
    const { wsUrl, sessionId } = await createSession();
    const resumed = await connect(`${httpUrl(wsUrl)}&resumeFrom=0`);
    expect(await resumed.next()).toMatchObject({ type: "ready", sessionId, resumed: true });
    resumed.close();
    const spoofed = await connect(httpUrl(wsUrl), { "x-liveline-resume-from": "7" });
    expect(await spoofed.next()).toMatchObject({ type: "ready", resumed: false });
    spoofed.close();
  });

  it("answers ping with pong", async () => {
    const { client } = await sessionWithClient();
    client.send({ type: "ping" });
    expect(await client.next()).toEqual({ type: "pong" });
    client.close();
  });

  it("answers bad frames with a non-fatal bad_frame error and goes on", async () => {
    const { client } = await sessionWithClient();
    const bad: [string, string | ArrayBuffer][] = [
      ["not JSON", "hello"],
      ["JSON array", "[1,2]"],
      ["JSON string", '"ping"'],
      ["no type", '{"text":"hi"}'],
      ["unknown type", '{"type":"dance"}'],
      ["text: number", '{"type":"text","text":5}'],
      ["text: missing", '{"type":"text"}'],
      ["tool_result: no callId", '{"type":"tool_result","result":{}}'],
      ["tool_result: result not object", '{"type":"tool_result","callId":"c1","result":"ok"}'],
      ["tool_result: error not string", '{"type":"tool_result","callId":"c1","error":{}}'],
      ["odd-length PCM16", new Uint8Array(3).buffer],
    ];
    for (const [what, data] of bad) {
      client.send(data);
      const error = await client.next();
      expect(error, what).toMatchObject({ type: "error", code: "bad_frame", fatal: false });
      expect(typeof error.message, what).toBe("string");
      expect(await client.pingThrough(), `${what}: session goes on`).toEqual([{ type: "pong" }]);
    }
    client.close();
  });

  it("answers frames over MAX_FRAME_BYTES with frame_too_large and keeps the socket open", async () => {
    const { client } = await sessionWithClient();
    const max = 262_144;
    client.send(JSON.stringify({ type: "text", text: "x".repeat(max) }));
    expect(await client.next()).toMatchObject({
      type: "error",
      code: "frame_too_large",
      fatal: false,
    });
    expect(await client.pingThrough()).toEqual([{ type: "pong" }]);
    client.send(new Uint8Array(max + 2).buffer);
    expect(await client.next()).toMatchObject({ type: "error", code: "frame_too_large" });
    expect(await client.pingThrough()).toEqual([{ type: "pong" }]);
    // Multi-byte text is measured in bytes, not characters: 100k × "é" is 200 kB (fits).
    client.send(JSON.stringify({ type: "text", text: "é".repeat(100_000) }));
    const after = await client.pingThrough();
    expect(after.some((f) => f.code === "frame_too_large" || f.code === "bad_frame")).toBe(false);
    // …and 150k × "é" is 300 kB (does not).
    client.send(JSON.stringify({ type: "text", text: "é".repeat(150_000) }));
    expect(await client.next()).toMatchObject({ type: "error", code: "frame_too_large" });
    client.close();
  });

  it("takes valid frames of every client type without bad_frame", async () => {
    const { client } = await sessionWithClient();
    const good: (string | ArrayBuffer)[] = [
      JSON.stringify({ type: "text", text: "hello" }),
      new Uint8Array(640).buffer,
      JSON.stringify({ type: "audio_end" }),
      JSON.stringify({ type: "tool_result", callId: "c1", result: { ok: true } }),
      JSON.stringify({ type: "tool_result", callId: "c2", error: "no" }),
      JSON.stringify({ type: "text", text: "hi", futureField: 1 }),
    ];
    for (const data of good) {
      client.send(data);
      const frames = await client.pingThrough();
      expect(frames.filter((f) => f.code === "bad_frame")).toEqual([]);
    }
    client.close();
  });

  it("drops control frames beyond MAX_FRAMES_PER_SECOND, each with a non-fatal rate_limited error naming it", async () => {
    const { client } = await sessionWithClient();
    // 250 pings: in one or two one-second windows of 100, at least 50 are over the limit.
    for (let i = 0; i < 250; i++) client.send({ type: "ping" });
    await new Promise((r) => setTimeout(r, 1100));
    client.send({ type: "marker" }); // an unknown type: answered by bad_frame, ends the burst
    const frames: Frame[] = [];
    for (;;) {
      const f = await client.next();
      if (f.code === "bad_frame") break;
      frames.push(f);
    }
    const pongs = frames.filter((f) => f.type === "pong").length;
    const limited = frames.filter((f) => f.code === "rate_limited");
    expect(pongs).toBeGreaterThanOrEqual(100);
    expect(pongs).toBeLessThanOrEqual(200);
    // Nothing is dropped silently: every dropped frame is named (issue 9).
    expect(limited.length).toBe(250 - pongs);
    expect(limited[0]).toMatchObject({ type: "error", fatal: false });
    expect(String(limited[0]!.message)).toMatch(/^ping frame dropped/);
    expect(frames.length).toBe(pongs + limited.length);
    // A new second: the socket is served again.
    expect(await client.pingThrough()).toEqual([{ type: "pong" }]);
    client.close();
  });

  it("takes at most MAX_CLIENTS_PER_SESSION (3 here) sockets; one more gets an error and 1013", async () => {
    const { wsUrl } = await createSession();
    const clients: Client[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await connect(httpUrl(wsUrl));
      expect((await c.next()).type).toBe("ready");
      clients.push(c);
    }
    const extra = await connect(httpUrl(wsUrl));
    expect(await extra.next()).toMatchObject({
      type: "error",
      code: "too_many_clients",
      fatal: true,
    });
    expect((await extra.closed).code).toBe(1013);
    for (const c of clients) expect(await c.pingThrough()).toEqual([{ type: "pong" }]);

    // A closed socket frees its place.
    clients[0]!.close();
    await clients[0]!.closed;
    let ready: Frame | null = null;
    for (let attempt = 0; attempt < 20 && ready === null; attempt++) {
      const c = await connect(httpUrl(wsUrl));
      const first = await c.next();
      if (first.type === "ready") ready = first;
      else await new Promise((r) => setTimeout(r, 50));
      clients.push(c);
    }
    expect(ready).toMatchObject({ type: "ready" });
    for (const c of clients) c.close();
  });

  it("keeps the ended state across an eviction of the object", async () => {
    const { wsUrl, sessionId } = await createSession();
    const del = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${env.API_KEY}` },
    });
    expect(del.status).toBe(200);
    await evictDurableObject(env.SESSION.get(env.SESSION.idFromName(sessionId)));
    const res = await upgrade(httpUrl(wsUrl));
    expect(res.status).toBe(410);
    expect((await errorOf(res)).code).toBe("session_ended");
  });
});
