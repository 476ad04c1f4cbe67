import { describe, expect, it } from "vitest";
import { ALL_GUARDS, NO_GUARDS } from "../../../src/core/session-state.js";
import { validateHistory } from "../../../src/history/validate.js";
import type { ModelCommand } from "../../../src/vocabulary/model.js";
import { Harness } from "./harness.js";
import { greetWithLateChips, live, texts, turnEnds, types } from "./sessions.js";

const toolResponses = (h: Harness) =>
  h.sentToModel.filter(
    (c): c is Extract<ModelCommand, { type: "tool_responses" }> => c.type === "tool_responses",
  );

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

describe("empty replies after tool results are retried, bounded", () => {
  function emptyAfterTool(h: Harness, callId = "c1"): void {
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: callId, name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId, result: { answer: "9-5" } });
    h.model({ type: "turn_complete" }); // nothing said after the result
    expect(h.fireNextTimer()).toBe(true); // the grace passes: the follow-up may be slow
    expect(h.sentToModel.at(-1)).not.toMatchObject({ type: "nudge" });
    expect(h.fireNextTimer()).toBe(true); // emptyReplyWaitMs, no sign of work: an empty reply
  }

  it("an empty reply after tools, then success: one nudge, never shown, one turn_complete", () => {
    const h = live();
    emptyAfterTool(h);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "nudge" });
    expect(h.traces).toContain("RETRY_EMPTY");
    h.model({ type: "text_delta", text: "We open 9 to 5." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["We open 9 to 5."]);
    expect(turnEnds(h)).toHaveLength(1);
    const nudge = h.sentToModel.find((c) => c.type === "nudge");
    const nudgeText = nudge?.type === "nudge" ? nudge.text : "";
    expect(JSON.stringify(h.clients.get("phone")?.frames)).not.toContain(nudgeText);
    expect(h.state.turn).toBeNull();
  });

  it("three empty replies: an empty_response error and the turn ends, no hang", () => {
    const h = live();
    emptyAfterTool(h);
    h.model({ type: "turn_complete" }); // empty answer to nudge 1
    expect(h.fireNextTimer()).toBe(true);
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "turn_complete" }); // empty answer to nudge 2
    expect(h.fireNextTimer()).toBe(true);
    expect(h.fireNextTimer()).toBe(true);
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(2);
    expect(types(h).slice(-2)).toEqual(["error", "turn_complete"]);
    expect(h.durableFrames("phone").at(-2)).toMatchObject({ code: "empty_response", fatal: false });
    expect(h.state.turn).toBeNull();
    expect(h.timers.size).toBe(0);
  });

  it("a non-empty reply resets the retry count", () => {
    const h = live();
    emptyAfterTool(h);
    expect(h.state.turn?.emptyRetries).toBe(1);
    h.model({ type: "text_delta", text: "Checking once more." }); // non-empty answer to the nudge
    h.model({ type: "tool_call", calls: [{ id: "c2", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c2", result: { answer: "9-5" } });
    h.model({ type: "turn_complete" });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.fireNextTimer()).toBe(true);
    expect(h.state.turn?.emptyRetries).toBe(1);
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(2);
  });

  it("control: without the retry an empty reply after tools just ends the turn, silently", () => {
    const h = live({ guards: { ...NO_GUARDS, oneTurnComplete: true } });
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "9-5" } });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual([]);
    expect(turnEnds(h)).toHaveLength(1);
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
});

