/** Barge-in: new input during a reply ends that turn as interrupted and the next gets its answer. */
import { describe, expect, it } from "vitest";
import { greetWithLateChips, live, turnEnds } from "./sessions.js";

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

  // Found by the black-box attack.
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
