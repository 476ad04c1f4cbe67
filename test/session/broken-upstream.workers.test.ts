import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, connect, type Frame, httpUrl, withKey } from "../support/gateway.js";
import { framesUntilTurnEnds, simulatorSession } from "../support/session-flow.js";

async function timelineKinds(sessionId: string): Promise<string[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 9, finding 1: a model connection that is accepted and then closes (1011) right after
 * every setup. It used to reconnect for as long as anyone watched (1,580 connects in 421 s,
 * each writing two status rows); the attempt count started over at every setup_complete.
 */
describe("an upstream that dies right after every setup", () => {
  it("gets a bounded number of connects, then none, and a client that comes back sees why", {
    timeout: 90_000,
  }, async () => {
    const { sessionId, wsUrl, client } = await simulatorSession({ dropAfterMs: 1 });
    client.close(); // nobody is connected while it fails
    // Backoff 0.25, 0.5, 1, 2, 4, 8 s (each up to half as much again, jitter): given up in < 25 s.
    let connects = 0;
    for (let waited = 0; waited < 40_000; waited += 1000) {
      await sleep(1000);
      const kinds = await timelineKinds(sessionId);
      connects = kinds.filter((k) => k === "UPSTREAM_CONNECT").length;
      if (kinds.includes("UPSTREAM_GAVE_UP")) break;
    }
    expect(connects).toBeGreaterThan(1);
    expect(connects).toBeLessThanOrEqual(10);
    await sleep(3000);
    const after = (await timelineKinds(sessionId)).filter((k) => k === "UPSTREAM_CONNECT").length;
    expect(after).toBe(connects); // none since

    // A client that comes back gets the reason from the log, and its input tries again.
    const back = await connect(`${httpUrl(wsUrl)}&resumeFrom=0`);
    const frames: Frame[] = [];
    for (;;) {
      const f = await back.next(3000).catch(() => null);
      if (!f) break;
      frames.push(f);
    }
    expect(frames.find((f) => f.type === "error")).toMatchObject({
      code: "upstream_unavailable",
      fatal: false,
    });
    back.send({ type: "text", text: "hello?" });
    await sleep(500);
    const retried = (await timelineKinds(sessionId)).filter((k) => k === "UPSTREAM_CONNECT").length;
    expect(retried).toBeGreaterThan(connects);
    back.close();
  });
});

describe("an error the service reports on a connection that stays open (OpenAI Realtime)", () => {
  it("is a timeline row, not a reason to leave: the same connection answers the speech", {
    timeout: 20_000,
  }, async () => {
    // The simulator's OpenAI face ends an utterance after 200 ms of audio (its VAD commits it
    // and answers); one more chunk is new speech, which cuts that answer before it began. The
    // client's audio_end then commits 20 ms of it, which the service refuses with an `error`
    // event (input_audio_buffer_commit_empty: under 100 ms) and keeps the session open.
    const { sessionId, client } = await simulatorSession({
      wire: "openai",
      timeScale: 0.2,
      utteranceMs: 200,
      calls: "",
    });
    for (let i = 0; i < 11; i++) client.send(new Uint8Array(640).fill(i + 1).buffer);
    client.send({ type: "audio_end" });
    const frames = await framesUntilTurnEnds(client, "t1");
    expect(frames.filter((f) => f.type === "user")).toMatchObject([{ turnId: "t1" }]);
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
    const kinds = await timelineKinds(sessionId);
    expect(kinds).toContain("SERVICE_ERROR");
    expect(kinds.filter((k) => k === "UPSTREAM_CONNECT")).toHaveLength(1);
    expect(kinds).not.toContain("UPSTREAM_CLOSED");
    client.close();
  });
});
