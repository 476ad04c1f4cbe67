/**
 * A model without turns (GPT-Live, issue 31): nothing on its wire ends what it says. Its
 * utterance ends where the user's speech begins (its adapter says `turn_complete`), where a
 * line is typed after it, or once it stays quiet (UTTERANCE_QUIET_MS) — complete, never an
 * error: a delivered answer never ends its turn with one. Control: the same model taken as one
 * with turns ends the quiet answer's turn with `model_timeout`.
 */
import { describe, expect, it } from "vitest";
import { UTTERANCE_QUIET_MS } from "../../../src/core/core-config.js";
import { GPT_LIVE_CAPABILITIES } from "../../../src/providers/gpt-live/adapter.js";
import type { Harness } from "./harness.js";
import { live, turnEnds, userTurns } from "./sessions.js";

/** What the model said, as clients saw it (a voice model's words come as transcript). */
const texts = (h: Harness) =>
  h.durableFrames("phone").flatMap((f) => (f.type === "transcript" ? [f.text] : []));
const errors = (h: Harness) =>
  h.durableFrames("phone").flatMap((f) => (f.type === "error" ? [f.code] : []));

function gptLive(turnless = true): Harness {
  return live({ capabilities: { ...GPT_LIVE_CAPABILITIES, turnless } });
}

/** Fires timers until none is due (at most `max`). */
function settle(h: Harness, max = 8): void {
  for (let i = 0; i < max && h.fireNextTimer(); i++);
}

describe("an utterance of a turnless model", () => {
  it("that nobody speaks after ends complete once the model is quiet, with no error", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What time is it?" });
    h.model({ type: "transcript_delta", text: "It is noon." });
    h.advance(UTTERANCE_QUIET_MS - 1);
    expect(turnEnds(h)).toEqual([]);
    settle(h);
    expect(texts(h)).toEqual(["It is noon."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errors(h)).toEqual([]);
  });

  it("control: the same quiet answer on a model with turns ends its turn with model_timeout", () => {
    const h = gptLive(false);
    h.input({ type: "client_text", clientId: "phone", text: "What time is it?" });
    h.model({ type: "transcript_delta", text: "It is noon." });
    settle(h);
    expect(errors(h)).toContain("model_timeout");
  });

  it("goes on while the model keeps speaking: each sign moves the quiet deadline", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Tell me a story." });
    for (let i = 0; i < 5; i++) {
      h.model({ type: "transcript_delta", text: `Part ${i}. ` });
      h.advance(UTTERANCE_QUIET_MS - 100);
    }
    expect(turnEnds(h)).toEqual([]);
    settle(h);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(texts(h).join("")).toBe("Part 0. Part 1. Part 2. Part 3. Part 4. ");
  });

  it("a line typed after it ends it complete (not interrupted), and is the next turn", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    h.model({ type: "transcript_delta", text: "Hello! How can I help?" });
    h.input({ type: "client_text", clientId: "phone", text: "Opening hours?" });
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(userTurns(h).map(([, text]) => text)).toEqual(["Hi", "Opening hours?"]);
    expect(errors(h)).toEqual([]);
  });

  it("the user's speech after it (the adapter's turn_complete) opens a voice turn for the model's next words", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    h.model({ type: "transcript_delta", text: "Hello!" });
    h.model({ type: "turn_complete", reason: "yielded" });
    h.model({ type: "speech_started" });
    h.model({ type: "input_transcript", text: "what's the weather", finished: false });
    h.model({ type: "transcript_delta", text: "Sunny." });
    settle(h);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete", "turn_complete"]);
    expect(userTurns(h).map(([, text]) => text)).toEqual(["Hi", "what's the weather"]);
    expect(texts(h)).toEqual(["Hello!", "Sunny."]);
    expect(errors(h)).toEqual([]);
  });
});
