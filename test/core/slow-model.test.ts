/**
 * A slow model is not a silent one (issue 28): the watchdog waits for a model that may be
 * preparing its answer, nudges only an empty reply after tool results, never cuts a
 * generation that has begun, and names an answer that comes after the turn timed out.
 */
import { describe, expect, it } from "vitest";
import type { Harness } from "./harness.js";
import { errorCodes, live, texts, turnEnds } from "./sessions.js";

const nudges = (h: Harness) => h.sentToModel.filter((c) => c.type === "nudge");

/** A line whose tool the model called and then ended its turn (the race); the result goes late. */
function lateLookup(h: Harness): void {
  h.input({ type: "client_text", clientId: "phone", text: "opening hours?" });
  h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
  h.model({ type: "turn_complete" });
  h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
}

describe("a model slower than the watchdog", () => {
  it("answering a line at twice the timeout: the answer is delivered in its turn, nothing was sent to cut it", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "think hard: what is 17 × 23?" });
    expect(h.fireNextTimer()).toBe(true); // 15 s: model_slow, still waiting
    h.advance(14_000);
    h.model({ type: "text_delta", text: "391." });
    h.model({ type: "turn_complete" });
    expect(nudges(h)).toEqual([]);
    expect(texts(h)).toEqual(["391."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errorCodes(h)).toEqual(["model_slow"]);
  });

  it("after tool results, a model that says nothing is nudged (the empty reply seen in the field)", () => {
    const h = live();
    lateLookup(h);
    expect(h.fireNextTimer()).toBe(true);
    expect(nudges(h)).toHaveLength(1);
  });

  it("a generation that has begun (the model shows it works on it) is never cut by a nudge", () => {
    const h = live();
    lateLookup(h);
    h.advance(1_000);
    h.model({ type: "working" }); // OpenAI's response.created; a Gemini thought
    expect(h.fireNextTimer()).toBe(true); // the first deadline: moved by the sign, re-armed
    expect(h.fireNextTimer()).toBe(true);
    expect(nudges(h)).toEqual([]);
    expect(errorCodes(h)).toEqual(["model_slow"]);
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["We open at nine."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
  });

  it("a follow-up to results that is slower than the grace is awaited, not nudged (found by the attack: the nudge cut it)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
    h.model({ type: "turn_complete" }); // it ended as the result reached it
    expect(h.fireNextTimer()).toBe(true); // the follow-up grace (1.5 s)
    h.advance(1_500); // 3 s after the result: the answer comes
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(nudges(h)).toEqual([]);
    expect(texts(h)).toEqual(["We open at nine."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("a model that spoke is given whole periods again: no model_timeout one period after it spoke (found by the attack)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "think hard" });
    expect(h.fireNextTimer()).toBe(true); // model_slow
    expect(h.fireNextTimer()).toBe(true); // model_slow
    h.model({ type: "working" });
    h.model({ type: "text_delta", text: "Let me look that up." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
    h.model({ type: "working" }); // OpenAI: the follow-up's response.created
    expect(h.fireNextTimer()).toBe(true); // one period after the result: slow, not timed out
    expect(errorCodes(h)).not.toContain("model_timeout");
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Let me look that up.", "We open at nine."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
  });

  it("a model that answers each nudge with another call and then nothing is nudged a bounded number of times (found by the attack: for ever)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    for (let round = 1; round <= 6 && h.state.turn !== null; round++) {
      if (round > 1) h.model({ type: "text_delta", text: `Checking (${round}).` });
      h.model({ type: "tool_call", calls: [{ id: `c${round}`, name: "lookup_faq", args: {} }] });
      h.input({ type: "tool_outcome", callId: `c${round}`, result: { hours: "9-5" } });
      h.model({ type: "turn_complete" });
      // The grace, then emptyReplyWaitMs: a nudge, or the end.
      const before = nudges(h).length;
      for (let i = 0; i < 5 && nudges(h).length === before && h.state.turn !== null; i++)
        h.fireNextTimer();
    }
    expect(nudges(h)).toHaveLength(4);
    expect(errorCodes(h)).toEqual(["empty_response"]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
  });

  it("an answer that comes after the turn timed out is named to clients, durably, not dropped unsaid", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    for (let i = 0; i < 3; i++) expect(h.fireNextTimer()).toBe(true);
    expect(errorCodes(h)).toEqual(["model_slow", "model_slow", "model_timeout"]);
    h.model({ type: "text_delta", text: "Hello, sorry for the wait." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual([]); // its turn's one end is past
    expect(h.durableFrames("phone").at(-1)).toEqual(
      expect.objectContaining({ type: "error", code: "late_answer", fatal: false, turnId: "t1" }),
    );
    expect(h.state.counters.lateAnswers).toBe(1);
    // The next line's answer is its own, and no late notice is given for it.
    h.input({ type: "client_text", clientId: "phone", text: "hi again" });
    h.model({ type: "text_delta", text: "Hi!" });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hi!"]);
    expect(errorCodes(h).filter((c) => c === "late_answer")).toHaveLength(1);
  });
});
