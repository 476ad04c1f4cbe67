/**
 * Whose answer a reply is: known where liveline caused the response (OpenAI), and never
 * judged by its words where the input says again what an earlier one said (issue 28).
 */
import { describe, expect, it } from "vitest";
import { OPENAI_CAPABILITIES } from "../../../src/providers/openai/adapter.js";
import type { Harness } from "./harness.js";
import { greetWithLateChips, live, texts, turnEnds } from "./sessions.js";

/** Each line asked in turn, the same words answered each time; the turns' ends and errors. */
function ask(h: Harness, lines: string[], answer: string) {
  for (const line of lines) {
    h.input({ type: "client_text", clientId: "phone", text: line });
    h.model({ type: "text_delta", text: answer });
    h.model({ type: "turn_complete" });
  }
  return {
    ends: turnEnds(h).map((f) => [f.turnId, f.type]),
    errors: h.durableFrames("phone").flatMap((f) => (f.type === "error" ? [f.code] : [])),
  };
}

describe("the same question asked twice gets the same answer, and that is no error", () => {
  const wires = [
    // Every response answers the input that asked for it: no judgement on words at all.
    ["OpenAI", OPENAI_CAPABILITIES],
    // A model that may act on its own: a line said again is still never judged.
    ["Gemini", undefined],
  ] as const;
  for (const [wire, capabilities] of wires) {
    it(`${wire}: the same line twice, the same words twice: each turn ends at once, as answered`, () => {
      const h = live(capabilities === undefined ? {} : { capabilities });
      greetWithLateChips(h, "Hello! Here are some topics.");
      const { ends, errors } = ask(
        h,
        ["Tell me a story", "Tell me a story"],
        "Once upon a time, the end.",
      );
      // No grace for "another answer", no nudge, no error.
      expect(ends).toEqual([
        ["t1", "turn_complete"],
        ["t2", "turn_complete"],
        ["t3", "turn_complete"],
      ]);
      expect(errors).toEqual([]);
      expect(h.traces).not.toContain("REPEATED_REPLY");
      expect(h.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
    });
  }

  it("control: the same on a record that allows regenerations judges the second answer", () => {
    const h = live({ capabilities: { ...OPENAI_CAPABILITIES, responsesOnRequest: false } });
    greetWithLateChips(h, "Hello! Here are some topics.");
    const { ends } = ask(
      h,
      ["Tell me a story", "Tell me that story again"],
      "Once upon a time, the end.",
    );
    expect(h.traces).toContain("REPEATED_REPLY");
    expect(ends).toHaveLength(2); // t3 waits a grace for another answer
  });

  it("Gemini: the same tool result again, answered with the same words, is no regeneration", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Here are some topics.");
    for (const [line, id] of [
      ["What is included in the fare?", "f1"],
      ["Sorry, what was included?", "f2"],
    ] as const) {
      h.input({ type: "client_text", clientId: "phone", text: line });
      h.model({ type: "tool_call", calls: [{ id, name: "lookup_faq", args: { q: "fare" } }] });
      h.input({ type: "tool_outcome", callId: id, result: { included: "a bag and a seat" } });
      h.model({ type: "text_delta", text: "The fare includes a bag and a seat." });
      h.model({ type: "turn_complete" });
    }
    expect(turnEnds(h).map((f) => [f.turnId, f.type])).toEqual([
      ["t1", "turn_complete"],
      ["t2", "turn_complete"],
      ["t3", "turn_complete"],
    ]);
    expect(h.traces).not.toContain("REPEATED_REPLY");
    expect(texts(h).slice(-2)).toEqual([
      "The fare includes a bag and a seat.",
      "The fare includes a bag and a seat.",
    ]);
  });

  it("Gemini: once a regeneration is recognised, later silent results are withheld from that model", () => {
    const h = live();
    greetWithLateChips(h, "Hello! Here are some topics.");
    // The model, ignoring SILENT, says its greeting again in the next line's slot.
    ask(h, ["what can you do?"], "Hello! Here are some topics.");
    expect(h.traces).toContain("REPEATED_REPLY");
    h.fireNextTimer(); // the grace: the repeat was all the turn got
    const sent = h.sentToModel.length;
    h.input({ type: "client_text", clientId: "phone", text: "more topics" });
    h.model({ type: "text_delta", text: "Here are more." });
    h.model({ type: "tool_call", calls: [{ id: "c9", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c9", result: { chips: [] } });
    // Its record says SILENT is honoured; the session saw otherwise: nothing is sent for it.
    expect(h.sentToModel.slice(sent).filter((c) => c.type === "tool_responses")).toEqual([]);
    expect(h.traces).toContain("TOOL_RESULT_WITHHELD");
  });
});
