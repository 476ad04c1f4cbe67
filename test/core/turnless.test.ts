/**
 * A model without turns (GPT-Live, issue 31): nothing on its wire ends what it says. Its
 * utterance ends where the user's speech begins (its adapter says `turn_complete`), where a
 * line is typed after it, or once it stays quiet (UTTERANCE_QUIET_MS) — complete, never an
 * error: a delivered answer never ends its turn with one. Control: the same model taken as one
 * with turns ends the quiet answer's turn with `model_timeout`.
 */
import { describe, expect, it } from "vitest";
import { ALL_GUARDS, UTTERANCE_QUIET_MS } from "../../src/core/core-config.js";
import { GPT_LIVE_CAPABILITIES } from "../../src/providers/gpt-live/adapter.js";
import type { Harness } from "./harness.js";
import { errorCodes, live, toolResponses, turnEnds, userTurns } from "./sessions.js";

/** What the model said, as clients saw it (a voice model's words come as transcript). */
const texts = (h: Harness) =>
  h.durableFrames("phone").flatMap((f) => (f.type === "transcript" ? [f.text] : []));

function gptLive(turnless = true): Harness {
  return live({ capabilities: { ...GPT_LIVE_CAPABILITIES, turnless } });
}

/**
 * The model's reply to what turn `turnId` asked, as the adapter reads the backend response
 * liveline's `response.create` started (every line's answer comes so): ready, and done on the
 * wire (its text is written; the voice says it after, in the transcript that follows).
 */
function replyFor(h: Harness, turnId: string): void {
  h.model({ type: "reply_ready", turnId });
  h.model({ type: "reply_done" });
}

/** A backend response that is only calls: over at its calls (the reply liveline asked for). */
function callsOnly(h: Harness, turnId: string, calls: { id: string; name: string }[]): void {
  h.model({ type: "reply_ready", turnId });
  h.model({ type: "tool_call", calls: calls.map((c) => ({ ...c, args: {} })) });
  h.model({ type: "reply_done" });
}

/** Fires timers until none is due (at most `max`). */
function settle(h: Harness, max = 8): void {
  for (let i = 0; i < max && h.fireNextTimer(); i++);
}

