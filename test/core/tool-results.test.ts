/**
 * Tool calls and their results in the core: one reply per user turn however a result races
 * the model's turn_complete, a speak result spoken once, one run and one result per call,
 * the second line of defence against a model that ignores SILENT, and new text held while a
 * speak result's follow-up may still come.
 */
import { describe, expect, it } from "vitest";
import { NO_GUARDS } from "../../src/core/session-state.js";
import { validateHistory } from "../../src/history/validate.js";
import { greetWithLateChips, live, texts, toolResponses, turnEnds, types } from "./sessions.js";

describe("one reply per user turn: ADK's fire-and-forget race", () => {
  it("a silent result that arrives after call + turn_complete in the same instant causes no second reply", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello! What shall we talk about?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" }); // same instant: the model did not wait
    expect(turnEnds(h)).toHaveLength(1);
    h.advance(40);
    h.input({
      type: "client_tool_result",
      clientId: "phone",
      callId: "c1",
      result: { chips: ["a"] },
    });
    // Sent so that it adds to context quietly: SILENT on a non-blocking declaration.
    expect(toolResponses(h).at(-1)?.responses[0]).toMatchObject({
      callId: "c1",
      scheduling: "silent",
    });
    // A provider that ignores SILENT regenerates the greeting: it must not reach clients.
    h.model({ type: "text_delta", text: "Hello! What shall we talk about?" });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hello! What shall we talk about?"]);
    expect(turnEnds(h)).toHaveLength(1);
    expect(h.state.counters.suppressedGenerations).toBe(1);
    expect(h.traces).toContain("SUPPRESSED");
  });

  it("on a blocking-only model the late silent result is withheld from the model", () => {
    const h = live({
      capabilities: {
        nonBlockingCalls: false,
        resultScheduling: false,
        turnCompleteWaitsForResults: false,
        silentHonoured: false,
        responsesOnRequest: false,
      },
    });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { chips: [] } });
    expect(toolResponses(h)).toHaveLength(0);
    expect(h.traces).toContain("TOOL_RESULT_WITHHELD");
    expect(types(h)).toEqual([
      "status",
      "status",
      "user",
      "text",
      "tool_call",
      "turn_complete",
      "tool_result",
    ]);
  });

  it("a result sent 2.4 ms before the model's turn_complete: the regenerated reply is suppressed", () => {
    const h = live({
      capabilities: {
        nonBlockingCalls: false,
        resultScheduling: false,
        turnCompleteWaitsForResults: false,
        silentHonoured: false,
        responsesOnRequest: false,
      },
    });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({
      type: "tool_call",
      calls: [{ id: "c1", name: "set_preference", args: { topic: "x" } }],
    });
    h.input({ type: "tool_outcome", callId: "c1", result: { ok: true } });
    expect(toolResponses(h)).toHaveLength(1); // the model was (we believed) still waiting
    h.advance(2.4);
    h.model({ type: "turn_complete" }); // ... but it had already ended its turn
    h.model({ type: "text_delta", text: "Hello!" }); // so it takes the response as new input
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hello!"]);
    expect(turnEnds(h)).toHaveLength(1);
  });

  it("control: the naive relay forwards the regenerated reply and a second turn_complete", () => {
    const h = live({ guards: NO_GUARDS });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} });
    expect(toolResponses(h).at(-1)?.responses[0]?.scheduling).toBeUndefined();
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hello!", "Hello!"]);
    expect(turnEnds(h)).toHaveLength(2);
    expect(validateHistory(h.log).map((v) => v.rule)).toContain("one_turn_end");
  });
});

