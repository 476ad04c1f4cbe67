/** The turn watchdog: a silent model is told slow, then its turn ends with model_timeout. */
import { describe, expect, it } from "vitest";
import type { Harness } from "./harness.js";
import { live, texts, turnEnds } from "./sessions.js";

describe("the turn watchdog", () => {
  it("a model that never answers a line is told slow twice, never nudged, then the turn ends with model_timeout", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    expect(h.fireNextTimer()).toBe(true); // 15 s of silence
    expect(h.fireNextTimer()).toBe(true);
    // A nudge would cut the answer a slow model prepares: a line gets none.
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(0);
    expect(
      h.durableFrames("phone").filter((f) => f.type === "error" && f.code === "model_slow"),
    ).toHaveLength(2);
    expect(turnEnds(h)).toHaveLength(0);
    expect(h.fireNextTimer()).toBe(true);
    expect(h.durableFrames("phone").slice(-2)).toEqual([
      expect.objectContaining({ type: "error", code: "model_timeout", turnId: "t1" }),
      expect.objectContaining({ type: "turn_complete", turnId: "t1" }),
    ]);
    expect(h.timers.size).toBe(0);
  });

  it("an answer after the model_slow notice lands in its turn and ends it normally", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "text_delta", text: "Sorry, hello!" });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(texts(h)).toEqual(["Sorry, hello!"]);
    expect(h.timers.size).toBe(0);
  });

  it("a reply that stops mid-stream with no turn_complete ends with model_timeout; nothing after it is attributed", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    h.model({ type: "text_delta", text: "Once upon" });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(0);
    expect(h.durableFrames("phone").slice(-2)).toEqual([
      expect.objectContaining({ type: "error", code: "model_timeout" }),
      expect.objectContaining({ type: "turn_complete", turnId: "t1" }),
    ]);
    h.model({ type: "text_delta", text: " a time" });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Once upon"]);
    expect(turnEnds(h)).toHaveLength(1);
  });

  it("never fires while content streams: every model event moves the deadline", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "tell me a long story" });
    for (let i = 0; i < 40; i++) {
      h.advance(1000);
      h.model({ type: "text_delta", text: `part ${i}. ` });
      // A firing that comes early re-arms for the rest of the wait.
      const due = h.timers.get("watchdog");
      if (due !== undefined && due <= h.now) h.fireNextTimer();
    }
    h.model({ type: "turn_complete" });
    expect(h.traces).not.toContain("MODEL_TIMEOUT");
    expect(h.traces).not.toContain("WATCHDOG_NUDGE");
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });

  it("does not fire while a speak tool runs (the tool's own timeout bounds that)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "turn_complete" });
    expect(h.fireNextTimer()).toBe(true); // the tool's timeout (5 s), not the watchdog
    expect(h.log.at(-1)).toMatchObject({ kind: "tool_result", callId: "c1" });
    expect(h.traces).not.toContain("WATCHDOG_NUDGE");
  });

  /** Gemini 3.1: the model waits inside its reply for the client's suggest_topics result. */
  function waitingForChips(modelTimeoutMs?: number): Harness {
    const h = live({
      ...(modelTimeoutMs === undefined ? {} : { modelTimeoutMs }),
      capabilities: {
        nonBlockingCalls: false,
        resultScheduling: false,
        turnCompleteWaitsForResults: true,
        silentHonoured: false,
        responsesOnRequest: false,
      },
    });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    return h;
  }

  it("on a blocking-only model it does not fire while a side-effect call the model waits for runs", () => {
    const h = waitingForChips();
    expect(h.fireNextTimer()).toBe(true); // the tool's timeout (10 s), not the watchdog
    expect(h.log.at(-1)).toMatchObject({ kind: "tool_result", callId: "c1" });
    expect(h.traces).not.toContain("MODEL_TIMEOUT");
  });

  it("after a call the model waited for times out, the model has its whole wait to go on (found by the attack)", () => {
    // Gemini 3.1: the model waits inside its reply for every result. The call's timeout and
    // the watchdog both counted from the call; at the same instant the error result went back
    // and the turn ended with model_timeout, dropping the continuation the model then sent.
    const h = waitingForChips(12_000);
    expect(h.fireNextTimer()).toBe(true); // the tool's timeout (10 s)
    expect(h.log.at(-1)).toMatchObject({ kind: "tool_result", callId: "c1" });
    h.advance(2_700);
    h.model({ type: "text_delta", text: " Here are some topics." });
    h.model({ type: "turn_complete" });
    expect(h.traces).not.toContain("MODEL_TIMEOUT");
    expect(texts(h).join("")).toBe("Hello! Here are some topics.");
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });

  it("control: with the watchdog off, a silent model leaves the turn open for good", () => {
    const h = live({ modelTimeoutMs: 0 });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    expect(h.fireNextTimer()).toBe(false);
    expect(h.state.turn).not.toBeNull();
  });
});
