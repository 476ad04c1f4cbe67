import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  BASE,
  type Client,
  connect,
  createSession,
  type Frame,
  httpUrl,
  nested,
  upgrade,
  withKey,
} from "../support/gateway.js";
import { framesUntil, simulatorSession } from "../support/session-flow.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function drain(client: Client, ms = 300): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (;;) {
    const f = await client.next(ms).catch(() => null);
    if (!f) return frames;
    frames.push(f);
  }
}

async function historyOf(sessionId: string): Promise<Response> {
  return exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, { headers: withKey() });
}

/** A session whose greeting calls the client tool; returns the pending call. */
async function withClientCall() {
  const session = await simulatorSession({ calls: "greeting:suggest_topics" });
  session.client.send({ type: "text", text: "hi" });
  const frames = await framesUntil(
    session.client,
    (f) => f.type === "tool_call" && f.runOn === "client",
  );
  return { ...session, call: frames.at(-1)! };
}

// Issue 9.
describe("input that cannot break the log", () => {
  it("a tool result nested 2,460 levels deep is refused with bad_frame naming the limit; /history keeps answering", async () => {
    const { sessionId, client, call } = await withClientCall();
    client.send({ type: "tool_result", callId: call.callId, result: nested(2460) });
    const error = (await framesUntil(client, (f) => f.type === "error")).at(-1)!;
    expect(error).toMatchObject({ code: "bad_frame", fatal: false });
    expect(String(error.message)).toMatch(/nested deeper than 64 levels/);
    // The call is still open: the client's real answer is taken.
    client.send({ type: "tool_result", callId: call.callId, result: nested(60) });
    const result = (await framesUntil(client, (f) => f.type === "tool_result")).at(-1)!;
    expect(result.callId).toBe(call.callId);
    const res = await historyOf(sessionId);
    expect(res.status).toBe(200);
    const { events } = (await res.json()) as { events: { kind: string }[] };
    expect(events.filter((e) => e.kind === "tool_result")).toHaveLength(1);
    client.close();
  });

  it("POST /v1/sessions with metadata nested too deep answers 400 naming the limit, not 500", async () => {
    const res = await exports.default.fetch(`${BASE}/v1/sessions`, {
      method: "POST",
      headers: { ...withKey(), "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: nested(2460) }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.message).toMatch(/nested deeper than 64 levels/);
  });
});

// Issue 9.
describe("nothing dropped silently", () => {
  it("a tool result after a burst of 100 audio frames is taken (separate budgets)", async () => {
    const { client, call } = await withClientCall();
    for (let i = 0; i < 100; i++) client.send(new ArrayBuffer(640));
    client.send({ type: "tool_result", callId: call.callId, result: { shown: true } });
    const frames = await framesUntil(
      client,
      (f) => f.type === "tool_result" && f.callId === call.callId,
    );
    expect(frames.filter((f) => f.type === "error" && f.code === "rate_limited")).toEqual([]);
    client.close();
  });

  it("control frames past the limit are dropped one by one, each with an error naming it", async () => {
    const { client } = await simulatorSession({});
    for (let i = 0; i < 130; i++) client.send({ type: "audio_end" });
    const frames = await drain(client, 500);
    const limited = frames.filter((f) => f.type === "error" && f.code === "rate_limited");
    expect(limited.length).toBeGreaterThanOrEqual(25);
    expect(String(limited[0]!.message)).toMatch(/audio_end frame dropped/);
    client.close();
  });
});

// Issue 9.
describe("unambiguous input", () => {
  it("a tool result with both result and error, or neither, is refused", async () => {
    const { client, call } = await withClientCall();
    client.send({ type: "tool_result", callId: call.callId, result: { a: 1 }, error: "no" });
    client.send({ type: "tool_result", callId: call.callId });
    const errors = (await drain(client, 400)).filter((f) => f.type === "error");
    expect(errors).toHaveLength(2);
    for (const e of errors) expect(String(e.message)).toMatch(/exactly one of result or error/);
    client.close();
  });

  it("resumeFrom beyond the session's last seq is refused with 400", async () => {
    const { wsUrl, ready, client } = await simulatorSession({});
    client.close();
    const res = await upgrade(`${httpUrl(wsUrl)}&resumeFrom=${(ready.lastSeq as number) + 50}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/beyond the session's last seq/);
  });

  it("simulator knobs out of range, or unknown, are refused at creation with 400 naming them", async () => {
    for (const [knobs, pattern] of [
      [{ simulator: { race: 5 } }, /race must be a number in \[0, 1\]/],
      [{ simulator: { rcae: 1 } }, /unknown simulator knob: rcae/],
      // Found by the attack: taken silently, the naive relay not switched on.
      [{ simulator: null }, /metadata.simulator must be an object of knobs or a query string/],
      [{ naive: "yes" }, /metadata.naive must be true or false/],
    ] as const) {
      const res = await exports.default.fetch(`${BASE}/v1/sessions`, {
        method: "POST",
        headers: { ...withKey(), "Content-Type": "application/json" },
        body: JSON.stringify({ provider: "simulator", metadata: knobs }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(pattern);
    }
  });
});

// Issue 9.
describe("stale sockets", () => {
  it("sockets silent past STALE_SOCKET_MS are closed when the session is full; one sending keepalives stays", {
    timeout: 15_000,
  }, async () => {
    const created = await createSession({ provider: "simulator" });
    const url = httpUrl(created.wsUrl);
    const silent = [await connect(url), await connect(url)];
    const pinging = await connect(url); // the test deployment takes 3
    // The keepalive is answered by the runtime, without waking the session object.
    const pinger = setInterval(() => pinging.send('{"type":"keepalive"}'), 300);
    try {
      await sleep(2000); // past STALE_SOCKET_MS (1.5 s in the test deployment)
      const fourth = await connect(url);
      expect((await fourth.next()).type).toBe("ready");
      for (const s of silent) expect((await s.closed).code).toBe(1001);
      // The keepalive socket is still in, and its keepalives are still answered.
      const frames = await framesUntil(pinging, (f) => f.type === "keepalive", 2000);
      expect(frames.at(-1)?.type).toBe("keepalive");
      expect(pinging.ws.readyState).toBe(WebSocket.OPEN);
      fourth.close();
    } finally {
      clearInterval(pinger);
      pinging.close();
    }
  });

  it("when no socket is stale the refusal says how many slots are held and since when", async () => {
    const created = await createSession({ provider: "simulator" });
    const url = httpUrl(created.wsUrl);
    const held = [await connect(url), await connect(url), await connect(url)];
    const fourth = await connect(url);
    const frames = await drain(fourth, 500);
    const refusal = frames.find((f) => f.type === "error");
    expect(refusal).toMatchObject({ code: "too_many_clients" });
    expect(String(refusal!.message)).toMatch(/3 are held, the oldest since \d{4}-/);
    for (const c of held) c.close();
  });
});