describe("an utterance of a turnless model", () => {
  it("that nobody speaks after ends complete once the model is quiet, with no error", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What time is it?" });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "It is noon." });
    h.advance(UTTERANCE_QUIET_MS - 1);
    expect(turnEnds(h)).toEqual([]);
    settle(h);
    expect(texts(h)).toEqual(["It is noon."]);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("control: the same quiet answer on a model with turns ends its turn with model_timeout", () => {
    const h = gptLive(false);
    h.input({ type: "client_text", clientId: "phone", text: "What time is it?" });
    h.model({ type: "transcript_delta", text: "It is noon." });
    settle(h);
    expect(errorCodes(h)).toContain("model_timeout");
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

  it("a line typed after it waits for it to be over, which ends it complete (not interrupted), and is the next turn", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "Hello! How can I help?" });
    h.input({ type: "client_text", clientId: "phone", text: "Opening hours?" });
    expect(turnEnds(h)).toEqual([]);
    h.advance(UTTERANCE_QUIET_MS);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(userTurns(h).map(([, text]) => text)).toEqual(["Hi", "Opening hours?"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("the user's speech after it (the adapter's turn_complete) opens a voice turn for the model's next words", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "Hello!" });
    h.model({ type: "turn_complete", reason: "yielded" });
    h.model({ type: "speech_started" });
    h.model({ type: "input_transcript", text: "what's the weather", finished: false });
    h.model({ type: "transcript_delta", text: "Sunny." });
    settle(h);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete", "turn_complete"]);
    expect(userTurns(h).map(([, text]) => text)).toEqual(["Hi", "what's the weather"]);
    expect(texts(h)).toEqual(["Hello!", "Sunny."]);
    expect(errorCodes(h)).toEqual([]);
  });
});

describe("lines typed while a turnless model answers (nothing it says can be cut)", () => {
  /** Each turn's words, as clients saw them: turn id → what was said in it. */
  const saidIn = (h: Harness) => {
    const said: Record<string, string> = {};
    for (const f of h.durableFrames("phone"))
      if (f.type === "transcript") said[f.turnId] = (said[f.turnId] ?? "") + f.text;
    return said;
  };
  const linesSent = (h: Harness) =>
    h.sentToModel.flatMap((c) => (c.type === "user_text" ? [c.text] : []));
  const ends = (h: Harness) => turnEnds(h).map((f) => `${f.turnId}:${f.type}`);

  /** A line, a second one typed `gapMs` later, then the first one's answer, said in real time. */
  function twoLines(h: Harness, gapMs: number): void {
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.advance(gapMs);
    h.input({ type: "client_text", clientId: "phone", text: "Do you deliver?" });
    replyFor(h, "t1");
    h.model({
      type: "transcript_delta",
      text: "We open at nine. ",
      span: { startMs: 0, endMs: 2000 },
    });
    h.advance(2000 + UTTERANCE_QUIET_MS);
    replyFor(h, "t2");
    h.model({
      type: "transcript_delta",
      text: "Yes, we deliver.",
      span: { startMs: 4000, endMs: 5000 },
    });
    settle(h);
  }

  it("a line typed before the answer to the one before began waits for that answer: each in its own turn, both complete", () => {
    const h = gptLive();
    twoLines(h, 200);
    expect(saidIn(h)).toEqual({ t1: "We open at nine. ", t2: "Yes, we deliver." });
    expect(ends(h)).toEqual(["t1:turn_complete", "t2:turn_complete"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("the waiting line reaches the model once the answer before it is over, not before", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.input({ type: "client_text", clientId: "phone", text: "Do you deliver?" });
    expect(linesSent(h)).toEqual(["What are your hours?"]);
    replyFor(h, "t1");
    h.model({
      type: "transcript_delta",
      text: "We open at nine. ",
      span: { startMs: 0, endMs: 2000 },
    });
    h.advance(2000 + UTTERANCE_QUIET_MS - 1);
    expect(linesSent(h)).toEqual(["What are your hours?"]);
    h.advance(1);
    expect(linesSent(h)).toEqual(["What are your hours?", "Do you deliver?"]);
    expect(ends(h)).toEqual(["t1:turn_complete"]);
  });

  it("control: a line that cuts the turn leaves the answer it was given (which the user hears: nothing cuts this model) in no turn", () => {
    const h = live({
      capabilities: GPT_LIVE_CAPABILITIES,
      guards: { ...ALL_GUARDS, answersKeepTheirTurn: false },
    });
    twoLines(h, 200);
    expect(ends(h)[0]).toBe("t1:interrupted");
    expect(Object.values(saidIn(h)).join("")).not.toContain("We open at nine.");
    // Each reply names its request: the cut turn's is never taken for the line's.
    expect(saidIn(h).t2).toBe("Yes, we deliver.");
  });

  it("lines typed while an answer is said go together once it is over, the last one answered", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "Hello! ", span: { startMs: 0, endMs: 1000 } });
    h.input({ type: "client_text", clientId: "phone", text: "one" });
    h.input({ type: "client_text", clientId: "phone", text: "two" });
    expect(linesSent(h)).toEqual(["Hi"]);
    h.advance(1000 + UTTERANCE_QUIET_MS);
    expect(linesSent(h)).toEqual(["Hi", "one\ntwo"]);
    replyFor(h, "t3");
    h.model({ type: "transcript_delta", text: "Both noted." });
    h.advance(UTTERANCE_QUIET_MS);
    expect(saidIn(h)).toEqual({ t1: "Hello! ", t3: "Both noted." });
    expect(ends(h)).toEqual(["t1:turn_complete", "t2:interrupted", "t3:turn_complete"]);
  });

  it("a line typed while the turn only waits on its call cuts it: the call is cancelled, as on any model", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    callsOnly(h, "t1", [{ id: "c1", name: "lookup_faq" }]);
    h.input({ type: "client_text", clientId: "phone", text: "Never mind." });
    expect(linesSent(h)).toEqual(["What are your hours?", "Never mind."]);
    expect(ends(h)).toEqual(["t1:interrupted"]);
  });

  it("a line typed while the answer is said, its call running, waits for the words to be over (found by the attack)", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "reply_ready", turnId: "t1" });
    h.model({ type: "transcript_delta", text: "Let me ", span: { startMs: 0, endMs: 1000 } });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "reply_done" });
    h.advance(300);
    h.input({ type: "client_text", clientId: "phone", text: "And on Sunday?" });
    expect(linesSent(h)).toEqual(["What are your hours?"]);
    h.advance(500);
    h.model({ type: "transcript_delta", text: "check.", span: { startMs: 1000, endMs: 2000 } });
    expect(ends(h)).toEqual([]);
    // Its words are over: the turn only waits on its call, and the line cuts it (at the
    // latest when the line's wait is up).
    h.advance(h.state.config.speechAnswerWaitMs);
    expect(linesSent(h)).toEqual(["What are your hours?", "And on Sunday?"]);
    expect(saidIn(h)).toEqual({ t1: "Let me check." });
    expect(ends(h)).toEqual(["t1:interrupted"]);
  });

  /**
   * As GPT-Live's face sends it: the backend writes the reply's words and its call, and its
   * response ends; the voice says the words after. `words`: reply_ready says words come.
   */
  function wordsAfterCalls(words: boolean): Harness {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "reply_ready", turnId: "t1", words });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "reply_done" });
    h.advance(300);
    h.input({ type: "client_text", clientId: "phone", text: "And on Sunday?" });
    h.advance(700);
    h.model({ type: "transcript_delta", text: "Let me ", span: { startMs: 0, endMs: 1000 } });
    h.advance(1000);
    h.model({ type: "transcript_delta", text: "check.", span: { startMs: 1000, endMs: 2000 } });
    h.advance(h.state.config.speechAnswerWaitMs);
    return h;
  }

  it("a line typed before the voice says the reply's words (written before its calls) waits for them (found by the attack)", () => {
    const h = wordsAfterCalls(true);
    expect(saidIn(h)).toEqual({ t1: "Let me check." });
    expect(ends(h)).toEqual(["t1:interrupted"]);
    expect(linesSent(h)).toEqual(["What are your hours?", "And on Sunday?"]);
  });

  it("control: not told words come, the line cuts the turn at its calls and the words land in the line's turn", () => {
    const h = wordsAfterCalls(false);
    expect(saidIn(h).t2).toBe("Let me check.");
  });

  it("a line typed while the model speaks on its own waits for it to be over", () => {
    const h = gptLive();
    h.model({
      type: "transcript_delta",
      text: "Are you still there? ",
      span: { startMs: 0, endMs: 1500 },
    });
    h.input({ type: "client_text", clientId: "phone", text: "Yes." });
    expect(linesSent(h)).toEqual([]);
    h.advance(1500 + UTTERANCE_QUIET_MS);
    expect(linesSent(h)).toEqual(["Yes."]);
    expect(ends(h)).toEqual(["t1:turn_complete"]);
  });
});

