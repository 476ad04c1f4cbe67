/** Typed lines held for the answer to speech, and lines typed over one another joined as one input. */
import { describe, expect, it } from "vitest";
import { ALL_GUARDS } from "../../src/core/session-state.js";
import { Harness } from "./harness.js";
import { chunk, live, turnEnds } from "./sessions.js";

// Found by the black-box attack (fourth round).
describe("a typed line held for the answer to speech", () => {
  it("audio_end with no audio before it holds no typed line", () => {
    const h = live();
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).not.toContain("LINE_HELD");
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "hi" });
  });

  // Found by the black-box attack of 2026-11-29: held for 4 s after the voice turn ended.
  it("a line typed right after a voice turn ended, with no audio_end, is not held: that speech was answered", () => {
    const h = live();
    for (let i = 0; i < 5; i++) {
      h.clientAudio("phone", chunk);
      h.advance(20);
    }
    h.model({ type: "input_transcript", text: "what can you do", finished: true });
    h.model({ type: "text_delta", text: "Plenty." });
    h.model({ type: "turn_complete" });
    h.advance(100);
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).not.toContain("LINE_HELD");
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "hi" });
  });

  it("control: audio after the voice turn opened still holds a line typed while it goes on", () => {
    const h = live();
    h.clientAudio("phone", chunk);
    h.model({ type: "input_transcript", text: "what can you do", finished: true });
    h.model({ type: "text_delta", text: "Plenty." });
    h.model({ type: "turn_complete" });
    // The user speaks again: speech the model has not answered.
    h.clientAudio("phone", chunk);
    h.advance(100);
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).toContain("LINE_HELD");
  });

  it("control: audio_end after audio holds the line for the speech's answer", () => {
    const h = live();
    h.clientAudio("phone", chunk);
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    expect(h.traces).toContain("LINE_HELD");
  });
});

// Found by the black-box attack of 2026-12-02 (round 3): a phone line streams its silence.
describe("a line typed while a phone line streams its silence", () => {
  const streamQuiet = (h: ReturnType<typeof live>, ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      h.input({ type: "client_audio", clientId: "phone", pcm: chunk, quiet: true });
      h.advance(20);
    }
  };

  for (const control of [false, true])
    it(
      control
        ? "control: without quietLineIsNoSpeech, the silence holds the line as if the caller spoke"
        : "is taken at once: the silence is no sign that the caller is speaking",
      () => {
        const h = live(control ? { guards: { ...ALL_GUARDS, quietLineIsNoSpeech: false } } : {});
        streamQuiet(h, 1000);
        h.input({ type: "client_text", clientId: "phone", text: "(keys 42 pressed on the phone)" });
        expect(h.traces.includes("LINE_HELD")).toBe(control);
      },
    );

  it("speech a moment before, in the same stream, still holds it for that speech's answer", () => {
    const h = live();
    streamQuiet(h, 500);
    h.clientAudio("phone", chunk);
    streamQuiet(h, 300);
    h.input({ type: "client_text", clientId: "phone", text: "(keys 42 pressed on the phone)" });
    expect(h.traces).toContain("LINE_HELD");
  });
});

// Found by the black-box attack on issue 10.
describe("lines typed over one another are joined", () => {
  it("lines typed over one another before the connection is set up: all reach the model, in order, as one input", () => {
    const h = new Harness();
    h.connect("phone");
    for (const text of ["one", "two", "three"]) {
      h.input({ type: "client_text", clientId: "phone", text });
    }
    h.model({ type: "setup_complete" });
    // Each line reaches the model (issue 28: the model was never told the first two); the
    // superseded turns end as the user typed over them, and say that their line went on.
    expect(h.sentToModel).toMatchObject([{ type: "user_text", text: "one\ntwo\nthree" }]);
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
});
