/**
 * A deploy, as an operator sees it: the gateway process (`wrangler dev`) is killed in the
 * middle of live conversations and started again on the same state, as a deploy or a Workers
 * runtime update resets every session object (and every socket) while Cloudflare's edge stays
 * reachable (scripts/lib/edge.mjs plays the edge). One kill serves every case at once, each
 * brought to its moment first:
 * - phone calls through the carrier stand-in, taught `<Connect action>` as Twilio documents
 *   it: a question in flight (heard, its answer not begun), a reply half played, a server tool
 *   in flight on the order desk's MCP server (the tests' own: one that may run again with its
 *   key, and one that may not), and a control whose voice answer lost its `action`;
 * - a browser session on liveline/client with a line in flight.
 * After the restart each call goes on over a new stream, with no second greeting, and each
 * question is answered once; every record is valid (no call without its one outcome).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEdge } from "../../scripts/lib/edge.mjs";
import {
  API_KEY,
  createSession,
  history,
  MEASUREMENT_WORKER,
  sleep,
  startServer,
  timeline,
} from "../../scripts/lib/harness.mjs";
import { startMcpTestServer } from "../../scripts/lib/mcp-test-server.mjs";
import { DESK_LINE } from "../../scripts/measurement/lines.ts";
import { connect } from "../../src/client/index.ts";
import { validateHistory } from "../../src/history/validate.ts";
import { TwilioCallStandIn, webTransport } from "../../src/simulator/twilio/index.ts";
import { pcm16ToMulaw } from "../../src/telephony/audio/g711.ts";

const AUTH_TOKEN = "deploy-test-auth-token";
const GREETER_LINE = "+15550002222";
/** A lost stream has this long to come back (short: the control waits it out). */
const GRACE_MS = 8_000;
/** How long the model waits before an answer, where the kill must come before it. */
const SLOW_MS = 4_000;

/** A tone loud enough for the simulator's energy VAD, as μ-law 8 kHz. */
function tone(ms) {
  const pcm = new Int16Array(ms * 8);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return pcm16ToMulaw(pcm);
}
const silence = (ms) => new Uint8Array(ms * 8).fill(0xff);

const kinds = (events, kind) => events.filter((e) => e.kind === kind);
const wordsOf = (events, turnId) =>
  events
    .filter((e) => (e.kind === "transcript" || e.kind === "model_text") && e.turnId === turnId)
    .map((e) => e.text)
    .join("");
const allWords = (events) =>
  events
    .filter((e) => e.kind === "transcript" || e.kind === "model_text")
    .map((e) => e.text)
    .join("");