describe("the end of a turnless model's speech, read from its timeline", () => {
  /** A piece of the model's speech over `[startMs, endMs)` of its timeline, come just now. */
  function piece(h: Harness, text: string, startMs: number, endMs: number, spans: boolean) {
    h.model({
      type: "transcript_delta",
      text,
      ...(spans ? { span: { startMs, endMs } } : {}),
    });
  }

  /** One answer said in pieces of 1,750 ms, each sent as it begins (past the quiet apart). */
  function paced(spans: boolean): Harness {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Tell me a story." });
    replyFor(h, "t1");
    const gap = UTTERANCE_QUIET_MS + 250;
    for (let i = 0; i < 4; i++) {
      piece(h, `Part ${i}. `, i * gap, (i + 1) * gap, spans);
      // Timers due before the next piece fire (an utterance over between pieces ends there).
      h.advance(gap);
    }
    settle(h);
    return h;
  }

  it("an answer whose pieces come further apart than the quiet, each as long as the gap, is one turn", () => {
    const h = paced(true);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    expect(texts(h).join("")).toBe("Part 0. Part 1. Part 2. Part 3. ");
    expect(userTurns(h).map(([, text]) => text)).toEqual(["Tell me a story."]);
  });

  it("control: without the timeline the same answer is split into turns at each gap", () => {
    const h = paced(false);
    expect(turnEnds(h).length).toBeGreaterThan(1);
  });

  it("pieces sent ahead of the speech in one burst: over at the quiet after the burst", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Tell me a story." });
    replyFor(h, "t1");
    // The first piece is taken as said in real time (nothing shows the pace yet); the rest,
    // come in the same instant, show a pace of 0: the burst is the whole of what is said.
    for (let i = 0; i < 4; i++) piece(h, `Part ${i}. `, i * 2000, (i + 1) * 2000, true);
    h.advance(UTTERANCE_QUIET_MS - 1);
    expect(turnEnds(h)).toEqual([]);
    h.advance(1);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
  });

  it("a single piece said in real time: over at the quiet after its end, not before", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    replyFor(h, "t1");
    piece(h, "Hello there, how are you today? ", 0, 3000, true);
    h.advance(3000 + UTTERANCE_QUIET_MS - 1);
    expect(turnEnds(h)).toEqual([]);
    h.advance(1);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
  });
});