describe("barge-in", () => {
  it("new text during a reply interrupts that turn; what the model still says for it is dropped", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    h.model({ type: "text_delta", text: "Once upon" });
    h.input({ type: "client_text", clientId: "phone", text: "stop" });
    h.model({ type: "text_delta", text: " a time" }); // still in flight for t1
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "Okay." });
    h.model({ type: "turn_complete" });
    expect(h.durableFrames("phone").filter((f) => f.type !== "status")).toEqual([
      expect.objectContaining({ type: "user", turnId: "t1" }),
      expect.objectContaining({ type: "text", turnId: "t1", text: "Once upon" }),
      expect.objectContaining({ type: "interrupted", turnId: "t1", reason: "barge_in" }),
      expect.objectContaining({ type: "user", turnId: "t2" }),
      expect.objectContaining({ type: "text", turnId: "t2", text: "Okay." }),
      expect.objectContaining({ type: "turn_complete", turnId: "t2" }),
    ]);
  });

  it("the model reporting interruption by speech ends the turn with interrupted", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "story" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.advance(300);
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) }); // the user speaks
    h.model({ type: "interrupted" });
    expect(turnEnds(h)).toEqual([
      expect.objectContaining({ type: "interrupted", reason: "barge_in" }),
    ]);
    expect(h.log.some((e) => e.kind === "tool_cancelled" && e.callId === "c1")).toBe(true);
    h.model({ type: "turn_complete" });
    h.model({ type: "input_transcript", text: "wait", finished: true });
    h.model({ type: "text_delta", text: "Yes?" });
    expect(h.durableFrames("phone").at(-2)).toMatchObject({
      type: "user",
      turnId: "t2",
      text: "wait",
    });
  });
});

describe("clients reconnect and resume", () => {
  it("a client that resumes gets ready, then every durable frame after resumeFrom exactly once, then live frames", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "chips please" });
    h.model({ type: "text_delta", text: "Here you go." });
    const seen = h.lastSeqSeen("phone");
    h.disconnect("phone");
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.connect("phone", seen);
    const after = h.clients.get("phone")!.frames.slice(-3);
    expect(after[0]).toMatchObject({ type: "ready", resumed: true, lastSeq: seen + 2 });
    expect(after.slice(1)).toEqual([
      expect.objectContaining({ type: "tool_call", seq: seen + 1, callId: "c1", runOn: "client" }),
      expect.objectContaining({ type: "turn_complete", seq: seen + 2 }),
    ]);
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} });
    const seqs = h.durableFrames("phone").map((f) => f.seq);
    expect(seqs).toEqual(h.log.map((e) => e.seq));
  });
});

describe("the model connection", () => {
  it("a drop mid-turn ends the turn with interrupted(upstream_lost), then reconnects seeded from the log (the handle predates the turn)", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hel" });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    expect(turnEnds(h)).toEqual([
      expect.objectContaining({ type: "interrupted", reason: "upstream_lost" }),
    ]);
    expect(h.durableFrames("phone").at(-1)).toMatchObject({
      type: "status",
      state: "reconnecting",
    });
    expect(h.fireNextTimer()).toBe(true);
    // h1 was issued before "hi": resuming with it would lose the turn (issue 10 attack).
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "rebuild" },
    });
    h.model({ type: "setup_complete" });
    // The lost connection never served (no turn ended, not up 10 s): the new one's `live` is
    // said once it proves itself (PROTOCOL.md, "status after drops"), here by serving a turn.
    const statuses = () => h.durableFrames("phone").filter((f) => f.type === "status");
    expect(statuses().at(-1)).toMatchObject({ state: "reconnecting" });
    h.input({ type: "client_text", clientId: "phone", text: "again" });
    h.model({ type: "text_delta", text: "Hello" });
    h.model({ type: "turn_complete" });
    expect(statuses().at(-1)).toMatchObject({ state: "live" });
  });

  it("a rejected handle (1007 while resuming) falls back to a context rebuilt from the log", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    h.fireNextTimer();
    h.model({ type: "upstream_closed", code: 1007, reason: "bad handle", fatal: true });
    h.fireNextTimer();
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "rebuild" },
    });
  });

  it("1008 is fatal: an error frame, no reconnect loop", () => {
    const h = live();
    h.model({ type: "upstream_closed", code: 1008, reason: "model not supported", fatal: true });
    expect(h.durableFrames("phone").slice(-2)).toEqual([
      expect.objectContaining({ type: "error", code: "upstream_unavailable", fatal: true }),
      expect.objectContaining({ type: "status", state: "ended" }),
    ]);
    expect(h.timers.has("reconnect")).toBe(false);
  });

  it("goAway: moves to a new connection once nothing is in flight, with the handle issued after the turn", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h2", resumable: true });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "go_away", timeLeftMs: 50_000 });
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.model({ type: "text_delta", text: "Hello" });
    h.model({ type: "turn_complete" });
    // Not on the turn's end: h2 predates the turn; the handle that follows it covers it.
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.model({ type: "resumption_update", handle: "h3", resumable: true });
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "resume", handle: "h3" },
    });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });

  it("text typed while the model connection opens is sent once it is live", () => {
    const h = new Harness();
    h.connect("phone");
    h.input({ type: "client_text", clientId: "phone", text: "early" });
    expect(h.sentToModel).toHaveLength(0);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel).toEqual([{ type: "user_text", text: "early" }]);
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
    expect(h.sentToModel.at(-1)).toEqual({ type: "user_text", text: "hello?" });
    h.model({ type: "text_delta", text: "Hi!" });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "interrupted"],
      ["t2", "turn_complete"],
    ]);
  });
});

