/**
 * OpenAI Realtime's gpt-realtime-2 and 2.1 send a preamble: a second message generation in one
 * response (livekit/agents #5684, #5768; LiveKit dropped every generation after the first).
 * On the simulator's OpenAI face with `preamble`: a turn is one reply, every part of it
 * delivered once, in order, and the turn ends once; a barge-in cuts the model's context where
 * the user stopped hearing it, counted across the two items. Control: the cut the adapter
 * made before (the reply's played ms on its latest item) fails the barge-in test here (the
 * face refuses a cut past an item's own audio, as the service does: the SDK's
 * ConversationItemTruncateEvent; shown in test/simulator/openai-face.test.ts).
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, type Frame, withKey } from "../../support/gateway.js";
import { playTurn, simulatorSession, turnEndsOf } from "../../support/session-flow.js";

const wordsOf = (frames: Frame[]) =>
  frames.filter((f) => f.type === "text" || f.type === "transcript").map((f) => f.text as string);

async function timelineRows(sessionId: string): Promise<{ kind: string; detail?: unknown }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string; detail?: unknown }[] }).rows;
}

describe("a preamble on the OpenAI wire (two message generations in one response)", () => {
  for (const modality of ["TEXT", "AUDIO"] as const) {
    it(`a turn with results: one reply, every part once and in order, one turn end (${modality})`, async () => {
      const { client } = await simulatorSession({
        wire: "openai",
        modality,
        preamble: 1,
        repeatAnswers: 1,
        calls: "greeting:lookup_faq",
      });
      const frames = await playTurn(client, "hello", { settleMs: 300 });
      client.close();
      const said = wordsOf(frames).join("");
      // The response before the call and the one after its result each open with a preamble.
      expect(said.match(/Let me check that\./g)).toHaveLength(2);
      expect(said.match(/lookup_faq found/g)).toHaveLength(1);
      expect(said.match(/You said: “hello”/g)).toHaveLength(1);
      expect(said.match(/Anything else\?/g)).toHaveLength(1);
      expect(said.indexOf("Let me check that.")).toBe(0);
      expect(said.indexOf("You said")).toBeLessThan(said.indexOf("lookup_faq found"));
      expect(turnEndsOf(frames).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
      expect(frames.filter((f) => f.type === "error")).toEqual([]);
      expect(
        frames.filter((f) => typeof f.turnId === "string").every((f) => f.turnId === "t1"),
      ).toBe(true);
    });
  }

  it("a barge-in near the end of the answer: the cut lands in the answer's item, where the service takes it", async () => {
    const { client, sessionId } = await simulatorSession({
      wire: "openai",
      modality: "AUDIO",
      preamble: 1,
      timeScale: 1,
      msPerWord: 100,
      repeatAnswers: 1,
      calls: "greeting:;*:",
    });
    client.send({ type: "text", text: "tell me about your hours" });
    // Every word heard comes with its 100 ms of audio: the preamble's, then the answer's, up
    // to its last words. Then the user types over it.
    let words = 0;
    for (let said = ""; !said.includes("short"); ) {
      const f = await client.next(5_000);
      if (f.type !== "transcript") continue;
      said += f.text as string;
      words += (f.text as string).split(/\s+/).filter(Boolean).length;
    }
    client.send({ type: "text", text: "never mind" });
    for (;;) {
      const f = await client.next(5_000);
      if (f.type === "transcript") words += (f.text as string).split(/\s+/).filter(Boolean).length;
      if (f.type === "interrupted" || f.type === "turn_complete") break;
    }
    // More than the answer's own audio (the preamble's came first): cut as the latest item
    // alone, the service would refuse it.
    client.send({ type: "played", ms: words * 100 });
    await new Promise((r) => setTimeout(r, 500));
    client.close();
    const rows = await timelineRows(sessionId);
    expect(rows.filter((r) => r.kind === "SERVICE_ERROR")).toEqual([]);
  }, 30_000);
});