describe("words a turnless model says on its own", () => {
  /** The user frames that opened turns, with how (`source` is set only for the model's own). */
  const opened = (h: Harness) =>
    h
      .durableFrames("phone")
      .flatMap((f) => (f.type === "user" ? [[f.turnId, f.text, f.source ?? "input"]] : []));

  it("after its utterance ended are delivered in a turn of their own, which ends complete once quiet", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "Hello!" });
    settle(h);
    expect(turnEnds(h).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
    h.advance(20_000);
    h.model({ type: "transcript_delta", text: "Are you still there?" });
    expect(opened(h)).toEqual([
      ["t1", "Hi", "input"],
      ["t2", "", "model"],
    ]);
    settle(h);
    expect(texts(h)).toEqual(["Hello!", "Are you still there?"]);
    const t2 = h.durableFrames("phone").filter((f) => f.type === "transcript" && f.turnId === "t2");
    expect(t2).toHaveLength(1);
    expect(turnEnds(h).map((f) => `${f.turnId}:${f.type}`)).toEqual([
      "t1:turn_complete",
      "t2:turn_complete",
    ]);
    expect(errorCodes(h)).toEqual([]);
    // The user answers it: their line is the next turn, answered in it.
    h.input({ type: "client_text", clientId: "phone", text: "Yes, sorry." });
    replyFor(h, "t3");
    h.model({ type: "transcript_delta", text: "No problem." });
    settle(h);
    expect(opened(h).at(-1)).toEqual(["t3", "Yes, sorry.", "input"]);
    expect(
      turnEnds(h)
        .map((f) => `${f.turnId}:${f.type}`)
        .at(-1),
    ).toBe("t3:turn_complete");
  });

  it("while a turn is open and owed nothing more are that turn's", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "Book a table" });
    h.model({ type: "transcript_delta", text: "One moment." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "get_user_profile", args: {} }] });
    settle(h, 1);
    h.model({ type: "transcript_delta", text: "Still looking." });
    const words = h.durableFrames("phone").filter((f) => f.type === "transcript");
    expect(words.map((f) => `${f.turnId}:${f.text}`)).toEqual([
      "t1:One moment.",
      "t1:Still looking.",
    ]);
    expect(opened(h)).toHaveLength(1);
  });

  it("control: the same words from a model with turns, asked for by nobody, are suppressed", () => {
    const h = gptLive(false);
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    h.model({ type: "transcript_delta", text: "Hello!" });
    h.model({ type: "turn_complete" });
    h.advance(20_000);
    h.model({ type: "transcript_delta", text: "Are you still there?" });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Hello!"]);
    expect(opened(h)).toHaveLength(1);
  });
});