describe("idle sessions cost nothing", () => {
  it("the model connection closes after the idle time and reopens on the next input, resuming", () => {
    const h = new Harness({ idleTimeoutMs: 60_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    h.model({ type: "resumption_update", handle: "h9", resumable: true });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    h.model({ type: "resumption_update", handle: "h10", resumable: true });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    // Said to clients: closed on purpose, not lost.
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
    // No timer is left either: nothing keeps the object in memory (npm run bench measures it
    // leaving memory about 10 s later).
    expect([...h.timers.keys()]).toEqual([]);
    h.input({ type: "client_text", clientId: "phone", text: "still there?" });
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "resume", handle: "h10" },
    });
    // Queued until the new connection is live.
    expect(h.sentToModel.filter((c) => c.type === "user_text")).toHaveLength(1);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.at(-1)).toEqual({ type: "user_text", text: "still there?" });
  });
});

describe("idle after a turn the model never answered", () => {
  // Found by the black-box attack: the slots a timed-out turn left for the model's late
  // answers kept the session "not quiet" for ever, so its model connection was never closed
  // and its object never left memory.
  const timedOut = () => {
    const h = new Harness({ idleTimeoutMs: 60_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    // Silent model: two nudges, then model_timeout ends the turn.
    for (let i = 0; i < 3; i++) h.advance(15_000);
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
    return h;
  };

  it("a model silent after model_timeout is closed as idle; no timer is left", () => {
    const h = timedOut();
    h.advance(120_000);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
    expect([...h.timers.keys()]).toEqual([]);
    // The next line opens a new connection and gets its own answer.
    h.input({ type: "client_text", clientId: "phone", text: "are you there?" });
    h.model({ type: "setup_complete" });
    h.model({ type: "text_delta", text: "Yes, here." });
    h.model({ type: "turn_complete" });
    expect(h.durableFrames("phone").filter((f) => f.type === "text" && f.turnId === "t2")).toEqual([
      expect.objectContaining({ text: "Yes, here." }),
    ]);
  });

  it("a late answer that comes, then silence: closed as idle after the model's last word", () => {
    const h = timedOut();
    h.advance(5_000);
    h.model({ type: "text_delta", text: "Sorry, I was slow." });
    h.model({ type: "turn_complete" });
    // It reaches no client (its turn ended), and the timeline says so.
    expect(h.durableFrames("phone").some((f) => f.type === "text")).toBe(false);
    expect(h.traces).toContain("SUPPRESSED");
    expect(h.state.counters.suppressedGenerations).toBe(1);
    h.advance(30_000);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.advance(90_000);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
  });
});

describe("the idle timer under live audio", () => {
  it("is set once, not once per audio frame, and fires only after real silence", () => {
    const h = new Harness({ idleTimeoutMs: 10_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    const before = h.effects.filter((e) => e.type === "set_timer" && e.timer === "idle").length;
    for (let i = 0; i < 100; i++) {
      h.advance(20);
      h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    }
    expect(h.effects.filter((e) => e.type === "set_timer" && e.timer === "idle").length).toBe(
      before,
    );
    // The first firing comes early (audio kept flowing): it re-arms for the rest.
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    // Said to clients: closed on purpose, not lost.
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
  });
});

describe("found in review", () => {
  it("a reply that honestly starts like an earlier one ('Sure…') is not taken for a regeneration", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Sure" });
    h.model({ type: "text_delta", text: ", hello!" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} }); // SILENT
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    h.model({ type: "text_delta", text: "Sure" });
    h.model({ type: "text_delta", text: ", we open at nine." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Sure", ", hello!", "Sure", ", we open at nine."]);
    expect(h.state.counters.suppressedGenerations).toBe(0);
    // Long after the silent result, even a word-for-word repeat is an honest answer.
    h.advance(60_000);
    h.input({ type: "client_text", clientId: "phone", text: "again?" });
    h.model({ type: "text_delta", text: "Sure, we open at nine." });
    h.model({ type: "turn_complete" });
    expect(texts(h).at(-1)).toBe("Sure, we open at nine.");
  });

  it("a late piece of the user's transcription does not invent a second voice turn", () => {
    const h = live();
    h.model({ type: "input_transcript", text: "hello", finished: false });
    h.model({ type: "text_delta", text: "Hi there, how can I help?" });
    h.model({ type: "input_transcript", text: " there", finished: true }); // late, same utterance
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "Hi there, how can I help?" }); // a regeneration
    h.model({ type: "turn_complete" });
    expect(
      h
        .durableFrames("phone")
        .filter((f) => f.type === "user")
        .map((f) => f.turnId),
    ).toEqual(["t1"]);
    expect(texts(h)).toEqual(["Hi there, how can I help?"]);
  });

  it("input typed while the connection is being rebuilt is left out of the rebuilt context", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    const user = h.log.find((e) => e.kind === "user" && e.turnId === "t2")!;
    expect(h.state.outboxSince).toBe(user.seq);
    h.fireNextTimer();
    h.model({ type: "setup_complete" });
    expect(h.state.outboxSince).toBeNull();
    expect(h.sentToModel.at(-1)).toEqual({ type: "user_text", text: "hours?" });
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
  });
});

describe("issue 8: honest answers that open alike are never dropped, every turn ends once", () => {
  /** The greeter on the simulator: a greeting with a client chips call, then lines 250 ms apart. */
  function greetThenAsk(h: Harness, lines: string[]): void {
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Sure. You said: hi. " });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} }); // SILENT
    for (const line of lines) {
      h.advance(250);
      h.input({ type: "client_text", clientId: "phone", text: line });
      h.advance(30);
      h.model({ type: "text_delta", text: "Sure. You said: " });
      h.model({ type: "text_delta", text: line });
      h.model({ type: "turn_complete" });
    }
  }

  it("each answer reaches its own turn and each turn ends once, at once", () => {
    const h = live();
    greetThenAsk(h, ["one", "two", "three", "four"]);
    const byTurn = h
      .durableFrames("phone")
      .filter((f) => f.type === "text")
      .map((f) => [f.turnId, f.text]);
    expect(byTurn).toEqual([
      ["t1", "Sure. You said: hi. "],
      ["t2", "Sure. You said: "],
      ["t2", "one"],
      ["t3", "Sure. You said: "],
      ["t3", "two"],
      ["t4", "Sure. You said: "],
      ["t4", "three"],
      ["t5", "Sure. You said: "],
      ["t5", "four"],
    ]);
    // No timer needed to end them: each turn_complete came with its answer.
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "turn_complete"],
      ["t2", "turn_complete"],
      ["t3", "turn_complete"],
      ["t4", "turn_complete"],
      ["t5", "turn_complete"],
    ]);
    expect(h.state.counters.suppressedGenerations).toBe(0);
  });

  it("control: the opening-words judgement this replaced drops the answers and leaves turns open", () => {
    const h = live({ legacyOpeningCheck: true, modelTimeoutMs: 0 });
    greetThenAsk(h, ["one", "two", "three", "four"]);
    for (let i = 0; i < 10 && h.fireNextTimer(); i++);
    const ends = turnEnds(h);
    const answered = h.durableFrames("phone").filter((f) => f.type === "text" && f.text === "four");
    expect(h.state.counters.suppressedGenerations).toBeGreaterThan(0);
    expect(answered.length === 0 || ends.length < 5).toBe(true);
    expect(h.state.turn).not.toBeNull(); // the last turn hangs
  });
});

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

