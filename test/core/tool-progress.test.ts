/**
 * A long server call's progress: clients hear of it, the model is asked at most once (under
 * `progress: "say"`) to say it is still working, and a result that comes while it says so is
 * still answered, in its turn — never taken as answered by those words.
 */

import { describe, expect, it } from "vitest";
import { ALL_GUARDS } from "../../src/core/session-state.js";
import { TOOLS } from "./harness.js";
import { live, texts, turnEnds } from "./sessions.js";

const SAY = { ...TOOLS, lookup_faq: { ...TOOLS.lookup_faq!, progress: "say" as const } };

/** A turn whose model called lookup_faq and ended its turn (the 2.5 race): the call runs. */
function callRunning(config: Parameters<typeof live>[0] = {}) {
  const h = live({ tools: SAY, ...config });
  h.input({ type: "client_text", clientId: "phone", text: "what are your hours?" });
  h.model({ type: "text_delta", text: "Let me check." });
  h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
  h.model({ type: "turn_complete" });
  return h;
}

const nudges = (h: ReturnType<typeof live>) =>
  h.sentToModel.filter((c) => c.type === "nudge" && /still working/.test(c.text));

describe("progress of a long call", () => {
  it("every report reaches the clients as tool_progress; never a result", () => {
    const h = callRunning({ tools: TOOLS });
    h.input({ type: "tool_progress", callId: "c1", progress: 1, total: 4, message: "reading" });
    h.input({ type: "tool_progress", callId: "c1", progress: 2, total: 4 });
    const frames = h.ephemeralFrames("phone").filter((f) => f.type === "tool_progress");
    expect(frames).toEqual([
      {
        type: "tool_progress",
        callId: "c1",
        name: "lookup_faq",
        progress: 1,
        total: 4,
        message: "reading",
      },
      { type: "tool_progress", callId: "c1", name: "lookup_faq", progress: 2, total: 4 },
    ]);
    // `tell` (the default): the model hears nothing of it.
    expect(nudges(h)).toEqual([]);
    expect(h.log.filter((e) => e.kind === "tool_result")).toEqual([]);
  });

  it("under progress: say, the model is asked once, unseen by clients", () => {
    const h = callRunning();
    h.input({ type: "tool_progress", callId: "c1", progress: 1 });
    h.input({ type: "tool_progress", callId: "c1", progress: 2 });
    expect(nudges(h)).toHaveLength(1);
    expect(h.traces).toContain("TOOL_PROGRESS_SAID");
    expect(JSON.stringify(h.durableFrames("phone"))).not.toContain("still working");
  });

  it("a report for a settled call, or an unknown one, is dropped", () => {
    const h = callRunning();
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
    h.input({ type: "tool_progress", callId: "c1", progress: 1 });
    h.input({ type: "tool_progress", callId: "nope", progress: 1 });
    expect(h.ephemeralFrames("phone").filter((f) => f.type === "tool_progress")).toEqual([]);
    expect(nudges(h)).toEqual([]);
  });

  it("words that it is still working, begun after the result came, are stale: not shown (found by the attack)", () => {
    const h = callRunning();
    h.input({ type: "tool_progress", callId: "c1", progress: 1 });
    // The result is ready before the model begins its few words.
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
    h.model({ type: "text_delta", text: "Still working on it." });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "We are open 9 to 5." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Let me check.", "We are open 9 to 5."]);
    expect(turnEnds(h)).toHaveLength(1);
    expect(h.traces).toContain("SUPPRESSED");
  });

  for (const control of [false, true])
    it(
      control
        ? "control: results taken as answered by the still-working words: their answer is suppressed"
        : "a result that comes while the model says it is still working is answered after, in its turn",
      () => {
        const h = callRunning(
          control ? { guards: { ...ALL_GUARDS, stillWorkingTakesNoResults: false } } : {},
        );
        h.input({ type: "tool_progress", callId: "c1", progress: 1 });
        h.model({ type: "text_delta", text: "Still working on it, " });
        // The result is ready while those words are said.
        h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
        h.model({ type: "text_delta", text: "one moment." });
        h.model({ type: "turn_complete" });
        // The model answers the result, as new input, after its few words.
        h.model({ type: "text_delta", text: "We are open 9 to 5." });
        h.model({ type: "turn_complete" });
        const said = texts(h).join(" ");
        if (control) {
          expect(said).not.toContain("9 to 5");
          return;
        }
        expect(said).toContain("We are open 9 to 5.");
        expect(turnEnds(h)).toHaveLength(1);
        expect(h.log.at(-1)).toMatchObject({ kind: "turn_complete", turnId: "t1" });
      },
    );

  it("an ask lost with its connection does not take the next connection's answer (soak seed 31337)", () => {
    const h = callRunning();
    h.input({ type: "tool_progress", callId: "c1", progress: 1 });
    // The result comes before the model says anything; then the connection drops, and the
    // turn, owed the result's words, is carried to the next one.
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9-5" } });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    expect(h.fireNextTimer()).toBe(true); // the reconnect backoff
    h.model({ type: "setup_complete" });
    // The new connection's answer is the carried turn's, not the old connection's ask.
    h.model({ type: "text_delta", text: "We are open 9 to 5." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Let me check.", "We are open 9 to 5."]);
    expect(turnEnds(h)).toHaveLength(1);
    expect(h.traces).not.toContain("SUPPRESSED");
  });
});
