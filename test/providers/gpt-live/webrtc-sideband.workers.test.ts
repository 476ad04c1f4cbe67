/**
 * liveline as the sideband of a browser's direct call (issue 31): `POST …/webrtc` creates the
 * call on the simulator's GPT-Live face (its browser a stand-in WebSocket, `/peer`), the
 * session's model connection attaches to it, and a call the model delegates runs once on
 * liveline, its result going back on the sideband. And the ledger across connections: a call
 * both the primary and a sideband see runs once, with one function_call_output; the control,
 * with the core's dedupe off, runs it twice.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Guards } from "../../../src/core/core-config.js";
import type { CoreInput } from "../../../src/core/inputs.js";
import { GptLiveAdapter } from "../../../src/providers/gpt-live/adapter.js";
import { LiveCreateResponse } from "../../../src/providers/gpt-live/webrtc-schemas.js";
import { acceptUpgrade } from "../../../src/providers/websocket.js";
import { liveSessionId } from "../../../src/simulator/route.js";
import type { HistoryEvent } from "../../../src/vocabulary/log-events.js";
import type { ModelCommand } from "../../../src/vocabulary/model.js";
import {
  BASE,
  type Client,
  connect,
  createSession,
  errorOf,
  type Frame,
  withKey,
} from "../../support/gateway.js";
import { simulatorSession } from "../../support/session-flow.js";

/** A browser's offer, as far as the stand-in reads one (an SDP with an audio section). */
const OFFER =
  "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n";