describe("an interruption caused by the input a generation was taken to answer", () => {
  it("the generation began before the input: it was not its answer, the answer still comes", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Here are some topics.");
    h.advance(10);
    h.input({ type: "client_text", clientId: "phone", text: "hours?" });
    // The model (ignoring SILENT) had begun saying its greeting again; our text interrupts it.
    h.model({ type: "text_delta", text: "Hello! Here" });
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "turn_complete"],
      ["t2", "turn_complete"],
    ]);
    expect(h.durableFrames("phone").filter((f) => f.type === "user")).toHaveLength(2);
    expect(texts(h).at(-1)).toBe("We open at nine.");
  });
});

describe("a reply that repeats a recent one word for word, and nothing else comes", () => {
  it("the turn ends after the grace as answered: the reply was delivered, no error follows it", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Here are some topics.");
    h.input({ type: "client_text", clientId: "phone", text: "say that again" });
    h.model({ type: "text_delta", text: "Hello! Here are some topics." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toHaveLength(1); // t2 waits a grace for another answer
    expect(h.fireNextTimer()).toBe(true);
    expect(h.durableFrames("phone").at(-1)).toEqual(
      expect.objectContaining({ type: "turn_complete", turnId: "t2" }),
    );
    expect(h.durableFrames("phone").filter((f) => f.type === "error")).toEqual([]);
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
    expect(h.traces).toContain("REPEAT_KEPT");
    expect(texts(h)).toEqual(["Hello! Here are some topics.", "Hello! Here are some topics."]);
  });
});

describe("issue 9: bounded reconnects", () => {
  /** A model that accepts every connection and closes it with 1011 right after setup. */
  function dyingUpstream(h: Harness, ms: number): number {
    let opens = 0;
    const until = h.now + ms;
    while (h.now < until) {
      const open = h.effects.filter((e) => e.type === "open_upstream").length;
      if (open > opens) {
        opens = open;
        h.model({ type: "setup_complete" });
        h.advance(1);
        h.model({ type: "upstream_closed", code: 1011, reason: "internal error", fatal: false });
      }
      if (!h.fireNextTimer()) break;
      if (h.now > until) break;
    }
    return h.effects.filter((e) => e.type === "open_upstream").length;
  }

  it("an upstream that dies after every setup: at most ~10 opens in the first minute, then none, and a visible error", () => {
    const h = live({ idleTimeoutMs: 60_000 });
    h.disconnect("phone");
    const opens = dyingUpstream(h, 10 * 60_000);
    expect(opens).toBeLessThanOrEqual(10);
    expect(h.state.upstream.phase === "failed" || h.state.upstream.phase === "closed").toBe(true);
    expect(h.timers.has("reconnect")).toBe(false);
    // A client that comes back sees why (the error is durable, replayed from the log).
    h.connect("laptop", 0);
    const error = h.durableFrames("laptop").find((f) => f.type === "error");
    if (h.state.upstream.phase === "failed")
      expect(error).toMatchObject({ code: "upstream_unavailable", fatal: false });
  });

  it("gives up after the failures in a row; new input opens the connection again", () => {
    const h = live({ idleTimeoutMs: 0 });
    const opens = dyingUpstream(h, 10 * 60_000);
    expect(opens).toBeLessThanOrEqual(10);
    expect(h.state.upstream.phase).toBe("failed");
    expect(h.durableFrames("phone").filter((f) => f.type === "error")).toEqual([
      expect.objectContaining({ code: "upstream_unavailable", fatal: false }),
    ]);
    expect(h.state.ended).toBe(false);
    h.input({ type: "client_text", clientId: "phone", text: "still there?" });
    expect(h.effects.filter((e) => e.type === "open_upstream")).toHaveLength(opens + 1);
  });

  it("a flapping connection is not logged one connection at a time", () => {
    const h = live({ idleTimeoutMs: 0 });
    const opens = dyingUpstream(h, 10 * 60_000);
    expect(opens).toBeGreaterThan(4);
    const statuses = h.log.flatMap((e) => (e.kind === "status" ? [e.state] : []));
    // connecting, live (the first connection: nothing yet says it will fail), then the loop
    // as one entry, since none proves itself: reconnecting ... until the give-up error, then
    // idle (none held). (It showed a second `live`, for a connection that never served.)
    expect(statuses).toEqual(["connecting", "live", "reconnecting", "idle"]);
  });

  it("control: logged one by one, the same loop writes two status rows per connection", () => {
    const h = live({ idleTimeoutMs: 0, healthyAfterMs: 0, reconnectBudget: 1_000_000 });
    dyingUpstream(h, 60_000);
    const statuses = h.log.filter((e) => e.kind === "status").length;
    expect(statuses).toBeGreaterThan(20);
  });

  it("a connection that stays up long enough starts the failure count over", () => {
    const h = live({ idleTimeoutMs: 0 });
    for (let i = 0; i < 20; i++) {
      h.advance(11_000); // healthy for 11 s
      h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
      expect(h.fireNextTimer()).toBe(true);
      h.model({ type: "setup_complete" });
    }
    expect(h.state.upstream.phase).toBe("live");
  });

  it("a connection that never completes setup fails on the connect timer, like any other", () => {
    const h = new Harness();
    h.connect("phone");
    expect(h.fireNextTimer()).toBe(true); // the connect timer: silent
    expect(h.traces).toContain("UPSTREAM_CLOSED");
    expect(h.timers.has("reconnect")).toBe(true);
  });

  it("control: the old policy (attempts reset on every setup) reconnects for ever", () => {
    const h = live({ idleTimeoutMs: 0, healthyAfterMs: 0, reconnectBudget: 1_000_000 });
    const opens = dyingUpstream(h, 10 * 60_000);
    expect(opens).toBeGreaterThan(100);
  });
});

describe("found by the black-box attack", () => {
  it("a barge-in before the first chunk, after a tool-call greeting: the next line still gets its answer", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Here are some topics.");
    h.input({ type: "client_text", clientId: "phone", text: "first" });
    h.advance(300);
    h.input({ type: "client_text", clientId: "phone", text: "second" });
    // The model had begun answering "first" (nothing sent yet): cut short, then "second".
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "Right. You said: second." });
    h.model({ type: "turn_complete" });
    expect(
      h
        .durableFrames("phone")
        .filter((f) => f.type === "text")
        .map((f) => [f.turnId, f.text]),
    ).toEqual([
      ["t1", "Hello! Here are some topics."],
      ["t3", "Right. You said: second."],
    ]);
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "turn_complete"],
      ["t2", "interrupted"],
      ["t3", "turn_complete"],
    ]);
    expect(h.traces).not.toContain("WATCHDOG_NUDGE");
  });
});

