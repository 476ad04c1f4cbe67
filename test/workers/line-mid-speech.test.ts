/**
 * A line typed while the user is still speaking (issue 28): it waits for the speech's answer
 * and is then answered in its own turn, on the simulator's Gemini face over real sockets.
 */
import { describe, expect, it } from "vitest";
import type { Frame } from "./helpers.js";
import { framesUntilTurnEnds, simulatorSession } from "./session-flow.js";

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
