import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unansweredCalls, validateHistory } from "../../src/history/validate.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import { BASE, connect, type Frame, httpUrl, upgrade, withKey } from "../support/gateway.js";
import {
  framesUntil,
  playTurn,
  simulatorSession,
  switchOffGuard,
  textsOf,
  turnEndsOf,
} from "../support/session-flow.js";

async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: HistoryEvent[] }).events;
}

const seqOf = (f: Frame) => f.seq as number;

async function timelineKinds(sessionId: string): Promise<string[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
}

describe("a replay", () => {
  it("sends each durable frame byte for byte as it was first sent; rows kept before frames were stored replay from their body", async () => {
    const { sessionId, wsUrl, client } = await simulatorSession(
      { seed: 5, calls: "greeting:suggest_topics" },
      {},
    );
    await playTurn(client, "hi");
    await playTurn(client, "what are your hours?");
    const durable = client.raw.filter((r) => typeof (JSON.parse(r) as Frame).seq === "number");
    client.close();
    await client.closed;
    const replayOf = async () => {
      const again = await connect(`${httpUrl(wsUrl)}&resumeFrom=0`);
      // ready, then the replay (status frames included: they are durable too).
      for (let i = 0; i < 200 && again.raw.length < durable.length + 1; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      again.close();
      await again.closed;
      return again.raw.slice(1, durable.length + 1);
    };
    // Live frames and replayed frames are the same strings: encoded once, kept with the row.
    expect(await replayOf()).toEqual(durable);
    // A log written before frames were stored (no frame column value) replays the same frames.
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("UPDATE events SET frame = NULL");
    });
    expect((await replayOf()).map((r) => JSON.parse(r))).toEqual(durable.map((r) => JSON.parse(r)));
  });

  it("comes in replay batches to a client that asks for them (&replay=batch), the same frames in order", async () => {
    const { wsUrl, client } = await simulatorSession(
      { seed: 6, calls: "greeting:suggest_topics" },
      {},
    );
    await playTurn(client, "hi");
    await playTurn(client, "what are your hours?");
    const durable = client.raw.filter((r) => typeof (JSON.parse(r) as Frame).seq === "number");
    client.close();
    await client.closed;
    const again = await connect(`${httpUrl(wsUrl)}&resumeFrom=0&replay=batch`);
    for (let i = 0; i < 200 && again.raw.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    again.close();
    await again.closed;
    expect(JSON.parse(again.raw[0]!)).toMatchObject({ type: "ready", resumed: true });
    const batch = JSON.parse(again.raw[1]!) as { type: string; frames: unknown[] };
    expect(batch.type).toBe("replay");
    expect(batch.frames).toEqual(durable.map((r) => JSON.parse(r)));
  });

  it("refuses an unknown replay mode with 400", async () => {
    const { wsUrl, client } = await simulatorSession({}, {});
    client.close();
    const res = await upgrade(`${httpUrl(wsUrl)}&resumeFrom=0&replay=zip`);
    expect(res.status).toBe(400);
  });
});