describe("a speak result is spoken, once", () => {
  it("a speak result that arrives after the model ended its turn prompts one follow-up in the same turn", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "when do you open?" });
    h.model({ type: "text_delta", text: "Let me check." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: { q: "hours" } }] });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toHaveLength(0); // the turn waits for the result
    h.advance(800);
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "9 to 5" } });
    expect(toolResponses(h).at(-1)?.responses[0]).toEqual({
      callId: "c1",
      name: "lookup_faq",
      result: { answer: "9 to 5" },
    });
    h.model({ type: "text_delta", text: "We open 9 to 5." });
    h.model({ type: "turn_complete" });
    const frames = h.durableFrames("phone");
    expect(frames.filter((f) => f.type === "text").map((f) => f.turnId)).toEqual(["t1", "t1"]);
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete", turnId: "t1" })]);
    expect(types(h).slice(-4)).toEqual(["tool_call", "tool_result", "text", "turn_complete"]);
  });

  it("a speak result sent just before the model's turn_complete waits for the follow-up", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "9-5" } });
    h.model({ type: "turn_complete" }); // the model ended before the result reached it
    expect(turnEnds(h)).toHaveLength(0);
    expect(h.timers.has("grace:t1")).toBe(true);
    h.advance(300);
    h.model({ type: "text_delta", text: "9 to 5." }); // the follow-up, within the grace
    h.model({ type: "turn_complete" });
    expect(h.timers.has("grace:t1")).toBe(false);
    expect(texts(h)).toEqual(["9 to 5."]);
    expect(turnEnds(h)).toHaveLength(1);
    expect(h.sentToModel.some((c) => c.type === "nudge")).toBe(false);
  });
});

describe("one call, one run, one result", () => {
  it("a call delivered as a modelTurn part and as toolCall runs once", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "x" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "set_preference", args: {} }] });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "set_preference", args: {} }] });
    expect(h.effects.filter((e) => e.type === "run_tool")).toHaveLength(1);
    expect(types(h).filter((t) => t === "tool_call")).toHaveLength(1);
    expect(h.state.counters.duplicateCalls).toBe(1);
  });

  it("two results for one call: the first stands, the second gets duplicate_result", () => {
    const h = live();
    h.connect("laptop");
    h.input({ type: "client_text", clientId: "phone", text: "x" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.input({
      type: "client_tool_result",
      clientId: "laptop",
      callId: "c1",
      result: { chips: ["first"] },
    });
    h.input({
      type: "client_tool_result",
      clientId: "phone",
      callId: "c1",
      result: { chips: ["second"] },
    });
    const results = h.log.filter((e) => e.kind === "tool_result");
    expect(results).toEqual([
      expect.objectContaining({ callId: "c1", result: { chips: ["first"] } }),
    ]);
    expect(h.clients.get("phone")?.frames.at(-1)).toMatchObject({
      type: "error",
      code: "duplicate_result",
      fatal: false,
    });
    expect(toolResponses(h)).toHaveLength(1);
    expect(h.state.counters.duplicateResults).toBe(1);
    expect(validateHistory(h.log)).toEqual([]);
  });

  it("a result for a call id that was never sent gets unknown_call", () => {
    const h = live();
    h.input({ type: "client_tool_result", clientId: "phone", callId: "nope", result: {} });
    expect(h.clients.get("phone")?.frames.at(-1)).toMatchObject({
      type: "error",
      code: "unknown_call",
    });
    expect(h.log.some((e) => e.kind === "tool_result")).toBe(false);
  });

  it("model cancellation aborts the tool and records it; nothing is sent upstream", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "x" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "tool_call_cancellation", ids: ["c1"] });
    expect(h.abortedTools).toEqual(["c1"]);
    expect(h.log.at(-1)).toMatchObject({ kind: "tool_cancelled", callId: "c1" });
    h.input({ type: "tool_outcome", callId: "c1", result: { late: true } });
    expect(toolResponses(h)).toHaveLength(0);
    expect(validateHistory(h.log)).toEqual([]);
  });

  it("a server tool that times out gives the model an error result, not silence", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "x" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.abortedTools).toEqual(["c1"]);
    expect(toolResponses(h)[0]?.responses[0]).toMatchObject({
      callId: "c1",
      error: expect.stringContaining("timed out"),
    });
  });

  it("a tool the agent does not have gets an error result at once", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "x" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "launch_rocket", args: {} }] });
    expect(toolResponses(h)[0]?.responses[0]).toMatchObject({
      callId: "c1",
      error: 'unknown tool "launch_rocket"',
    });
  });

  it("a call still running when the connection drops is cancelled; its late result is refused, not sent", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toHaveLength(1);
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    expect(h.log.at(-2)).toMatchObject({
      kind: "tool_cancelled",
      callId: "c1",
      reason: "upstream_lost",
    });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} });
    expect(h.clients.get("phone")?.frames.at(-1)).toMatchObject({ code: "call_cancelled" });
    expect(toolResponses(h)).toHaveLength(0);
    // Its own timeline row: a result to a cancelled call is not a second result.
    expect(h.traces.at(-1)).toBe("RESULT_AFTER_CANCEL");
    expect(h.traces).not.toContain("DUPLICATE_RESULT");
    expect(h.state.counters.duplicateResults).toBe(0);
  });
});