describe("found by the black-box attack: a rejected resumption handle", () => {
  it("the rebuilt connection is logged live at once (a rejected handle is no failure)", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    h.fireNextTimer();
    h.model({ type: "upstream_closed", code: 1007, reason: "bad handle", fatal: true });
    h.fireNextTimer();
    h.model({ type: "setup_complete" });
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "live" });
  });
});

describe("input while the model connection opens or is replaced (issue 10)", () => {
  it("a line typed during a reconnect whose handle is refused goes out after the rebuild, once", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    h.fireNextTimer();
    h.input({ type: "client_text", clientId: "phone", text: "are you there?" });
    h.model({ type: "upstream_closed", code: 1007, reason: "bad handle", fatal: true });
    // Not ended as lost: the model never heard it.
    expect(turnEnds(h)).toEqual([]);
    h.fireNextTimer();
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "rebuild" },
    });
    h.sentToModel.length = 0;
    h.model({ type: "setup_complete" });
    expect(h.sentToModel).toEqual([{ type: "user_text", text: "are you there?" }]);
    h.model({ type: "text_delta", text: "Yes." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });

  it("a line sent on a live connection that drops before any answer is carried: the next connection is asked once", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    expect(turnEnds(h)).toEqual([]);
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(1);
    h.model({ type: "text_delta", text: "Hello!" });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });

  it("control: with carrying off, that line is ended upstream_lost", () => {
    const h = live({ guards: { ...ALL_GUARDS, carryTurns: false } });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    expect(turnEnds(h)).toEqual([
      expect.objectContaining({ type: "interrupted", reason: "upstream_lost" }),
    ]);
  });

  it("a queued turn ends, said so, when liveline gives up on the connection", () => {
    const h = live();
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    for (let i = 0; i < 20 && h.state.upstream.phase !== "failed"; i++) {
      h.fireNextTimer();
      if (h.state.upstream.phase === "reconnecting" || h.state.upstream.phase === "connecting") {
        h.input({ type: "upstream_failed", message: "refused" });
      }
    }
    expect(h.state.upstream.phase).toBe("failed");
    expect(turnEnds(h)).toEqual([
      expect.objectContaining({ type: "interrupted", reason: "upstream_lost" }),
    ]);
  });

  it("audio before setup is held in order and sent once live; beyond the bound the oldest goes, traced", () => {
    const h = new Harness({ heldAudioMaxBytes: 3 * 640 });
    h.connect("phone");
    const chunk = (n: number) => new Uint8Array(640).fill(n);
    for (let n = 1; n <= 5; n++)
      h.input({ type: "client_audio", clientId: "phone", pcm: chunk(n) });
    h.input({ type: "client_audio_end", clientId: "phone" });
    expect(h.sentToModel).toEqual([]);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.map((c) => (c.type === "user_audio" ? c.pcm[0] : c.type))).toEqual([
      3,
      4,
      5,
      "audio_end",
    ]);
    expect(h.traces).toContain("HELD_AUDIO_DROPPED");
  });

  it("25 chunks from the moment the socket opened all reach the model (none lost before setup)", () => {
    const h = new Harness();
    h.connect("phone");
    let bytes = 0;
    h.onModelCommand = (c) => {
      if (c.type === "user_audio") bytes += c.pcm.length;
    };
    for (let i = 0; i < 25; i++) {
      if (i === 3) h.model({ type: "setup_complete" });
      h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
      h.now += 20;
    }
    expect(bytes).toBe(16_000);
  });
});