describe("a client that disconnects mid-turn and resumes", () => {
  it("gets ready, then every durable frame after resumeFrom exactly once and in order, pending client calls included, then the live stream", async () => {
    const { sessionId, token, wsUrl, client } = await simulatorSession(
      { race: 1, seed: 3, calls: "greeting:suggest_topics" },
      {},
    );
    client.send({ type: "text", text: "hi" });
    // Read up to the first reply text, then drop: the client call and the turn end are missed.
    const seen = await framesUntil(client, (f) => f.type === "text");
    const lastSeen = Math.max(
      ...seen.filter((f) => typeof f.seq === "number").map(seqOf),
      ...client.statuses.map(seqOf),
    );
    client.close();
    await client.closed;
    // Let the turn finish while nobody is connected.
    await new Promise((r) => setTimeout(r, 100));

    const resumed = await connect(`${httpUrl(wsUrl)}&resumeFrom=${lastSeen}`, {});
    resumed.statuses.length = 0;
    const ready = await resumed.next();
    expect(ready).toMatchObject({ type: "ready", sessionId, resumed: true });
    const log = await historyOf(sessionId);
    const missed = log.filter((e) => e.seq > lastSeen);
    expect(missed.length).toBeGreaterThan(0);
    const replay: Frame[] = [];
    for (let i = 0; i < missed.length; i++) {
      const f = await resumed.next().catch(() => null);
      if (!f) break;
      replay.push(f);
      if (replay.length + resumed.statuses.length >= missed.length) break;
    }
    const got = [...replay, ...resumed.statuses].map(seqOf).sort((a, b) => a - b);
    expect(got).toEqual(missed.map((e) => e.seq));
    const call = replay.find((f) => f.type === "tool_call" && f.runOn === "client");
    expect(call).toMatchObject({ name: "suggest_topics" });
    // The replayed client call is answered; the live stream follows with no gap.
    resumed.send({ type: "tool_result", callId: call!.callId, result: { chips: ["hours"] } });
    const live = await framesUntil(resumed, (f) => f.type === "tool_result");
    expect(seqOf(live.at(-1)!)).toBe(
      Math.max(...got) + 1 + resumed.statuses.filter((s) => seqOf(s) > Math.max(...got)).length,
    );
    expect(validateHistory(await historyOf(sessionId))).toEqual([]);
    void token;
    resumed.close();
  });

  it("a second device on the same session sees the same durable frames", async () => {
    const { wsUrl, client } = await simulatorSession({ seed: 5 });
    const laptop = await connect(httpUrl(wsUrl));
    expect((await laptop.next()).type).toBe("ready");
    const frames = await playTurn(client, "hello there");
    const onLaptop = await framesUntil(laptop, (f) => f.type === "turn_complete");
    expect(onLaptop.map(seqOf)).toEqual(
      frames
        .filter((f) => f.type !== "pong")
        .map(seqOf)
        .slice(0, onLaptop.length),
    );
    laptop.close();
    client.close();
  });
});

