/**
 * A line typed while the user is still speaking (issue 28): it waits for the speech's answer
 * and is then answered in its own turn, on the simulator's Gemini face over real sockets.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, type Frame, withKey } from "../support/gateway.js";
import { framesUntilTurnEnds, simulatorSession } from "../support/session-flow.js";

describe("a line typed mid-speech", () => {
  it("waits for the speech's answer, cuts it, and gets its own answer", async () => {
    const { client } = await simulatorSession({ seed: 4, calls: "" });
    // 200 ms of speech, the line typed in the middle of it, then the rest and its end.
    for (let i = 0; i < 5; i++) client.send(new Uint8Array(640).fill(i + 1).buffer);
    client.send({ type: "text", text: "what time is it?" });
    for (let i = 0; i < 5; i++) client.send(new Uint8Array(640).fill(i + 1).buffer);
    client.send({ type: "audio_end" });
    const frames: Frame[] = await framesUntilTurnEnds(client, "t2");
    const users = frames.filter((f) => f.type === "user").map((f) => [f.turnId, f.text]);
    // The voice turn first (its answer began), then the line, which interrupts it.
    expect(users.at(-1)).toEqual(["t2", "what time is it?"]);
    expect(frames.find((f) => f.turnId === "t1" && f.type === "interrupted")).toBeDefined();
    const answer = frames.filter((f) => f.type === "text" && f.turnId === "t2");
    expect(answer.length).toBeGreaterThan(0);
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t2" });
    client.close();
  });
});

describe("many large lines typed mid-speech (found by the attack)", () => {
  it("are each recorded and sent when they go together, ~11 MB in one step", {
    timeout: 30_000,
  }, async () => {
    const { client, sessionId } = await simulatorSession({ seed: 4, calls: "" });
    const big = (i: number) => `${i} ${"x".repeat(250_000)}`;
    // Speech (a tone) in real time, with a line typed every 140 ms: each waits for the
    // speech's end, and they go together (LINES_JOINED), all 22 in one step.
    const tone = new Uint8Array(640);
    const view = new DataView(tone.buffer);
    for (let i = 0; i < 320; i++) view.setInt16(2 * i, Math.round(6000 * Math.sin(i / 3.5)), true);
    const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
    const started = Date.now();
    const speaking = (async () => {
      for (let k = 0; Date.now() - started < 3600; k++) {
        const wait = started + k * 20 - Date.now();
        if (wait > 0) await sleep(wait);
        client.send(tone.slice().buffer);
      }
    })();
    await sleep(200);
    for (let i = 0; i < 22; i++) {
      client.send({ type: "text", text: big(i), textId: `big-${i}` });
      await sleep(140);
    }
    await speaking;
    client.send({ type: "audio_end" });
    const frames: Frame[] = [];
    let lastLine: string | undefined;
    for (;;) {
      const f = await client.next(10_000);
      frames.push(f);
      if (f.type === "user" && f.text === big(21)) lastLine = f.turnId as string;
      if (lastLine !== undefined && f.type === "turn_complete" && f.turnId === lastLine) break;
    }
    const lines = frames.filter(
      (f) => f.type === "user" && typeof f.text === "string" && f.text.length > 250_000,
    );
    expect(lines.map((f) => (f.text as string).split(" ")[0])).toEqual(
      Array.from({ length: 22 }, (_, i) => String(i)),
    );
    // No line's turn is left open, and no error on the way.
    const ended = new Set(
      frames
        .filter((f) => f.type === "turn_complete" || f.type === "interrupted")
        .map((f) => f.turnId),
    );
    for (const f of lines) expect(ended.has(f.turnId)).toBe(true);
    expect(frames.filter((f) => f.type === "error")).toEqual([]);
    // The log holds what the client saw, and the lines did go together.
    const history = (await (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
        headers: withKey(),
      })
    ).json()) as { events: { kind: string; text?: string }[] };
    expect(
      history.events.filter((e) => e.kind === "user" && (e.text?.length ?? 0) > 250_000),
    ).toHaveLength(22);
    const rows = (await (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
        headers: withKey(),
      })
    ).json()) as { rows: { kind: string; detail?: { lines?: number } }[] };
    expect(rows.rows.filter((r) => r.kind === "LINES_JOINED").map((r) => r.detail?.lines)).toEqual([
      22,
    ]);
    client.close();
  });
});