describe("found by the black-box attack on issue 10", () => {
  it("lines typed over one another before the connection is set up: all reach the model, in order, as one input", () => {
    const h = new Harness();
    h.connect("phone");
    for (const text of ["one", "two", "three"]) {
      h.input({ type: "client_text", clientId: "phone", text });
    }
    h.model({ type: "setup_complete" });
    // Each line reaches the model (issue 28: the model was never told the first two); the
    // superseded turns end as the user typed over them, and say that their line went on.
    expect(h.sentToModel).toEqual([{ type: "user_text", text: "one\ntwo\nthree" }]);
    expect(
      turnEnds(h).flatMap((f) => (f.type === "interrupted" ? [[f.turnId, f.joined]] : [])),
    ).toEqual([
      ["t1", true],
      ["t2", true],
    ]);
    h.model({ type: "text_delta", text: "Three!" });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "interrupted"],
      ["t2", "interrupted"],
      ["t3", "turn_complete"],
    ]);
    expect(h.durableFrames("phone").filter((f) => f.type === "text")).toEqual([
      expect.objectContaining({ turnId: "t3", text: "Three!" }),
    ]);
  });

  it("a connection that serves a turn is live, however soon it drops: status says so each time", () => {
    const h = live();
    for (let round = 0; round < 4; round++) {
      h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
      h.fireNextTimer();
      h.model({ type: "setup_complete" });
      h.input({ type: "client_text", clientId: "phone", text: `line ${round}` });
      h.model({ type: "text_delta", text: `answer ${round}` });
      h.model({ type: "turn_complete" });
    }
    const states = h
      .durableFrames("phone")
      .flatMap((f) => (f.type === "status" ? [f.state] : []))
      .slice(-8);
    expect(states).toEqual([
      "reconnecting",
      "live",
      "reconnecting",
      "live",
      "reconnecting",
      "live",
      "reconnecting",
      "live",
    ]);
    expect(h.state.upstream.attempts).toBeLessThanOrEqual(1);
  });
});