describe("the model connection goes away or drops mid-session", () => {
  it("goAway: the client sees complete turns, never a duplicate, and no status for the planned move", async () => {
    const { sessionId, client } = await simulatorSession({
      seed: 9,
      goAwayAfterTurns: 1,
      goAwayMs: 5000,
      // Two calls in the greeting: one step records both (the stats' transactions, below).
      calls: "greeting:suggest_topics,set_preference",
    });
    const first = await playTurn(client, "hi");
    expect(turnEndsOf(first)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    // The move happens once the model is idle after its goAway.
    for (
      let i = 0;
      i < 50 && !(await timelineKinds(sessionId)).includes("UPSTREAM_RECONNECT");
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const second = await playTurn(client, "and now?");
    expect(turnEndsOf(second)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(textsOf(second).length).toBeGreaterThan(0);
    // A planned move with nothing in flight is no loss: the connection stayed `live`.
    expect(client.statuses.map((s) => s.state)).toEqual(["connecting", "live"]);
    const timeline = (await (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
        headers: withKey(),
      })
    ).json()) as {
      rows: { kind: string }[];
      stats: { events: number; transactions: number; modelEvents: number; databaseBytes: number };
    };
    expect(timeline.rows.map((r) => r.kind)).toContain("GO_AWAY");
    // The stats extension: a step's events share one transaction, so fewer than events.
    expect(timeline.stats.events).toBe((await historyOf(sessionId)).length);
    expect(timeline.stats.transactions).toBeGreaterThan(0);
    expect(timeline.stats.transactions).toBeLessThan(timeline.stats.events);
    expect(timeline.stats.modelEvents).toBeGreaterThan(0);
    expect(timeline.stats.databaseBytes).toBeGreaterThan(0);
    expect(timeline.rows.map((r) => r.kind)).toContain("UPSTREAM_RECONNECT");
    client.close();
  });

  it("a model that sends goAway every 400 ms: the planned moves write no status pairs (found by the attack: a pair per move)", {
    timeout: 15_000,
  }, async () => {
    const { sessionId, client } = await simulatorSession({
      seed: 3,
      goAwayAfterMs: 400,
      goAwayMs: 5000,
    });
    const first = await playTurn(client, "hi");
    expect(turnEndsOf(first)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    let moves = 0;
    for (let i = 0; i < 100 && moves < 3; i++) {
      await new Promise((r) => setTimeout(r, 50));
      moves = (await timelineKinds(sessionId)).filter((k) => k === "UPSTREAM_RECONNECT").length;
    }
    expect(moves).toBeGreaterThanOrEqual(3);
    // The connection was replaced three times or more, and it never stopped being live.
    const second = await playTurn(client, "and now?");
    expect(turnEndsOf(second)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    const statuses = (await historyOf(sessionId)).flatMap((e) =>
      e.kind === "status" ? [e.state] : [],
    );
    expect(statuses).toEqual(["connecting", "live"]);
    client.close();
  });

  it("a model that drops every connection right after setup: `live` only for the first, never for a reconnect that did not prove itself (found by the attack)", {
    timeout: 15_000,
  }, async () => {
    const { sessionId, client } = await simulatorSession({ dropAfterMs: 1 });
    let connects = 0;
    for (let i = 0; i < 100 && connects < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      connects = (await timelineKinds(sessionId)).filter((k) => k === "UPSTREAM_LIVE").length;
    }
    expect(connects).toBeGreaterThanOrEqual(4);
    const statuses = (await historyOf(sessionId)).flatMap((e) =>
      e.kind === "status" ? [e.state] : [],
    );
    // The first connection is live when it opens (nothing yet says it will fail); the ones
    // after it never served nor stayed up: one `reconnecting` until liveline gives up.
    expect(statuses).toEqual(["connecting", "live", "reconnecting"]);
    client.close();
  });

  it("an abrupt 1011 drop mid-turn ends the turn with interrupted(upstream_lost), then the session goes on", async () => {
    // The reply takes a while (timeScale 1); the connection drops before it comes.
    const { sessionId, client } = await simulatorSession({
      seed: 4,
      timeScale: 1,
      latencyMs: 2000,
      dropAfterMs: 300,
    });
    const frames = await playTurn(client, "hi");
    expect(turnEndsOf(frames)).toEqual([
      expect.objectContaining({ type: "interrupted", reason: "upstream_lost" }),
    ]);
    for (let i = 0; i < 100 && client.statuses.at(-1)?.state !== "reconnecting"; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    // Every connection drops after 300 ms, before it serves: the reconnects are folded into
    // one `reconnecting` (no `live` for a connection that never proved itself).
    expect(client.statuses.map((s) => s.state)).toEqual(["connecting", "live", "reconnecting"]);
    const log = await historyOf(sessionId);
    expect(validateHistory(log)).toEqual([]);
    expect(log.filter((e) => e.kind === "turn_complete" || e.kind === "interrupted")).toHaveLength(
      1,
    );
    client.close();
  });
});

/**
 * Found by the black-box attack of 2026-11-29: speech sent to a connection that a goAway
 * move replaced before the model had signalled it went with that connection (no turn, no
 * error). The stand-in ends an utterance after 800 ms of audio: 600 ms go to the first
 * connection, 300 ms after the move; only if the first 600 ms reach the new connection too
 * does the user get an answer. Control: the carry switched off in the running session.
 */
async function speechAcrossAMove(carry: boolean): Promise<Frame[]> {
  const { sessionId, client } = await simulatorSession({
    seed: 12,
    calls: "",
    utteranceMs: 800,
    goAwayAfterMs: 400,
    goAwayMs: 5000,
  });
  if (!carry) await switchOffGuard(sessionId, "carryUnheardAudio");
  const chunk = (i: number) => new Uint8Array(640).fill(i % 200).buffer;
  for (let i = 0; i < 30; i++) client.send(chunk(i));
  // The stand-in says goAway 400 ms after the connection opened; nothing looks in flight.
  const moved = async (n: number) => {
    for (let i = 0; i < 150; i++) {
      const lives = (await timelineKinds(sessionId)).filter((k) => k === "UPSTREAM_LIVE");
      if (lives.length >= n) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("the connection was never replaced");
  };
  await moved(2);
  for (let i = 30; i < 45; i++) client.send(chunk(i));
  const frames: Frame[] = [];
  try {
    frames.push(...(await framesUntil(client, (f) => f.type === "turn_complete", 3000)));
  } catch {
    // No answer: nothing came (the control).
  }
  const log = await historyOf(sessionId);
  expect(validateHistory(log)).toEqual([]);
  client.close();
  return frames;
}

/**
 * Speech the model had heard (the client's audio_end, the stand-in's transcription) when its
 * connection dropped before the answer: every connection drops 1.5 s after it opens, and an
 * answer takes 1 s. Spoken 0.8 s into the first connection, the speech is cut; the next
 * connection hears it again, with its end, as soon as it is up, and answers it. Control:
 * without the carry, the user is asked to say it again (speech_lost).
 */
async function speechAcrossADrop(carry: boolean, wire = "gemini"): Promise<Frame[]> {
  const { sessionId, client } = await simulatorSession({
    wire,
    seed: 13,
    calls: "",
    timeScale: 1,
    latencyMs: 1000,
    msPerWord: 10,
    dropAfterMs: 1500,
  });
  if (!carry) await switchOffGuard(sessionId, "carryUnheardAudio");
  for (let i = 0; i < 100 && !(await timelineKinds(sessionId)).includes("UPSTREAM_LIVE"); i++)
    await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 800));
  for (let i = 0; i < 10; i++) client.send(new Uint8Array(640).fill(i + 1).buffer);
  client.send({ type: "audio_end" });
  const frames = await framesUntil(
    client,
    (f) => f.type === "turn_complete" || (f.type === "error" && f.code === "speech_lost"),
    8000,
  );
  // The answer came on the second connection, after the speech was carried (or, in the
  // control, the loss was said when the first one dropped).
  const kinds = await timelineKinds(sessionId);
  expect(kinds.includes("SPEECH_CARRIED")).toBe(carry);
  if (carry) expect(kinds.filter((k) => k === "UPSTREAM_LIVE").length).toBeGreaterThanOrEqual(2);
  expect(validateHistory(await historyOf(sessionId))).toEqual([]);
  client.close();
  return frames;
}

/**
 * The frames of one voice turn, t1, answered with no error. `overloaded` aside: the test sends
 * its audio in bursts, and a loaded machine sheds the oldest of it, saying so (seen in a full
 * run); the turn is still one.
 */
function expectOneVoiceTurn(frames: Frame[]): void {
  expect(frames.filter((f) => f.type === "user")).toEqual([
    expect.objectContaining({ turnId: "t1" }),
  ]);
  expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
  const errors = frames.filter((f) => f.type === "error" && f.code !== "overloaded");
  expect(errors.map((f) => `${f.code}: ${f.message}`)).toEqual([]);
}

describe("speech the model had heard and not answered when its connection dropped", () => {
  it("goes to the next connection with its end, and is answered there", {
    timeout: 20_000,
  }, async () => {
    expectOneVoiceTurn(await speechAcrossADrop(true));
  });

  it("on the OpenAI wire too (its end commits the carried audio at once)", {
    timeout: 20_000,
  }, async () => {
    expectOneVoiceTurn(await speechAcrossADrop(true, "openai"));
  });

  it("control: without carryUnheardAudio, the user is asked to say it again", {
    timeout: 20_000,
  }, async () => {
    const frames = await speechAcrossADrop(false);
    expect(frames.at(-1)).toMatchObject({ type: "error", code: "speech_lost" });
  });
});

describe("speech the model had not signalled when its connection was replaced (found by the attack)", () => {
  it("reaches the next connection: the user gets one voice turn for all of it", {
    timeout: 20_000,
  }, async () => {
    expectOneVoiceTurn(await speechAcrossAMove(true));
  });

  it("control: without carryUnheardAudio, no turn and no error follow", {
    timeout: 20_000,
  }, async () => {
    const frames = await speechAcrossAMove(false);
    expect(frames.filter((f) => f.type === "user" || f.type === "error")).toEqual([]);
  });
});

describe("the session object restarts mid-session", () => {
  it("keeps a valid history and goes on: a client's open call is left open and answered once", async () => {
    const { sessionId, wsUrl, client } = await simulatorSession({
      seed: 11,
      calls: "greeting:suggest_topics",
    });
    client.send({ type: "text", text: "hi" });
    // The client call arrives and is never answered: a call in flight when the object dies.
    const call = (await framesUntil(client, (f) => f.type === "tool_call")).at(-1)!;
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    await expect(
      runInDurableObject(stub, (_o, state) => state.abort("simulated crash")),
    ).rejects.toThrow();
    await client.closed.catch(() => undefined);

    // The restarted object closed nothing of the client's: its call waits for an answer,
    // under its own id (never cancelled, so never run twice by the client).
    const log = await historyOf(sessionId);
    const again = await connect(`${httpUrl(wsUrl)}&resumeFrom=${log.at(-1)!.seq}`);
    expect(await again.next()).toMatchObject({
      type: "ready",
      resumed: true,
      lastSeq: log.at(-1)!.seq,
    });
    expect(validateHistory(log)).toEqual([]);
    expect(unansweredCalls(log)).toEqual([call.callId]);
    expect(log.some((e) => e.kind === "tool_cancelled")).toBe(false);
    again.send({ type: "tool_result", callId: call.callId, result: { chips: ["hours"] } });
    again.send({ type: "tool_result", callId: call.callId, result: { chips: ["again"] } });
    expect(await framesUntil(again, (f) => f.type === "error")).toContainEqual(
      expect.objectContaining({ type: "error", code: "duplicate_result" }),
    );
    // The session continues on the restarted object.
    const next = await playTurn(again, "are you there?");
    expect(turnEndsOf(next).at(-1)).toMatchObject({ type: "turn_complete" });
    const after = await historyOf(sessionId);
    expect(validateHistory(after)).toEqual([]);
    expect(unansweredCalls(after)).toEqual([]);
    expect(after.filter((e) => e.kind === "tool_result" && e.callId === call.callId)).toEqual([
      expect.objectContaining({ result: { chips: ["hours"] } }),
    ]);
    again.close();
  });
});

describe("bad tool results through a live session", () => {
  it("unknown_call and duplicate_result: each gets its error, the session goes on, nothing recorded is lost", async () => {
    const { sessionId, client } = await simulatorSession({
      seed: 2,
      calls: "greeting:suggest_topics",
    });
    let callId = "";
    const frames = await playTurn(client, "hi", {
      answer: (call) => {
        callId = call.callId as string;
        return { chips: ["first"] };
      },
    });
    expect(callId).not.toBe("");
    const before = await historyOf(sessionId);
    client.send({ type: "tool_result", callId, result: { chips: ["second"] } });
    expect(await client.next()).toMatchObject({
      type: "error",
      code: "duplicate_result",
      fatal: false,
    });
    client.send({ type: "tool_result", callId: "never-issued", result: {} });
    expect(await client.next()).toMatchObject({
      type: "error",
      code: "unknown_call",
      fatal: false,
    });
    client.send({ type: "ping" });
    expect(await client.next()).toEqual({ type: "pong" });
    const after = await historyOf(sessionId);
    expect(after).toEqual(before);
    expect(after.filter((e) => e.kind === "tool_result")).toEqual([
      expect.objectContaining({ callId, result: { chips: ["first"] } }),
    ]);
    expect(frames.filter((f) => f.type === "turn_complete")).toHaveLength(1);
    client.close();
  });
});

describe("fault injection (FAULT_INJECTION=on, for soak runs)", () => {
  it("POST /v1/sessions/:id/restart kills the object; a resuming client finds the log whole and goes on", async () => {
    const { sessionId, wsUrl, client } = await simulatorSession({
      seed: 12,
      calls: "greeting:suggest_topics",
    });
    client.send({ type: "text", text: "hi" });
    const call = (await framesUntil(client, (f) => f.type === "tool_call")).at(-1)!;
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
      headers: withKey(),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sessionId, restarted: true });
    const log = await historyOf(sessionId);
    expect(validateHistory(log)).toEqual([]);
    // The client's call is left open for its answer.
    expect(unansweredCalls(log)).toEqual([call.callId]);
    const again = await connect(`${httpUrl(wsUrl)}&resumeFrom=${log.at(-1)!.seq}`);
    expect((await again.next()).type).toBe("ready");
    again.send({ type: "tool_result", callId: call.callId, result: { chips: [] } });
    const next = await playTurn(again, "still there?");
    expect(turnEndsOf(next)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    again.close();
    client.close();
  });

  it("needs the API key", async () => {
    const { sessionId, client } = await simulatorSession({ seed: 13 });
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
    });
    expect(res.status).toBe(401);
    client.close();
  });
});