describe("results a turnless model is sent while it speaks (GPT-Live delegation)", () => {
  /**
   * A line, the voice's "let me check" while its backend calls a tool, the result sent as the
   * voice goes on talking, and the reply it asks for (`reply_ready`) `replyAfterMs` later.
   */
  function lookup(h: Harness, replyAfterMs: number, pause: boolean): void {
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "transcript_delta", text: "Let me check. " });
    callsOnly(h, "t1", [{ id: "c1", name: "lookup_faq" }]);
    h.input({ type: "tool_outcome", callId: "c1", result: { hours: "9 to 5" } });
    h.model({ type: "transcript_delta", text: "Just a moment. " });
    if (pause) h.advance(replyAfterMs);
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "We open at nine." });
    h.model({ type: "reply_done" });
    settle(h);
  }

  it("are answered in their turn by the reply they ask for, however slow it is", () => {
    const h = gptLive();
    lookup(h, 20_000, true);
    expect(toolResponses(h)).toHaveLength(1);
    expect(userTurns(h).map(([id]) => id)).toEqual(["t1"]);
    expect(texts(h).join("")).toBe("Let me check. Just a moment. We open at nine.");
    expect(turnEnds(h).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
    expect(errorCodes(h).filter((code) => code !== "model_slow")).toEqual([]);
  });

  it("a reply the voice runs into without a pause takes the turn's slot: no false timeout", () => {
    const h = gptLive();
    lookup(h, 0, false);
    expect(turnEnds(h).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("control: taken as answered by the voice's next words, the turn ends before its reply, which comes as the model's own", () => {
    const h = live({
      capabilities: GPT_LIVE_CAPABILITIES,
      guards: { ...ALL_GUARDS, resultsAwaitTheirReply: false },
    });
    lookup(h, 20_000, true);
    expect(userTurns(h).map(([id]) => id)).toEqual(["t1", "t2"]);
  });
});

describe("a spoken result whose batch has a call still running (GPT-Live's backend needs every output)", () => {
  /** A greeting that speaks a lookup and shows chips: the chips' client call is slow. */
  function greeting(legacyWait: boolean): Harness {
    const capabilities = legacyWait
      ? { ...GPT_LIVE_CAPABILITIES, answersCancelledCalls: false }
      : GPT_LIVE_CAPABILITIES;
    const h = live({ capabilities, modelTimeoutMs: 2_000 });
    h.input({ type: "client_text", clientId: "phone", text: "Hi" });
    callsOnly(h, "t1", [
      { id: "c1", name: "suggest_topics" },
      { id: "c2", name: "lookup_faq" },
    ]);
    h.input({ type: "tool_outcome", callId: "c2", result: { hours: "9 to 5" } });
    // The client shows its chips 9 s later: until then the backend cannot reply.
    h.advance(9_000);
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: {} });
    replyFor(h, "t1");
    h.model({ type: "transcript_delta", text: "We open at nine." });
    settle(h);
    return h;
  }

  it("waits on that call, not on the model: no model_slow, no model_timeout, the result spoken in its turn", () => {
    const h = greeting(false);
    expect(errorCodes(h)).toEqual([]);
    expect(texts(h)).toEqual(["We open at nine."]);
    expect(turnEnds(h).map((f) => `${f.turnId}:${f.type}`)).toEqual(["t1:turn_complete"]);
  });

  it("control: taken as waiting on the model, the turn is told the model is slow, and nudged (a request the service refuses while an output is missing)", () => {
    const h = greeting(true);
    expect(errorCodes(h)).toContain("model_slow");
  });
});