describe("second line of defence: a model that ignores SILENT (field report O2)", () => {
  it("a regenerated reply that takes the slot of the answer to new input is delivered, and the answer still comes", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Let me show you some topics.");
    // The user types at once; the model, ignoring SILENT, first repeats its greeting.
    h.input({ type: "client_text", clientId: "phone", text: "tell me about hours" });
    h.model({ type: "text_delta", text: "Hello! Let me show you some topics." });
    h.model({ type: "turn_complete" });
    // Nothing is judged by its words while it streams (when in doubt, deliver); once it has
    // ended, the whole reply is a word-for-word repeat: its slot goes back, the turn stays open.
    expect(turnEnds(h).map((f) => f.turnId)).toEqual(["t1"]);
    expect(h.traces).toContain("REPEATED_REPLY");
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(
      h
        .durableFrames("phone")
        .filter((f) => f.type === "text")
        .map((f) => [f.turnId, f.text]),
    ).toEqual([
      ["t1", "Hello! Let me show you some topics."],
      ["t2", "Hello! Let me show you some topics."],
      ["t2", "We open at nine."],
    ]);
    expect(turnEnds(h).map((f) => f.turnId)).toEqual(["t1", "t2"]);
  });

  it("a regeneration that starts before any new input is suppressed whole", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Let me show you some topics.");
    h.model({ type: "text_delta", text: "Hello! Let me show you some topics." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hello! Let me show you some topics."]);
    expect(turnEnds(h)).toHaveLength(1);
  });

  it("an empty unasked generation does not take the slot of the answer to new input", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { chips: [] } });
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "turn_complete" }); // the model's empty reaction to the silent result
    expect(h.traces).toContain("EMPTY_GENERATION");
    h.model({ type: "text_delta", text: "Nine to five." });
    h.model({ type: "turn_complete" });
    expect(
      h
        .durableFrames("phone")
        .filter((f) => f.type === "text")
        .map((f) => [f.turnId, f.text]),
    ).toEqual([
      ["t1", "Hello!"],
      ["t2", "Nine to five."],
    ]);
    expect(turnEnds(h).map((f) => f.turnId)).toEqual(["t1", "t2"]);
  });
});

describe("ambiguity after a speak result sent just before the model ended", () => {
  it("new text is held until the follow-up shows, so the follow-up is not taken for its answer", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "9-5" } });
    h.input({ type: "client_text", clientId: "phone", text: "actually, never mind" });
    expect(h.sentToModel.filter((c) => c.type === "user_text")).toHaveLength(1); // held
    h.model({ type: "turn_complete" }); // it had ended before the result arrived...
    h.model({ type: "text_delta", text: "We open 9 to 5." }); // ...so this follow-up answers t1
    expect(h.sentToModel.filter((c) => c.type === "user_text")).toHaveLength(2); // released
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "Okay." });
    h.model({ type: "turn_complete" });
    expect(
      h
        .durableFrames("phone")
        .filter((f) => f.type === "text")
        .map((f) => [f.turnId, f.text]),
    ).toEqual([["t2", "Okay."]]);
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "interrupted"],
      ["t2", "turn_complete"],
    ]);
  });

  it("held text goes out when the grace passes with no follow-up", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "9-5" } });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    h.model({ type: "turn_complete" });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "hello?" });
    h.model({ type: "text_delta", text: "Hi!" });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "interrupted"],
      ["t2", "turn_complete"],
    ]);
  });
});
