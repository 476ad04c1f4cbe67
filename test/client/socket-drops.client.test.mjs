/**
 * liveline/client against a real gateway (`wrangler dev`, the greeter app, the simulator):
 * seeded socket drops in the middle of turns lose and repeat no durable frame, and every
 * client tool call is answered exactly once — also when its result is ready while the
 * socket is down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  API_KEY,
  createSession,
  history,
  prng,
  sleep,
  startServer,
} from "../../scripts/lib/harness.mjs";
import { connect } from "../../src/client/index.ts";

/**
 * Seeded socket drops in the long run (CLIENT_DROPS to change it). A fresh seed each run,
 * printed (CLIENT_SEED replays one): 300 drops a run over new interleavings each time find more
 * than 1000 over the same ones, in a third of npm test's time.
 */
const DROPS = Number(process.env.CLIENT_DROPS ?? 300);
const SEED = Number(process.env.CLIENT_SEED ?? Math.floor(Math.random() * 2 ** 31));

let server;
/** The same gateway with hibernatable client sockets (the last describe's). */
let hibernating;
// Both at once: each start is mostly waiting on its own processes.
beforeAll(async () => {
  [server, hibernating] = await Promise.all([
    startServer(),
    startServer({ vars: { CLIENT_SOCKETS: "hibernatable" } }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([server?.stop(), hibernating?.stop()]);
});

/** As an app's backend does it: null once the gateway says the session ended (410). */
async function tokenFor(sessionId, gateway = server) {
  const res = await fetch(`${gateway.base}/v1/sessions/${sessionId}/token`, {
    method: "POST",
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  if (res.status === 410) return null;
  return (await res.json()).token;
}

describe("liveline/client over a real gateway", () => {
  it(`${DROPS} seeded drops mid-turn: every durable frame once, in order; each client call answered once`, async () => {
    console.log(`client drops: seed ${SEED} (CLIENT_SEED=${SEED} replays it)`);
    const random = prng(SEED);
    const created = await createSession(server, {
      metadata: { simulator: { timeScale: 0.05 } },
    });
    const events = [];
    const errors = [];
    let toolRuns = 0;
    let tokens = 0;
    const client = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => {
        tokens++;
        return tokenFor(created.sessionId);
      },
      backoff: { baseMs: 2, maxMs: 20 },
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
      tools: {
        // Chips: answered after a random delay, so some results are ready while the socket is down.
        suggest_topics: async () => {
          toolRuns++;
          await sleep(random() * 60);
          return { shown: true };
        },
        get_user_profile: async () => {
          toolRuns++;
          await sleep(random() * 60);
          return { name: "Ada", plan: "team" };
        },
      },
    });
    const lines = ["hi", "what is my profile?", "tell me about pricing", "what do you remember?"];
    let drops = 0;
    let turn = 0;
    while (drops < DROPS) {
      client.sendText(lines[turn++ % lines.length]);
      // A few drops at random moments of this turn.
      const cuts = 1 + Math.floor(random() * 5);
      for (let i = 0; i < cuts && drops < DROPS; i++) {
        await sleep(random() * 40);
        client.dropConnection();
        drops++;
      }
      // Let the turn finish before the next line (else lines barge in on each other).
      const deadline = Date.now() + 10_000;
      const ended = () =>
        events.some(
          (e) =>
            (e.type === "turn_complete" || e.type === "interrupted") && e.turnId === `t${turn}`,
        );
      while (!ended() && Date.now() < deadline) await sleep(20);
      expect(ended(), `turn t${turn} ended`).toBe(true);
    }
    // Settle: every outstanding result sent, the log quiet.
    await sleep(500);
    client.close();

    const log = await history(server, created.sessionId);
    // Every durable frame exactly once, in order, none missing.
    expect(events.map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    const typeOf = { model_text: "text" };
    expect(events.map((e) => e.type)).toEqual(log.map((e) => typeOf[e.kind] ?? e.kind));
    // Each client call: one result or one cancellation, never a duplicate refused.
    const clientCalls = log.filter((e) => e.kind === "tool_call" && e.runOn === "client");
    expect(clientCalls.length).toBeGreaterThan(0);
    for (const call of clientCalls) {
      const outcomes = log.filter(
        (e) =>
          (e.kind === "tool_result" || e.kind === "tool_cancelled") && e.callId === call.callId,
      );
      expect(outcomes, call.callId).toHaveLength(1);
    }
    expect(errors.filter((e) => e.code === "duplicate_result")).toEqual([]);
    // Each call ran once on this client (no re-run after a resume).
    expect(toolRuns).toBe(clientCalls.length);
    console.log(
      `client: ${DROPS} drops over ${turn} turns, ${events.length} frames, ${clientCalls.length} client calls, ${tokens} tokens asked for, ${errors.length} connection errors (${[...new Set(errors.map((e) => e.code))].join(", ") || "none"})`,
    );
  }, 600_000);

  it("lines sent right before a drop are each taken once, in order (sent again with their textId)", async () => {
    const created = await createSession(server, { metadata: { simulator: { timeScale: 0 } } });
    const events = [];
    const client = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => tokenFor(created.sessionId),
      backoff: { baseMs: 20, maxMs: 50 },
      onEvent: (e) => events.push(e),
      tools: { suggest_topics: () => ({ shown: true }) },
    });
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
    for (const line of lines) {
      while (client.state.state !== "live") await sleep(5);
      // Dropped before the line's user frame can come back: the client cannot know whether
      // the line arrived, and sends it again once it is back.
      client.sendText(line);
      client.dropConnection();
    }
    const deadline = Date.now() + 20_000;
    while (client.unconfirmedLines > 0 && Date.now() < deadline) await sleep(20);
    expect(client.unconfirmedLines).toBe(0);
    client.close();
    const log = await history(server, created.sessionId);
    const users = log.filter((e) => e.kind === "user");
    expect(users.map((e) => e.text)).toEqual(lines);
    expect(new Set(users.map((e) => e.textId)).size).toBe(lines.length);
  }, 60_000);

  it("a result ready while the socket is down goes out after the resume, once", async () => {
    const created = await createSession(server, { metadata: { simulator: { timeScale: 0.2 } } });
    let release;
    const gate = new Promise((ok) => {
      release = ok;
    });
    const events = [];
    const client = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => tokenFor(created.sessionId),
      backoff: { baseMs: 200, maxMs: 200 },
      onEvent: (e) => events.push(e),
      tools: {
        suggest_topics: async () => {
          await gate;
          return { shown: true };
        },
      },
    });
    client.sendText("hi");
    while (!events.some((e) => e.type === "tool_call")) await sleep(10);
    client.dropConnection();
    release(); // the result is ready while the socket is down
    while (!events.some((e) => e.type === "tool_result" && e.name === "suggest_topics"))
      await sleep(10);
    await sleep(300);
    client.close();
    const log = await history(server, created.sessionId);
    expect(log.filter((e) => e.kind === "tool_result" && e.name === "suggest_topics")).toHaveLength(
      1,
    );
  }, 60_000);

  it("a token near its expiry, or refused, is replaced by a fresh one from getToken", async () => {
    const created = await createSession(server, { metadata: { simulator: { timeScale: 0.2 } } });
    const asked = [];
    let statuses = [];
    const client = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      backoff: { baseMs: 20, maxMs: 50 },
      onStatus: (s) => statuses.push(s.state),
      getToken: async () => {
        asked.push(Date.now());
        // First a token the server refuses; then a good one that expires within a minute.
        if (asked.length === 1) return "not.a.jwt";
        return {
          token: await tokenFor(created.sessionId),
          expiresAt: new Date(Date.now() + 30_000).toISOString(),
        };
      },
    });
    while (client.state.state !== "live") await sleep(10);
    expect(asked).toHaveLength(2); // the refused upgrade asked for a fresh one
    statuses = [];
    client.dropConnection();
    while (client.state.state !== "live") await sleep(10);
    expect(asked).toHaveLength(3); // near expiry: not reused for the reconnect
    expect(statuses).toContain("reconnecting");
    client.close();
  }, 60_000);

  it("a call cancelled while its tool ran is not answered", async () => {
    const created = await createSession(server, { metadata: { simulator: { timeScale: 0.2 } } });
    let release;
    const gate = new Promise((ok) => {
      release = ok;
    });
    const events = [];
    const errors = [];
    const client = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => tokenFor(created.sessionId),
      onEvent: (e) => events.push(e),
      onError: (e) => errors.push(e),
      tools: {
        suggest_topics: () => ({ shown: true }),
        // The profile is a spoken answer: its turn waits for it, and a new line cuts both.
        get_user_profile: async () => {
          await gate;
          return { name: "Ada" };
        },
      },
    });
    client.sendText("hi");
    while (!events.some((e) => e.type === "turn_complete")) await sleep(10);
    client.sendText("what is my profile?");
    while (!events.some((e) => e.type === "tool_call" && e.name === "get_user_profile"))
      await sleep(10);
    client.sendText("never mind");
    const cancelled = () =>
      events.find((e) => e.type === "tool_cancelled" && e.name === "get_user_profile");
    const deadline = Date.now() + 20_000;
    while (!cancelled() && Date.now() < deadline) await sleep(10);
    expect(cancelled()).toMatchObject({ reason: "barge_in" });
    release(); // the tool finishes now: its result must not be sent
    await sleep(500);
    client.close();
    expect(errors.filter((e) => e.code === "call_cancelled")).toEqual([]);
    const log = await history(server, created.sessionId);
    expect(log.filter((e) => e.kind === "tool_result" && e.name === "get_user_profile")).toEqual(
      [],
    );
  }, 60_000);

  it("a refusal for good closes the client with the reason (found by the attack: it retried for ever)", async () => {
    const closedWith = async (opts) => {
      const statuses = [];
      const client = connect({
        baseUrl: server.base,
        backoff: { baseMs: 10, maxMs: 20 },
        onStatus: (s) => statuses.push(s),
        ...opts,
      });
      const deadline = Date.now() + 15_000;
      while (client.state.state !== "closed" && Date.now() < deadline) await sleep(20);
      client.close();
      return statuses.find((s) => s.state === "closed")?.reason;
    };
    // An ended session.
    const ended = await createSession(server, {});
    await fetch(`${server.base}/v1/sessions/${ended.sessionId}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    expect(
      await closedWith({ sessionId: ended.sessionId, getToken: () => tokenFor(ended.sessionId) }),
    ).toMatch(/ended/);
    // A seq the session never had.
    const live = await createSession(server, {});
    expect(
      await closedWith({
        sessionId: live.sessionId,
        getToken: () => tokenFor(live.sessionId),
        resumeFrom: 9999,
      }),
    ).toMatch(/beyond/);
    // A token the gateway will not take, however often it is asked for.
    expect(
      await closedWith({ sessionId: live.sessionId, getToken: async () => "not.a.jwt" }),
    ).toMatch(/refuses the token/);
    // A getToken that never answers: the attempt fails, and is retried (not stuck connecting).
    const statuses = [];
    const slow = connect({
      baseUrl: server.base,
      sessionId: live.sessionId,
      tokenTimeoutMs: 50,
      backoff: { baseMs: 10, maxMs: 20 },
      getToken: () => new Promise(() => {}),
      onStatus: (s) => statuses.push(s),
    });
    await sleep(300);
    slow.close();
    expect(statuses.some((s) => s.state === "reconnecting" && /no token/.test(s.why))).toBe(true);
  }, 60_000);

  it("a fresh client replaying from 0 runs no call the log already settled", async () => {
    const created = await createSession(server, { metadata: { simulator: { timeScale: 0.2 } } });
    const first = [];
    const a = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => tokenFor(created.sessionId),
      onEvent: (e) => first.push(e),
      tools: { suggest_topics: () => ({ shown: true }) },
    });
    a.sendText("hi");
    while (!first.some((e) => e.type === "turn_complete")) await sleep(10);
    await sleep(200);
    a.close();
    let runs = 0;
    const replayed = [];
    const b = connect({
      baseUrl: server.base,
      sessionId: created.sessionId,
      getToken: () => tokenFor(created.sessionId),
      onEvent: (e) => replayed.push(e),
      tools: {
        suggest_topics: () => {
          runs++;
          return { shown: true };
        },
      },
    });
    while (replayed.length < first.length) await sleep(10);
    await sleep(200);
    b.close();
    expect(replayed.map((e) => e.seq)).toEqual(first.map((e) => e.seq));
    expect(runs).toBe(0);
  }, 60_000);
});

/**
 * On a hibernatable socket (CLIENT_SOCKETS = "hibernatable") that has never sent a frame,
 * workerd does not complete the closing handshake: the gateway's close reaches such a client
 * only when the object leaves memory, seconds later (found by the black-box attack).
 * liveline/client does not wait for the close: the session's `ended` status closes it. The
 * control is a raw socket that sends nothing: it still waits when the client has closed.
 */
describe("liveline/client on a hibernatable socket", () => {
  it("a listening client hears the session end at once; a socket that never spoke does not (control)", async () => {
    const created = await createSession(hibernating, {});
    const tokenOf = () => tokenFor(created.sessionId, hibernating);
    const statuses = [];
    const client = connect({
      baseUrl: hibernating.base,
      sessionId: created.sessionId,
      getToken: tokenOf,
      onStatus: (s) => statuses.push(s),
    });
    const raw = new WebSocket(created.wsUrl);
    let rawClosedAt = null;
    raw.onclose = () => {
      rawClosedAt = Date.now();
    };
    await new Promise((ok) => {
      raw.onmessage = (e) => typeof e.data === "string" && e.data.includes('"ready"') && ok();
    });
    while (client.state.state !== "live") await sleep(20);
    await sleep(300);
    const endedAt = Date.now();
    await fetch(`${hibernating.base}/v1/sessions/${created.sessionId}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    while (client.state.state !== "closed" && Date.now() - endedAt < 8000) await sleep(20);
    const clientHeardIn = Date.now() - endedAt;
    client.close();
    expect(statuses.find((s) => s.state === "closed")?.reason).toMatch(/ended/);
    expect(clientHeardIn).toBeLessThan(3000);
    // The control: the socket that never spoke has not had its close yet.
    expect(rawClosedAt).toBeNull();
    raw.close();
  }, 60_000);
});