describe("side-effect results on a turnless model (GPT-Live's backend stops at its calls)", () => {
  const schedulingOf = (h: Harness) =>
    toolResponses(h).flatMap((c) => c.responses.map((r) => `${r.callId}:${r.scheduling}`));

  const saved = (h: Harness, id: string) =>
    h.input({ type: "tool_outcome", callId: id, result: { saved: true } });

  it("while its turn is open, a result lets the reply go on (WHEN_IDLE); after it, context only", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "I like tea." });
    h.model({ type: "transcript_delta", text: "Noted. " });
    callsOnly(h, "t1", [
      { id: "c1", name: "set_preference" },
      { id: "c2", name: "set_preference" },
    ]);
    saved(h, "c1");
    settle(h);
    expect(turnEnds(h).map((f) => f.type)).toEqual(["turn_complete"]);
    saved(h, "c2");
    expect(schedulingOf(h)).toEqual(["c1:when_idle", "c2:silent"]);
    // The turn waited for nothing more: it ended at the quiet, with no error.
    expect(errorCodes(h)).toEqual([]);
  });

  it("control: a model with turns gets it SILENT, its turn open or not", () => {
    const h = gptLive(false);
    h.input({ type: "client_text", clientId: "phone", text: "I like tea." });
    h.model({ type: "transcript_delta", text: "Noted. " });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "set_preference", args: {} }] });
    saved(h, "c1");
    expect(schedulingOf(h)).toEqual(["c1:silent"]);
  });
});

describe("the delegation ledger (GPT-Live)", () => {
  const ledger = (h: Harness) =>
    h
      .durableFrames("phone")
      .flatMap((f) =>
        f.type === "delegation"
          ? [`delegation:${f.delegationId}:${f.turnId}`]
          : f.type === "tool_call"
            ? [`tool_call:${f.callId}`]
            : [],
      );

  it("records each delegation once, in its turn, before its calls, however often it is announced", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "transcript_delta", text: "Let me check. " });
    h.model({ type: "delegation", id: "dlg_1", target: "responses" });
    // Announced again (a duplicate delivery, or the other connection of a direct call).
    h.model({ type: "delegation", id: "dlg_1", target: "responses" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.model({ type: "delegation", id: "dlg_1", target: "responses" });
    expect(ledger(h)).toEqual(["delegation:dlg_1:t1", "tool_call:c1"]);
    expect(h.traces).toContain("DUPLICATE_DELEGATION");
  });

  it("control: without the ledger's dedupe every announcement is recorded", () => {
    const h = live({
      capabilities: GPT_LIVE_CAPABILITIES,
      guards: { ...ALL_GUARDS, dedupeCalls: false },
    });
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    h.model({ type: "delegation", id: "dlg_1", target: "responses" });
    h.model({ type: "delegation", id: "dlg_1", target: "responses" });
    expect(ledger(h)).toEqual(["delegation:dlg_1:t1", "delegation:dlg_1:t1"]);
  });
});

describe("a call cancelled on a wire that needs an output for every call (GPT-Live)", () => {
  const cancelledOutputs = (h: Harness) =>
    h.sentToModel.flatMap((c) =>
      c.type === "tool_responses"
        ? c.responses.filter((r) => r.error?.startsWith("cancelled"))
        : [],
    );

  it("is told to the model as a silent 'cancelled' output, before the line that cut it", () => {
    const h = gptLive();
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    callsOnly(h, "t1", [{ id: "c1", name: "lookup_faq" }]);
    h.input({ type: "client_text", clientId: "phone", text: "Never mind." });
    expect(cancelledOutputs(h)).toEqual([
      { callId: "c1", name: "lookup_faq", error: "cancelled: barge_in", scheduling: "silent" },
    ]);
    const order = h.sentToModel.map((c) => c.type);
    expect(order.lastIndexOf("tool_responses")).toBeLessThan(order.lastIndexOf("user_text"));
    expect(h.durableFrames("phone").filter((f) => f.type === "tool_cancelled")).toHaveLength(1);
  });

  it("control: a model whose wire needs none is sent nothing for it", () => {
    const h = live({ capabilities: { ...GPT_LIVE_CAPABILITIES, answersCancelledCalls: false } });
    h.input({ type: "client_text", clientId: "phone", text: "What are your hours?" });
    callsOnly(h, "t1", [{ id: "c1", name: "lookup_faq" }]);
    h.input({ type: "client_text", clientId: "phone", text: "Never mind." });
    expect(cancelledOutputs(h)).toEqual([]);
  });
});