/** 100 ms of the stand-in browser's microphone (PCM16, 24 kHz): one utterance at utteranceMs=100. */
const UTTERANCE = btoa(String.fromCharCode(...new Uint8Array(4800)));
const KNOBS = { wire: "gpt-live", timeScale: 0, utteranceMs: 100, calls: "*:lookup_faq" };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function placeCall(sessionId: string, body: unknown = { sdp: OFFER }) {
  return exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/webrtc`, {
    method: "POST",
    headers: { ...withKey(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return ((await res.json()) as { events: HistoryEvent[] }).events;
}

async function timelineOf(sessionId: string): Promise<{ kind: string; detail?: unknown }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string; detail?: unknown }[] }).rows;
}

/** Until the session's model connection is live (GET /v1/sessions/:id's `connection`). */
async function untilLive(sessionId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      headers: withKey(),
    });
    if (((await res.json()) as { connection: string }).connection === "live") return;
    await sleep(20);
  }
  throw new Error("the session's model connection never went live");
}

interface Live {
  link: { adapter: { encode(command: ModelCommand): string[] } | null; attempt: number };
  interpreter: {
    handleInput(input: CoreInput): void;
    state: { config: { guards: Guards }; lastActivityAt: number };
  };
}

function liveOf(instance: unknown): Live {
  const live = (instance as { running: { live: Live | null } }).running.live;
  if (live === null) throw new Error("the session's object holds no running session");
  return live;
}

/** Counts the function_call_outputs the session's model connection sends from now on. */
async function countOutputs(sessionId: string): Promise<{ sent: string[] }> {
  const outputs = { sent: [] as string[] };
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    const adapter = liveOf(instance).link.adapter;
    if (adapter === null) throw new Error("no model connection");
    const encode = adapter.encode.bind(adapter);
    adapter.encode = (command) => {
      const frames = encode(command);
      for (const f of frames) if (f.includes('"function_call_output"')) outputs.sent.push(f);
      return frames;
    };
  });
  return outputs;
}

/** The peer's frames until one says `text`, or a rejection. */
async function until(peer: Client, seen: (f: Frame) => boolean, ms = 5_000): Promise<Frame[]> {
  const frames: Frame[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    const f = await peer.next(Math.max(1, deadline - Date.now()));
    frames.push(f);
    if (seen(f)) return frames;
  }
}

/** The browser says a line; the model delegates its tool, which liveline answers: heard. */
async function lineAnswered(peer: Client): Promise<Frame[]> {
  peer.send({ type: "session.input_audio.append", audio: UTTERANCE });
  return until(
    peer,
    (f) => f.type === "session.output_transcript.delta" && String(f.delta).includes("lookup_faq"),
  );
}

/** A session with a direct call placed and its stand-in browser joined. */
async function placeDirectCall(knobs: Record<string, unknown> = KNOBS): Promise<{
  sessionId: string;
  peer: Client;
  serviceSessionId: string;
}> {
  const { sessionId } = await createSession({
    provider: "simulator",
    metadata: { simulator: knobs },
  });
  const res = await placeCall(sessionId);
  expect(res.status).toBe(201);
  const { serviceSessionId } = (await res.json()) as { serviceSessionId: string };
  await untilLive(sessionId);
  const peer = await connect(`${BASE}/v1/live/sessions/${serviceSessionId}/peer`);
  expect((await peer.next()).type).toBe("session.started");
  return { sessionId, peer, serviceSessionId };
}

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(sessionId));

describe("POST /v1/sessions/:id/webrtc: liveline as the sideband of a direct call", () => {
  it("answers the offer; the call's delegated tool runs once on liveline, its result back on the sideband", async () => {
    const { sessionId } = await createSession({
      provider: "simulator",
      metadata: { simulator: KNOBS },
    });
    const res = await placeCall(sessionId);
    expect(res.status).toBe(201);
    const answer = (await res.json()) as Record<string, string>;
    expect(answer).toMatchObject({ sessionId, type: "answer" });
    expect(answer.sdp).toMatch(/^v=0\r\n/);
    expect(Object.keys(answer).sort()).toEqual(["sdp", "serviceSessionId", "sessionId", "type"]);
    await untilLive(sessionId);
    const outputs = await countOutputs(sessionId);

    // The browser (the face's stand-in) joins its call and says a line.
    const peer = await connect(`${BASE}/v1/live/sessions/${answer.serviceSessionId}/peer`);
    expect((await peer.next()).type).toBe("session.started");
    peer.send({ type: "session.input_audio.append", audio: UTTERANCE });
    // The model delegates; liveline (the sideband) runs the tool and answers it there: the
    // model then says what the tool found.
    const heard = await until(
      peer,
      (f) => f.type === "session.output_transcript.delta" && String(f.delta).includes("lookup_faq"),
    );
    expect(heard.some((f) => f.type === "session.delegation.created")).toBe(true);

    const log = await historyOf(sessionId);
    const calls = log.filter((e) => e.kind === "tool_call");
    expect(calls.map((e) => "name" in e && e.name)).toEqual(["lookup_faq"]);
    expect(log.filter((e) => e.kind === "tool_result")).toHaveLength(1);
    // The delegation is recorded once, before its call.
    const delegations = log.filter((e) => e.kind === "delegation");
    expect(delegations).toHaveLength(1);
    expect(delegations[0]!.seq).toBeLessThan(calls[0]!.seq);
    expect(outputs.sent).toHaveLength(1);
    // The call's words are the session's record: what the user said, what the model said.
    expect(log).toContainEqual(expect.objectContaining({ kind: "user", text: "What can you do?" }));
    const said = log.flatMap((e) => (e.kind === "transcript" ? [e.text] : [])).join("");
    expect(said).toContain("what lookup_faq found");
    peer.close();
  });

  it("replaces the session's own connection; a session on another model is refused", async () => {
    // A client connected first: the session holds its own model connection.
    const { sessionId, client } = await simulatorSession(KNOBS);
    await untilLive(sessionId);
    const res = await placeCall(sessionId);
    expect(res.status).toBe(201);
    await untilLive(sessionId);
    // Its sideband is the model connection now: the client's line goes to the call.
    client.send({ type: "text", text: "hello" });
    const frames: Frame[] = [];
    for (;;) {
      const f = await client.next(5_000);
      frames.push(f);
      if (f.type === "text" || f.type === "transcript") break;
    }
    client.close();
    const rows = await timelineOf(sessionId);
    expect(rows).toContainEqual(
      expect.objectContaining({
        kind: "UPSTREAM_CLOSED",
        detail: expect.objectContaining({ reason: "replaced by a direct call" }),
      }),
    );

    const gemini = await createSession({ provider: "simulator" });
    const refused = await placeCall(gemini.sessionId);
    expect(refused.status).toBe(400);
    expect(await errorOf(refused)).toMatchObject({
      code: "webrtc_unsupported",
      message: expect.stringMatching(/GPT-Live/),
    });
  });

  it("an object that restarts attaches to the same call again", async () => {
    const { sessionId, peer } = await placeDirectCall();
    await expect(
      runInDurableObject(stubOf(sessionId), (_o, state) => state.abort("simulated crash")),
    ).rejects.toThrow();
    await untilLive(sessionId);
    await lineAnswered(peer);
    const log = await historyOf(sessionId);
    expect(log.filter((e) => e.kind === "tool_result")).toHaveLength(1);
    peer.close();
  });

  it("a call left idle keeps its sideband: the session's idle close attaches it again", async () => {
    const { sessionId, peer } = await placeDirectCall();
    await runInDurableObject(stubOf(sessionId), (instance: unknown) => {
      const { interpreter } = liveOf(instance);
      // Nothing used for the idle time (as after IDLE_TIMEOUT_MS of a quiet call).
      interpreter.state.lastActivityAt = 0;
      interpreter.handleInput({ type: "timer_fired", timer: "idle" });
    });
    await sleep(50);
    await untilLive(sessionId);
    await lineAnswered(peer);
    peer.close();
  });

  it("when the browser hangs up, the session is its own again", async () => {
    const { sessionId, peer } = await placeDirectCall();
    peer.close();
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(),
    });
    const { wsUrl } = (await res.json()) as { wsUrl: string };
    const client = await connect(wsUrl.replace(/^ws/, "http"));
    expect((await client.next()).type).toBe("ready");
    // The call's sideband is refused now (the call is over): its own connection answers.
    await sleep(400);
    await untilLive(sessionId);
    client.send({ type: "text", text: "hello" });
    const frames = [await client.next(5_000)];
    while (frames.at(-1)?.type !== "transcript") frames.push(await client.next(5_000));
    const rows = await timelineOf(sessionId);
    expect(rows).toContainEqual(
      expect.objectContaining({
        kind: "CLIENT_DISCONNECT",
        detail: { clientId: expect.stringMatching(/^webrtc:/) },
      }),
    );
    client.close();
  });

  it("ending the session ends the call: the service is asked to close it, the browser's side too", async () => {
    const { sessionId, peer } = await placeDirectCall();
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      method: "DELETE",
      headers: withKey(),
    });
    expect(res.status).toBeLessThan(300);
    const heard = await until(peer, (f) => f.type === "session.closed");
    expect(heard.at(-1)).toMatchObject({ type: "session.closed", reason: "close_requested" });
    peer.close();
  });

  it("checks its request: the API key, the body, the session, the offer the service takes", async () => {
    const { sessionId } = await createSession({
      provider: "simulator",
      metadata: { simulator: KNOBS },
    });
    const noKey = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/webrtc`, {
      method: "POST",
      body: JSON.stringify({ sdp: OFFER }),
    });
    expect(noKey.status).toBe(401);
    const notSdp = await placeCall(sessionId, { sdp: "hello" });
    expect(notSdp.status).toBe(400);
    expect((await errorOf(notSdp)).code).toBe("bad_request");
    const stray = await placeCall(sessionId, { sdp: OFFER, offer: OFFER });
    expect((await errorOf(stray)).message).toMatch(/offer/);
    const unknown = await placeCall(crypto.randomUUID());
    expect(unknown.status).toBe(404);
    // The service refuses an offer without audio: the browser's doing (400), in its words.
    const silent = await placeCall(sessionId, { sdp: "v=0\r\ns=-\r\n" });
    expect(silent.status).toBe(400);
    expect(await errorOf(silent)).toMatchObject({ code: "offer_refused" });
    expect((await errorOf(await placeCall(sessionId, { sdp: "v=0\r\ns=-\r\n" }))).message).toMatch(
      /audio/,
    );
    const get = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/webrtc`, {
      headers: withKey(),
    });
    expect(get.status).toBe(405);
  });
});

/**
 * The ledger across connections. The session holds its primary on the face and, as a
 * second connection of the same session, a sideband attached to it: both see every backend
 * event (the face sends them to "all"), each read by its own adapter, both handed to the
 * session's core. The call runs once and one function_call_output goes back.
 */
async function callSeenTwice(dedupe: boolean) {
  const { sessionId, client } = await simulatorSession({ ...KNOBS, utteranceMs: 0 });
  await untilLive(sessionId);
  const outputs = await countOutputs(sessionId);
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, async (instance: unknown) => {
    const live = liveOf(instance);
    // The primary's service session: the face names it after the connection's object
    // (the simulated provider's: the session and the connection's number).
    const primaryId = liveSessionId(`${sessionId}-${live.link.attempt}`, 1);
    if (!dedupe) {
      const { config } = live.interpreter.state;
      config.guards = { ...config.guards, dedupeCalls: false };
    }
    // Over the simulator's public route, as a sideband of the service would be attached.
    const sideband = await acceptUpgrade(
      exports.default.fetch(`${BASE}/v1/live/sessions/${primaryId}/attach`, {
        headers: { Upgrade: "websocket" },
      }),
    );
    const adapter = new GptLiveAdapter({
      model: "gpt-live-1",
      backendModel: "gpt-5-mini",
      agent: { systemInstruction: "", tools: [] },
    });
    // The sideband's view of the calls reaches the session's core (its speech is the
    // primary's, already heard there).
    sideband.addEventListener("message", (event) => {
      const decoded = adapter.decode(event.data as string);
      if (!decoded.ok) return;
      for (const e of decoded.events)
        if (e.type === "tool_call") live.interpreter.handleInput({ type: "model", event: e });
    });
  });
  client.send({ type: "text", text: "what are your opening hours?" });
  const results: Frame[] = [];
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const f = await client.next(results.length > 0 ? 500 : deadline - Date.now()).catch(() => null);
    if (f === null) break;
    if (f.type === "tool_result") results.push(f);
  }
  client.close();
  const log = await historyOf(sessionId);
  const rows = await timelineOf(sessionId);
  return {
    outputs: outputs.sent,
    results,
    /** Each run's result (its timeline row, written whatever the log takes). */
    runs: rows.filter((r) => r.kind === "TOOL_RESPONSE").length,
    duplicates: rows.filter((r) => r.kind === "DUPLICATE_CALL").length,
    calls: log.filter((e) => e.kind === "tool_call"),
  };
}

describe("a call the primary and a sideband both see", () => {
  it("runs once and gets one function_call_output", async () => {
    const seen = await callSeenTwice(true);
    expect(seen.duplicates).toBe(1);
    expect(seen.runs).toBe(1);
    expect(seen.outputs).toHaveLength(1);
    expect(seen.calls).toHaveLength(1);
    expect(seen.results).toHaveLength(1);
  });

  it("control: with the core's dedupe off it runs twice, and two outputs go back", async () => {
    const seen = await callSeenTwice(false);
    expect(seen.duplicates).toBe(0);
    expect(seen.runs).toBe(2);
    expect(seen.outputs).toHaveLength(2);
    expect(new Set(seen.outputs).size).toBe(1); // the same call's output, twice
    // The log itself refuses a second row for one call id (the store's own last line).
    expect(seen.calls).toHaveLength(1);
  });
});

describe("the simulator's GPT-Live face: a WebRTC creation", () => {
  const create = (body: unknown) =>
    exports.default.fetch(`${BASE}/v1/live/sessions?timeScale=0`, {
      method: "POST",
      headers: { Authorization: "Bearer anything", "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  const session = { model: "gpt-live-1", instructions: "Be brief." };

  it("answers as the SDK types it, and refuses what the SDK's types do not take", async () => {
    const ok = await create({ session, transport: { type: "webrtc", sdp: OFFER } });
    expect(ok.status).toBe(200);
    const answer = LiveCreateResponse.parse(await ok.json());
    expect(answer.transport.sdp).toContain(`/v1/live/sessions/${answer.session.id}/peer`);
    const stray = await create({
      session: { ...session, voice: "x" },
      transport: { type: "webrtc", sdp: OFFER },
    });
    expect(stray.status).toBe(400);
    expect(await stray.json()).toMatchObject({
      error: { code: "unknown_parameter", param: "session.voice" },
    });
    const decisions = await create({
      session: { ...session, delegation: { type: "decisions" } },
      transport: { type: "webrtc", sdp: OFFER },
    });
    expect(((await decisions.json()) as { error: { code: string } }).error.code).toBe(
      "not_simulated",
    );
    const get = await exports.default.fetch(`${BASE}/v1/live/sessions`, { method: "PUT" });
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("GET, POST");
  });
});

describe("a handoff during a direct call", () => {
  /**
   * A call placed as the greeter, handed to billing by the app's backend; the face's backend
   * calls whichever of lookup_faq (the greeter's) and lookup_invoice (billing's) it was given.
   * `setUp: false`: the control, the sideband attaching again as billing tells the call nothing.
   */
  async function handedToBilling(setUp: boolean) {
    const { sessionId, peer } = await placeDirectCall({
      ...KNOBS,
      calls: "*:lookup_faq,lookup_invoice",
    });
    if (!setUp)
      await runInDurableObject(stubOf(sessionId), (instance: unknown) => {
        const link = liveOf(instance).link as unknown as { setUpCall: () => void };
        link.setUpCall = () => {};
      });
    const handoff = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/handoff`, {
      method: "POST",
      headers: { ...withKey(), "Content-Type": "application/json" },
      body: JSON.stringify({ agent: "billing" }),
    });
    expect(handoff.status).toBe(202);
    let log = await historyOf(sessionId);
    for (let i = 0; i < 100 && !log.some((e) => e.kind === "handoff"); i++) {
      await sleep(20);
      log = await historyOf(sessionId);
    }
    await untilLive(sessionId);
    // The caller asks something: the voice delegates it to the backend, which calls its tools.
    peer.send({ type: "session.input_audio.append", audio: UTTERANCE });
    for (let i = 0; i < 150 && !log.some((e) => e.kind === "tool_call"); i++) {
      await sleep(20);
      log = await historyOf(sessionId);
    }
    peer.close();
    const handedAt = log.find((e) => e.kind === "handoff")?.seq ?? Number.POSITIVE_INFINITY;
    const called = log.flatMap((e) => (e.kind === "tool_call" && e.seq > handedAt ? [e.name] : []));
    return { sessionId, called };
  }

  it("the call takes the new agent's tools and instructions on its running session (its voice stays)", async () => {
    const { sessionId, called } = await handedToBilling(true);
    expect(called).toEqual(["lookup_invoice"]);
    const rows = await timelineOf(sessionId);
    expect(rows).toContainEqual(
      expect.objectContaining({ kind: "CALL_AGENT", detail: { agent: "billing" } }),
    );
  });

  it("control: told nothing, the call goes on with the greeter's tools under billing", async () => {
    const { called } = await handedToBilling(false);
    expect(called).toContain("lookup_faq");
    expect(called).not.toContain("lookup_invoice");
  });
});