async function until(read, check, what, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

let mcp;
let server;
let edge;
/** The gateway as the cases reach it: through the edge. */
let gateway;
const vars = () => ({
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  MCP_DESK_URL: mcp.url,
  CALL_RECONNECT_GRACE_MS: String(GRACE_MS),
});

/** A call through the stand-in; `stripAction`: its voice answer reaches it without `action`. */
async function place(knobs, { to = GREETER_LINE, stripAction = false } = {}) {
  const web = webTransport();
  const transport = stripAction
    ? {
        async fetch(request) {
          const res = await web.fetch(request);
          const body = (await res.text()).replace(/ action="[^"]*" method="POST"/, "");
          return new Response(body, { status: res.status, headers: res.headers });
        },
        openWebSocket: (url) => web.openWebSocket(url),
      }
    : web;
  // Twilio waits 15 s for an action's answer; here the whole gateway restarts (seconds, more
  // on a loaded machine), which on Cloudflare it never does: its Worker answers throughout.
  const call = new TwilioCallStandIn({
    transport,
    allowInsecureStream: true,
    actionTimeoutMs: 90_000,
  });
  const query = encodeURIComponent(new URLSearchParams(knobs).toString());
  const placed = await call.placeCall({
    baseUrl: gateway.base,
    voiceUrl: `${gateway.base}/v1/telephony/twilio/voice?simulator=${query}`,
    authToken: AUTH_TOKEN,
    from: "+15550001111",
    to,
  });
  const sessionId = placed.streamUrl.split("/").at(-1);
  // Greeted: the greeting's turn over, and heard through.
  await until(
    () => history(gateway, sessionId),
    (e) => e.some((x) => x.kind === "turn_complete"),
    "the greeting",
    30_000,
  );
  await call.waitFor((c) => c.heardMs() > 0 && c.queuedMs() === 0, 30_000);
  return { call, sessionId, greeted: call.heardMs() };
}

/** The caller asks something (a tone, then the silence that ends the utterance). */
async function ask(call) {
  await call.sendAudio(tone(300), { realTime: true });
  await call.sendAudio(silence(700), { realTime: true });
}

const read = (sessionId) => history(gateway, sessionId);
const rows = (sessionId) => timeline(gateway, sessionId);
const mcpCalls = (sessionId, name) =>
  mcp.calls.filter((c) => c.name === name && c.key?.startsWith(`${sessionId}:`));

const cases = {};
/** What the gateway's restart took, and the kill's moment. */
const restart = {};

beforeAll(async () => {
  mcp = await startMcpTestServer({ orderMs: 8_000 });
  server = await startServer({ main: MEASUREMENT_WORKER, vars: vars() });
  edge = await startEdge();
  edge.route(server.port);
  gateway = { base: edge.base, ws: edge.ws };

  // Every case placed and greeted at once.
  const slow = { timeScale: "1", latencyMs: String(SLOW_MS), msPerWord: "60" };
  const quick = { timeScale: "1", latencyMs: "0", msPerWord: "60" };
  const [question, halfPlayed, rerun, once, control] = await Promise.all([
    place({ ...slow, calls: "greeting:;*:" }),
    place({ timeScale: "1", latencyMs: "0", msPerWord: "250", calls: "greeting:;*:" }),
    place({ ...quick, calls: "greeting:;2:desk__place_order;*:" }, { to: DESK_LINE }),
    place({ ...quick, calls: "greeting:;2:desk__send_notice;*:" }, { to: DESK_LINE }),
    place(quick, { stripAction: true }),
  ]);
  const created = await createSession(gateway, {
    metadata: { simulator: { timeScale: 1, latencyMs: SLOW_MS, msPerWord: 60 } },
  });
  const browser = { sessionId: created.sessionId, events: [], audio: [], statuses: [] };
  browser.client = connect({
    baseUrl: gateway.base,
    sessionId: created.sessionId,
    getToken: async () => {
      const res = await fetch(`${gateway.base}/v1/sessions/${created.sessionId}/token`, {
        method: "POST",
        headers: { Authorization: `Bearer ${API_KEY}` },
      });
      return res.status === 410 ? null : (await res.json()).token;
    },
    backoff: { baseMs: 100, maxMs: 500 },
    onEvent: (e) => browser.events.push(e),
    onAudio: () => browser.audio.push(performance.now()),
    onStatus: (s) => browser.statuses.push(s.state),
  });
  await until(
    async () => browser.statuses,
    (s) => s.includes("live"),
    "the browser client is live",
  );
  Object.assign(cases, { question, halfPlayed, rerun, once, control, browser });

  // Each brought to its moment, all at once.
  await Promise.all([
    (async () => {
      await ask(question.call);
      // Heard and transcribed, kept: its answer is SLOW_MS away.
      await until(
        () => rows(question.sessionId),
        (r) => r.some((row) => row.kind === "SPEECH_KEPT"),
        "the question kept",
      );
    })(),
    (async () => {
      await ask(halfPlayed.call);
      await halfPlayed.call.waitFor((c) => c.heardMs() > halfPlayed.greeted + 1_000, 20_000);
    })(),
    (async () => {
      await ask(rerun.call);
      await until(
        async () => mcpCalls(rerun.sessionId, "place_order"),
        (c) => c.length === 1,
        "place_order at the server",
      );
    })(),
    (async () => {
      await ask(once.call);
      await until(
        async () => mcpCalls(once.sessionId, "send_notice"),
        (c) => c.length === 1,
        "send_notice at the server",
      );
    })(),
    (async () => {
      browser.client.sendText("What are your opening hours?");
      await until(
        async () => browser.events,
        (e) => e.some((f) => f.type === "user"),
        "the browser's line recorded",
      );
    })(),
  ]);
  // Each still at its moment: nothing of the answers begun, the reply still playing.
  const before = await Promise.all([read(question.sessionId), read(halfPlayed.sessionId)]);
  restart.questionBefore = before[0];
  restart.halfPlayedBefore = before[1];
  restart.browserTextBefore = browser.events.filter((e) => e.type === "text").length;
  restart.heardBefore = {
    question: question.call.heardMs(),
    halfPlayed: halfPlayed.call.heardMs(),
  };

  // The deploy: every object reset with its sockets; the edge holds what comes meanwhile.
  edge.route(null);
  restart.killedAt = performance.now();
  await server.kill();
  server = await startServer({ restartOf: server, main: MEASUREMENT_WORKER, vars: vars() });
  edge.route(server.port);
  restart.startMs = server.startMs;
}, 170_000);

afterAll(async () => {
  cases.browser?.client?.close();
  for (const c of Object.values(cases)) c.call?.hangUp?.();
  await edge?.close();
  await server?.stop();
  await mcp?.stop();
});

describe("a gateway killed mid-conversation and started again on its state", () => {
  it("each case was at its moment when the gateway died", () => {
    // The question: heard, not a turn yet (its answer had not begun).
    expect(kinds(restart.questionBefore, "user")).toHaveLength(1);
    // The reply: under way, its turn not ended.
    const reply = kinds(restart.halfPlayedBefore, "user").at(-1);
    expect(reply?.turnId).toBe("t2");
    expect(kinds(restart.halfPlayedBefore, "turn_complete").map((e) => e.turnId)).toEqual(["t1"]);
    // The browser's line: recorded, unanswered.
    expect(restart.browserTextBefore).toBe(0);
  });

  it("a question in flight: the call goes on over a new stream and the caller hears its answer once, with no second greeting", async () => {
    const { call, sessionId } = cases.question;
    await call.waitFor(
      (c) => c.streams.length === 2 && c.heardMs() > restart.heardBefore.question + 500,
      30_000,
    );
    const events = await until(
      () => read(sessionId),
      (e) => kinds(e, "turn_complete").length === 2,
      "the question answered",
    );
    const users = kinds(events, "user");
    expect(users.map((e) => e.source)).toEqual(["text", "audio"]);
    expect(kinds(events, "interrupted")).toEqual([]);
    expect(wordsOf(events, users[1].turnId)).not.toBe("");
    expect(allWords(events).match(/Hello!/g)).toHaveLength(1);
    expect(validateHistory(events)).toEqual([]);
    expect(call.violations).toEqual([]);
  }, 60_000);

  it("a reply half played: it ends once, upstream_lost; the call goes on and the next question is answered once", async () => {
    const { call, sessionId } = cases.halfPlayed;
    await call.waitFor((c) => c.streams.length === 2, 30_000);
    const heard = call.heardMs();
    await ask(call);
    await call.waitFor((c) => c.heardMs() > heard + 500, 30_000);
    const events = await until(
      () => read(sessionId),
      (e) => kinds(e, "turn_complete").length === 2,
      "the next question answered",
    );
    expect(kinds(events, "interrupted")).toEqual([
      expect.objectContaining({ turnId: "t2", reason: "upstream_lost" }),
    ]);
    expect(kinds(events, "user")).toHaveLength(3);
    expect(allWords(events).match(/Hello!/g)).toHaveLength(1);
    expect(validateHistory(events)).toEqual([]);
    expect(call.violations).toEqual([]);
  }, 60_000);

  it("a server tool in flight that may run again: run again with the same key, one effect, its result heard once", async () => {
    const { call, sessionId } = cases.rerun;
    const events = await until(
      () => read(sessionId),
      (e) => kinds(e, "turn_complete").length === 2,
      "the order answered",
      40_000,
    );
    const calls = mcpCalls(sessionId, "place_order");
    const [toolCall] = kinds(events, "tool_call");
    expect(calls.map((c) => c.key)).toEqual([
      `${sessionId}:${toolCall.callId}`,
      `${sessionId}:${toolCall.callId}`,
    ]);
    // The test server's side-effect counter: one order, whatever the runs.
    expect(mcp.effects.orders).toBe(1);
    expect(kinds(events, "tool_result")).toEqual([
      expect.objectContaining({ callId: toolCall.callId }),
    ]);
    expect(kinds(events, "tool_cancelled")).toEqual([]);
    expect(wordsOf(events, toolCall.turnId)).toMatch(/Order A\d+ placed/);
    expect(call.streams).toHaveLength(2);
    expect(allWords(events).match(/Hello!/g)).toHaveLength(1);
    expect(validateHistory(events)).toEqual([]);
  }, 60_000);

  it("a server tool in flight that may not run again: not run again, and the model hears its outcome is unknown", async () => {
    const { call, sessionId } = cases.once;
    const events = await until(
      () => read(sessionId),
      (e) => kinds(e, "turn_complete").length === 2,
      "the notice's turn answered",
      40_000,
    );
    expect(mcpCalls(sessionId, "send_notice")).toHaveLength(1);
    expect(mcp.effects.notices).toBe(1);
    const [toolCall] = kinds(events, "tool_call");
    expect(kinds(events, "tool_cancelled")).toEqual([
      expect.objectContaining({ callId: toolCall.callId, reason: "restart" }),
    ]);
    expect(wordsOf(events, toolCall.turnId)).toMatch(/outcome unknown/);
    expect(call.streams).toHaveLength(2);
    expect(validateHistory(events)).toEqual([]);
  }, 60_000);

  it("control: a call whose answer had no action ends with its stream; its session ends within the grace, counted", async () => {
    const { call, sessionId } = cases.control;
    expect(call.ended).toMatchObject({ how: "no_action" });
    expect(call.streams).toHaveLength(1);
    const state = await until(
      async () =>
        (
          await fetch(`${gateway.base}/v1/sessions/${sessionId}`, {
            headers: { Authorization: `Bearer ${API_KEY}` },
          })
        ).json(),
      (s) => s.closing?.record.state === "ended",
      "the control's session ended",
      GRACE_MS + 20_000,
    );
    expect(state.closing.record.endedBy).toBe("stream_dropped");
    expect(validateHistory(await read(sessionId))).toEqual([]);
  }, 60_000);

  it("a browser client: its line in flight answered once, every durable frame once across the reconnect", async () => {
    const { events, sessionId } = cases.browser;
    await until(
      async () => events,
      (e) => e.some((f) => f.type === "turn_complete" && f.turnId === "t1"),
      "the line answered",
      30_000,
    );
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const log = await read(sessionId);
    expect(seqs.length).toBeLessThanOrEqual(log.length);
    expect(kinds(log, "turn_complete").map((e) => e.turnId)).toEqual(["t1"]);
    expect(kinds(log, "interrupted")).toEqual([]);
    const texts = events.filter((e) => e.type === "text" && e.turnId === "t1").map((e) => e.text);
    expect(texts.length).toBeGreaterThan(0);
    expect(new Set(texts).size).toBe(texts.length);
    expect(cases.browser.statuses).toContain("reconnecting");
    expect(validateHistory(log)).toEqual([]);
  }, 60_000);
});
