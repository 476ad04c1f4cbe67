/**
 * A session on GPT-Live (issue 31), through the adapter to the simulator's GPT-Live face
 * (src/simulator/gpt-live): a model without turns. First steps: a line is answered in its
 * turn, which ends once and without an error (the model's quiet ends it); a function call the
 * service delivers twice runs once and is answered once; an answer said in real time is one
 * turn however far apart its pieces come; words the model says on its own reach the clients,
 * in a turn of their own.
 */
import { describe, expect, it } from "vitest";
import { connect, type Frame, httpUrl } from "../../support/gateway.js";
import {
  framesUntilTurnEnds,
  playTurn,
  simulatorSession,
  turnEndsOf,
} from "../../support/session-flow.js";

const transcriptOf = (frames: Frame[]) =>
  frames
    .filter((f) => f.type === "transcript")
    .map((f) => f.text as string)
    .join("");
const errorsOf = (frames: Frame[]) => frames.filter((f) => f.type === "error");

/**
 * A line on the face with `knobs`, answered in one turn (t1), which ends complete with no
 * error and nothing after it for `settleMs`: what the model said.
 */
async function oneTurn(
  line: string,
  settleMs: number,
  knobs: Record<string, string | number>,
): Promise<string> {
  const { client } = await simulatorSession({
    wire: "gpt-live",
    modality: "AUDIO",
    calls: "greeting:;*:",
    ...knobs,
  });
  const frames = await playTurn(client, line, { settleMs });
  client.close();
  expect(frames.filter((f) => f.type === "user").map((f) => f.turnId)).toEqual(["t1"]);
  expect(turnEndsOf(frames).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
  expect(errorsOf(frames)).toEqual([]);
  return transcriptOf(frames);
}

describe("a GPT-Live session (the simulator's face)", () => {
  // These two wait 2 s for nothing more after their turn: the default 5 s left a loaded machine
  // (CI with three test files at once) less than 3 s for the turn itself.
  it("a line is answered in its turn, which ends once, with no error", async () => {
    const { client } = await simulatorSession({ wire: "gpt-live", modality: "AUDIO" });
    const frames = await playTurn(client, "hello there", { settleMs: 2_000 });
    expect(transcriptOf(frames).length).toBeGreaterThan(0);
    expect(turnEndsOf(frames).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errorsOf(frames)).toEqual([]);
    client.close();
  }, 30_000);

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
  }, 30_000);

  it("an answer said in real time, its pieces further apart than the quiet, is one turn", async () => {
    // Pieces of 2 to 5 words, each sent as it begins: 500 to 1,250 ms apart, past the
    // utterance's quiet (400 ms here). Its end is read from the transcript's timeline.
    const said = await oneTurn("hello there", 1_500, { timeScale: 1, msPerWord: 250 });
    expect(said.split(" ").length).toBeGreaterThan(5);
  }, 30_000);

  it("a result sent while the voice speaks is answered in its turn, by the reply it asks for", async () => {
    // The backend answers the line with the voice's opening and a client call, answered at
    // once, as the voice begins to speak; its reply to the result comes 2 s later, well
    // after the opening has been said and past the utterance's quiet (400 ms here).
    const knobs = { calls: "greeting:get_user_profile;*:", timeScale: 1, msPerWord: 60 };
    const said = await oneTurn("hi", 1_500, { ...knobs, latencyMs: 2_000 });
    expect(said).toContain("get_user_profile");
  }, 30_000);

  it("a result the voice runs on into the reply to, without a pause, ends its turn with no error", async () => {
    const knobs = { calls: "greeting:get_user_profile;*:", timeScale: 1, msPerWord: 150 };
    const said = await oneTurn("hi", 1_000, { ...knobs, latencyMs: 100 });
    expect(said).toContain("get_user_profile");
  }, 30_000);

  it("side effects called mid-reply let the reply go on: the rest of it is said, in its turn", async () => {
    // The backend says the greeting's opening and calls two side effects (the chips, a
    // preference); the rest of the greeting comes once it is told to go on.
    const calls = "greeting:suggest_topics,set_preference;*:";
    const said = await oneTurn("hi", 1_500, { calls, timeScale: 0.2 });
    expect(said).toContain("What would you like");
  }, 30_000);

  it("words the model says on its own, after its answer ended, reach the client in a turn of their own", async () => {
    const { client } = await simulatorSession({
      wire: "gpt-live",
      modality: "AUDIO",
      calls: "greeting:;*:",
      // 1 s of wall time after the answer: past the utterance's quiet (400 ms here).
      timeScale: 0.2,
      unpromptedAfterMs: 5_000,
    });
    const answer = await playTurn(client, "hello there");
    expect(turnEndsOf(answer).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
    const frames: Frame[] = [];
    for (;;) {
      const f = await client.next(10_000);
      frames.push(f);
      if (f.type === "turn_complete" || f.type === "interrupted") break;
    }
    expect(frames[0]).toMatchObject({ type: "user", turnId: "t2", text: "", source: "model" });
    expect(transcriptOf(frames)).toContain("Are you still there?");
    expect(frames.filter((f) => f.type === "transcript").every((f) => f.turnId === "t2")).toBe(
      true,
    );
    expect(turnEndsOf(frames).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t2:turn_complete"]);
    expect(errorsOf([...answer, ...frames])).toEqual([]);
    client.close();
  }, 30_000);

  describe("lines typed close together (nothing the model says can be cut)", () => {
    /** What was said in each turn, and how each turn ended. */
    const byTurn = (frames: Frame[]) => {
      const said: Record<string, string> = {};
      for (const f of frames)
        if (f.type === "transcript")
          said[f.turnId as string] = (said[f.turnId as string] ?? "") + (f.text as string);
      return { said, ends: turnEndsOf(frames).map((f) => `${f.turnId}:${f.type}`) };
    };
    const knobs = { wire: "gpt-live", modality: "AUDIO", calls: "greeting:;*:", timeScale: 1 };

    it("a line typed before the answer to the one before it began: each answer in its own turn, both complete", async () => {
      const { client } = await simulatorSession({ ...knobs, msPerWord: 60 });
      // The greeting first (the face greets whatever the first line says).
      await playTurn(client, "hi");
      client.send({ type: "text", text: "what are your hours?" });
      await new Promise((r) => setTimeout(r, 150));
      client.send({ type: "text", text: "do you deliver?" });
      const frames = await framesUntilTurnEnds(client, "t3");
      const { said, ends } = byTurn(frames);
      expect(ends).toEqual(["t2:turn_complete", "t3:turn_complete"]);
      expect(said.t2).toContain("what are your hours?");
      expect(said.t3).toContain("do you deliver?");
      expect(said.t3).not.toContain("what are your hours?");
      expect(errorsOf(frames)).toEqual([]);
      client.close();
    }, 30_000);

    it("two clients typing in the same instant: both lines answered, each in its own turn", async () => {
      const { client, wsUrl } = await simulatorSession({ ...knobs, msPerWord: 60 });
      const laptop = await connect(httpUrl(wsUrl));
      expect((await laptop.next()).type).toBe("ready");
      await playTurn(client, "hi");
      client.send({ type: "text", text: "from the phone" });
      laptop.send({ type: "text", text: "from the laptop" });
      const frames = await framesUntilTurnEnds(client, "t3");
      const { said, ends } = byTurn(frames);
      expect(ends).toEqual(["t2:turn_complete", "t3:turn_complete"]);
      const first = frames.find((f) => f.type === "user" && f.turnId === "t2")?.text as string;
      const second = frames.find((f) => f.type === "user" && f.turnId === "t3")?.text as string;
      expect([first, second].sort()).toEqual(["from the laptop", "from the phone"]);
      expect(said.t2).toContain(first);
      expect(said.t3).toContain(second);
      expect(said.t3).not.toContain(first);
      expect(errorsOf(frames)).toEqual([]);
      client.close();
      laptop.close();
    }, 30_000);
  });
});
