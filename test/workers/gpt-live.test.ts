/**
 * A session on GPT-Live (issue 31), through the adapter to the simulator's GPT-Live face
 * (src/simulator/gpt-live): a model without turns. First steps: a line is answered in its
 * turn, which ends once and without an error (the model's quiet ends it); a function call the
 * service delivers twice runs once and is answered once.
 */
import { describe, expect, it } from "vitest";
import type { Frame } from "./helpers.js";
import { playTurn, simulatorSession, turnEndsOf } from "./session-flow.js";

const transcriptOf = (frames: Frame[]) =>
  frames
    .filter((f) => f.type === "transcript")
    .map((f) => f.text as string)
    .join("");
const errorsOf = (frames: Frame[]) => frames.filter((f) => f.type === "error");

describe("a GPT-Live session (the simulator's face)", () => {
  it("a line is answered in its turn, which ends once, with no error", async () => {
    const { client } = await simulatorSession({ wire: "gpt-live", modality: "AUDIO" });
    const frames = await playTurn(client, "hello there", { settleMs: 2_000 });
    expect(transcriptOf(frames).length).toBeGreaterThan(0);
    expect(turnEndsOf(frames).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errorsOf(frames)).toEqual([]);
    client.close();
  });

  it("function calls delivered twice each run once and are answered once", async () => {
    const { client } = await simulatorSession({
      wire: "gpt-live",
      modality: "AUDIO",
      duplicateDelivery: 1,
    });
    const frames = await playTurn(client, "what are your opening hours?", { settleMs: 2_000 });
    const calls = frames.filter((f) => f.type === "tool_call");
    const results = frames.filter((f) => f.type === "tool_result");
    // The face's script calls two tools for this line, each delivered twice by the service.
    expect(calls.length).toBeGreaterThan(0);
    const ids = calls.map((f) => f.callId as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(results.map((f) => f.callId as string).sort()).toEqual([...ids].sort());
    expect(turnEndsOf(frames)).toHaveLength(1);
    expect(errorsOf(frames)).toEqual([]);
    client.close();
  });
});
