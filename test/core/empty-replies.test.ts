/** An empty reply after tool results: nudged again a bounded number of times, then ended. */
import { describe, expect, it } from "vitest";
import { NO_GUARDS } from "../../src/core/session-state.js";
import type { Harness } from "./harness.js";
import { live, texts, turnEnds, types } from "./sessions.js";

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