describe("found by the black-box attack on issue 10: resumption with a stale handle", () => {
  it("a goAway move waits for the handle that covers the turn; if none comes, the timer moves by a rebuild", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.input({ type: "client_text", clientId: "phone", text: "tell me about the weather" });
    h.model({ type: "resumption_update", resumable: false });
    h.model({ type: "go_away", timeLeftMs: 20_000 });
    h.model({ type: "text_delta", text: "Sunny." });
    h.model({ type: "turn_complete" });
    expect(h.effects.some((e) => e.type === "open_upstream" && e.open.mode === "resume")).toBe(
      false,
    );
    // No fresh handle: the go_away timer moves anyway, seeded from the log, not with h1.
    h.advance(20_000);
    const opens = h.effects.filter((e) => e.type === "open_upstream");
    expect(opens.at(-1)).toMatchObject({ open: { mode: "rebuild" } });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });
});

describe("found by the black-box attack (fourth round)", () => {
  const chunk = new Uint8Array(640); // 20 ms of 16 kHz PCM16
  const opens = (h: Harness) => h.effects.filter((e) => e.type === "open_upstream").length;

  it("a refused connection is tried again by audio at most once per reconnectMaxMs, not at every chunk", () => {
    const h = new Harness({ reconnectMaxMs: 8_000 });
    h.connect("phone");
    h.input({ type: "upstream_failed", message: "HTTP 401", refused: true });
    expect(h.state.upstream.phase).toBe("failed");
    // Two seconds of microphone audio, 50 chunks a second, every attempt refused at once.
    for (let i = 0; i < 100; i++) {
      h.advance(20);
      const before = opens(h);
      h.clientAudio("phone", chunk);
      if (opens(h) > before)
        h.input({ type: "upstream_failed", message: "HTTP 401", refused: true });
    }
    expect(opens(h)).toBe(1); // the client's connect only
    h.advance(8_000);
    h.clientAudio("phone", chunk);
    expect(opens(h)).toBe(2); // the first chunk after the wait tries again
    // Nothing of the refused stretch waits for that connection: only the chunk that opened it.
    expect(h.state.outbox.filter((c) => c.type === "user_audio")).toHaveLength(1);
    // A typed line always tries again.
    h.input({ type: "upstream_failed", message: "HTTP 401", refused: true });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    expect(opens(h)).toBe(3);
  });

  it("giving up says no connection is held: the last status is idle, not reconnecting", () => {
    const h = live({ idleTimeoutMs: 0, maxReconnectAttempts: 2 });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    while (h.state.upstream.phase !== "failed") {
      expect(h.fireNextTimer()).toBe(true);
      if (h.state.upstream.phase === "connecting" || h.state.upstream.phase === "reconnecting")
        h.input({ type: "upstream_failed", message: "HTTP 503" });
    }
    const frames = h.durableFrames("phone");
    expect(frames.findLast((f) => f.type === "error")).toMatchObject({
      code: "upstream_unavailable",
      fatal: false,
    });
    expect(frames.findLast((f) => f.type === "status")).toMatchObject({ state: "idle" });
  });

  it("audio_end with no audio before it holds no typed line", () => {
    const h = live();
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).not.toContain("LINE_HELD");
    expect(h.sentToModel.at(-1)).toEqual({ type: "user_text", text: "hi" });
  });

  it("control: audio_end after audio holds the line for the speech's answer", () => {
    const h = live();
    h.clientAudio("phone", chunk);
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).toContain("LINE_HELD");
  });

  it("goAway moves are not activity: a session nobody speaks to goes idle all the same", () => {
    const h = live({ idleTimeoutMs: 60_000 });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    // The service moves the connection every 1.5 s (the attack's goAwayAfterMs=1500).
    for (let t = 0; t < 90_000 && h.state.upstream.phase !== "closed"; t += 1_500) {
      h.advance(1_500);
      if (h.state.upstream.phase !== "live") continue;
      const before = opens(h);
      h.model({ type: "go_away", timeLeftMs: 50_000 });
      if (opens(h) > before) h.model({ type: "setup_complete" });
    }
    expect(h.traces).toContain("UPSTREAM_IDLE_CLOSE");
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
  });
});
