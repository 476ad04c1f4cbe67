/**
 * Found by the black-box attack on issue 10: speech right after an empty reply, a tool turn
 * cut by a connection move, an empty continuation on a model that waits for every result.
 */
import { describe, expect, it } from "vitest";
import { ALL_GUARDS } from "../../src/core/session-state.js";
import type { ModelCapabilities } from "../../src/vocabulary/model.js";
import { Harness } from "./harness.js";
import { errorCodes, live, texts, turnEnds, userTurns } from "./sessions.js";

/** Gemini 3.1: blocking calls only, no turn_complete before every result is in. */
const WAITS_FOR_RESULTS: ModelCapabilities = {
  nonBlockingCalls: false,
  resultScheduling: false,
  turnCompleteWaitsForResults: true,
  silentHonoured: false,
  responsesOnRequest: false,
};

const nudges = (h: Harness) => h.sentToModel.filter((c) => c.type === "nudge");
const endOf = (h: Harness, turnId: string) =>
  turnEnds(h)
    .filter((f) => f.turnId === turnId)
    .map((f) => (f.type === "interrupted" ? `interrupted:${f.reason}` : f.type));

/** "pricing?" → the model says a line, calls lookup_faq, gets the result, ends with nothing more. */
function emptyAfterLookup(h: Harness): void {
  h.input({ type: "client_text", clientId: "phone", text: "pricing?" });
  h.model({ type: "text_delta", text: "Let me look." });
  h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
  h.input({ type: "tool_outcome", callId: "c1", result: { answer: "12 euros" } });
  h.model({ type: "turn_complete" }); // nothing said after the result
}

describe("speech after the model ended a tool turn with nothing after the result", () => {
  it("the answer to the speech opens its own voice turn (the user's words are recorded)", () => {
    const h = live();
    emptyAfterLookup(h);
    h.model({ type: "input_transcript", text: "and refunds?", finished: true });
    h.model({ type: "text_delta", text: "Refunds take five days; the team plan is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([
      ["t1", "pricing?"],
      ["t2", "and refunds?"],
    ]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
    expect(endOf(h, "t2")).toEqual(["turn_complete"]);
    const t2 = h.durableFrames("phone").filter((f) => f.type === "text" && f.turnId === "t2");
    expect(t2).toHaveLength(1);
    expect(nudges(h)).toEqual([]);
  });

  it("speech that outlasts the grace gets no nudge into it; its answer still opens the voice turn", () => {
    const h = live();
    emptyAfterLookup(h);
    h.model({ type: "input_transcript", text: "and what about", finished: false });
    expect(h.fireNextTimer()).toBe(true); // the grace passes while the user speaks
    expect(nudges(h)).toEqual([]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
    h.model({ type: "input_transcript", text: " refunds?", finished: true });
    h.model({ type: "text_delta", text: "Refunds take five days." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h).at(-1)).toEqual(["t2", "and what about refunds?"]);
    expect(endOf(h, "t2")).toEqual(["turn_complete"]);
  });

  it("without speech the same empty reply is nudged once and answered in its own turn", () => {
    const h = live();
    emptyAfterLookup(h);
    expect(h.fireNextTimer()).toBe(true); // the grace: the follow-up may be slow
    expect(nudges(h)).toHaveLength(0);
    expect(h.fireNextTimer()).toBe(true); // emptyReplyWaitMs with no sign of work
    expect(nudges(h)).toHaveLength(1);
    h.model({ type: "text_delta", text: "It is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([["t1", "pricing?"]]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
  });
});

describe("a model that waits for every result (3.1): nothing after a side-effect result", () => {
  function greetingWithChips(h: Harness): void {
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello! I'm the assistant." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { chips: [] } });
    h.model({ type: "turn_complete" }); // the reply stops short after the result
  }

  // Issue 50: the greeting said five times on a blocking-only model. A turn that spoke, then
  // sent only silent results, is owed no more words: the end after them ends it.
  it("the turn spoke before its silent call: the end after the result ends it, no nudge", () => {
    const h = live({ capabilities: WAITS_FOR_RESULTS });
    greetingWithChips(h);
    expect(nudges(h)).toEqual([]);
    expect(h.traces).not.toContain("RETRY_EMPTY");
    expect(texts(h)).toEqual(["Hello! I'm the assistant."]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("control: taking the end after a silent result for an empty reply nudges the model", () => {
    const h = live({
      capabilities: WAITS_FOR_RESULTS,
      guards: { ...ALL_GUARDS, silentResultsOweNoWords: false },
    });
    greetingWithChips(h);
    expect(nudges(h)).toHaveLength(1);
    expect(h.traces).toContain("RETRY_EMPTY");
    expect(endOf(h, "t1")).toEqual([]);
  });

  it("a speak result on the same model is still owed its words: nudged, then said in the turn", () => {
    const h = live({ capabilities: WAITS_FOR_RESULTS });
    h.input({ type: "client_text", clientId: "phone", text: "pricing?" });
    h.model({ type: "text_delta", text: "Let me look." });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "12 euros" } });
    h.model({ type: "turn_complete" });
    expect(nudges(h)).toHaveLength(1);
    h.model({ type: "text_delta", text: "It is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Let me look.", "It is 12 euros."]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
  });

  it("control: on a model that may end its turn before the result (2.5), the turn just ends", () => {
    const h = live();
    greetingWithChips(h);
    expect(nudges(h)).toEqual([]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
  });
});

describe("a turn that waits only for the model to speak results it has, across a lost connection", () => {
  /** The follow-up is owed when the connection goes: the result was sent, nothing said since. */
  function resultOwedAtDrop(h: Harness): void {
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    emptyAfterLookup(h);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
  }

  it("is carried: the next connection is asked once, and the result is spoken in the same turn", () => {
    const h = live();
    resultOwedAtDrop(h);
    expect(turnEnds(h)).toEqual([]);
    expect(h.traces).toContain("TURN_CARRIED");
    expect(h.fireNextTimer()).toBe(true); // the reconnect backoff
    // The handle predates the result: the next connection is seeded from the log.
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "rebuild" },
    });
    expect(nudges(h)).toEqual([]);
    h.model({ type: "setup_complete" });
    expect(nudges(h)).toHaveLength(1);
    h.model({ type: "text_delta", text: "The team plan is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(texts(h)).toEqual(["Let me look.", "The team plan is 12 euros."]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
  });

  it("a goAway deadline that cuts the wait for the follow-up carries it too", () => {
    const h = live();
    emptyAfterLookup(h);
    h.model({ type: "go_away", timeLeftMs: 300 });
    while (h.state.upstream.phase === "live" && h.fireNextTimer()) {
      /* the grace, then the goAway deadline */
    }
    expect(endOf(h, "t1")).toEqual([]);
    h.model({ type: "setup_complete" });
    h.model({ type: "text_delta", text: "The team plan is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
    expect(texts(h).at(-1)).toBe("The team plan is 12 euros.");
  });

  it("lost a second time, it ends upstream_lost (carried once)", () => {
    const h = live();
    resultOwedAtDrop(h);
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
  });

  it("the user speaking during the reconnect wins: no nudge, the carried turn ends, the speech opens its turn", () => {
    const h = live();
    resultOwedAtDrop(h);
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.input({ type: "client_audio_end", clientId: "phone" });
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    expect(nudges(h)).toEqual([]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
    h.model({ type: "input_transcript", text: "and refunds?", finished: true });
    h.model({ type: "text_delta", text: "It is 12 euros; refunds take five days." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h).at(-1)).toEqual(["t2", "and refunds?"]);
    expect(endOf(h, "t2")).toEqual(["turn_complete"]);
  });

  it("a reply cut mid-stream is not carried (it was being spoken: asking again would repeat it)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "pricing?" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: {} }] });
    h.input({ type: "tool_outcome", callId: "c1", result: { answer: "12 euros" } });
    h.model({ type: "text_delta", text: "The team plan" });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
  });

  it("control: with carrying off, the same drop ends the turn and the result is never spoken", () => {
    const h = live({ guards: { ...ALL_GUARDS, carryTurns: false } });
    resultOwedAtDrop(h);
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    expect(nudges(h)).toEqual([]);
    expect(texts(h)).toEqual(["Let me look."]);
  });
});

describe("what the client played of an interrupted reply (the played frame)", () => {
  it("goes to the live model connection as audio_played; with none live, nowhere", () => {
    const h = live();
    h.input({ type: "client_played", clientId: "phone", ms: 1250 });
    expect(h.sentToModel.at(-1)).toEqual({ type: "audio_played", ms: 1250 });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    const sent = h.sentToModel.length;
    h.input({ type: "client_played", clientId: "phone", ms: 900 });
    expect(h.sentToModel).toHaveLength(sent);
    expect(h.state.outbox).toEqual([]);
  });
});

describe("a goAway with short notice while a reply is being spoken", () => {
  it("the move waits for the reply's end instead of cutting it at half the time left", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "pricing?" });
    h.model({ type: "text_delta", text: "The team plan" });
    h.model({ type: "go_away", timeLeftMs: 1000 });
    h.advance(500);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.model({ type: "text_delta", text: " is 12 euros." });
    h.model({ type: "turn_complete" });
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
    h.advance(500); // no fresh handle came: the deadline moves it
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(true);
    expect(texts(h)).toEqual(["The team plan", " is 12 euros."]);
  });

  it("a reply still running at the deadline itself is cut there, said so", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "pricing?" });
    h.model({ type: "text_delta", text: "The team plan" });
    h.model({ type: "go_away", timeLeftMs: 1000 });
    h.advance(1000);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(true);
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
  });
});

describe("a plain line answered with nothing at all", () => {
  it("ends with a visible empty_response error (no retry: there were no tool results)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    h.model({ type: "turn_complete" });
    const frames = h.durableFrames("phone");
    expect(frames.at(-2)).toMatchObject({ type: "error", code: "empty_response", turnId: "t1" });
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
    expect(nudges(h)).toEqual([]);
  });

  it("a turn whose reply is its tool calls alone is no empty reply", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { chips: [] } });
    expect(h.durableFrames("phone").some((f) => f.type === "error")).toBe(false);
  });
});

describe("speech the model has not answered yet, when its connection goes", () => {
  function spoke(h: Harness): void {
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.input({ type: "client_audio_end", clientId: "phone" });
  }

  it("a goAway move waits for its answer (the speech is in flight), then moves", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    spoke(h);
    h.model({ type: "go_away", timeLeftMs: 20_000 });
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.model({ type: "input_transcript", text: "what are your hours?", finished: true });
    h.model({ type: "text_delta", text: "Nine to five." });
    h.model({ type: "turn_complete" });
    h.model({ type: "resumption_update", handle: "h2", resumable: true });
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "resume", handle: "h2" },
    });
    expect(userTurns(h)).toEqual([["t1", "what are your hours?"]]);
  });

  it("lost with an abrupt drop, all of it kept: it goes again, with its end, and is answered", () => {
    const h = live();
    spoke(h);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    h.fireNextTimer();
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.slice(sentBefore)).toEqual([
      expect.objectContaining({ type: "user_audio" }),
      { type: "audio_end", held: true },
    ]);
    h.model({ type: "input_transcript", text: "what are your hours?", finished: true });
    h.model({ type: "text_delta", text: "Nine to five." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([["t1", "what are your hours?"]]);
    expect(h.durableFrames("phone").some((f) => f.type === "error")).toBe(false);
  });

  it("lost with an abrupt drop when only its tail is kept: said durably (speech_lost), never silently", () => {
    // The bound is one chunk: the speech's start is gone, its tail would be a wrong question.
    const h = live({ sentAudioMaxBytes: 640 });
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    spoke(h);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    expect(h.durableFrames("phone").find((f) => f.type === "error")).toMatchObject({
      code: "speech_lost",
      fatal: false,
    });
    h.fireNextTimer();
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.slice(sentBefore)).toEqual([]);
  });
});

// Found by the attack: the speech's answer took the line's place.
describe("a line typed right after the user spoke", () => {
  function spokeThenTyped(h: Harness): void {
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.input({ type: "client_text", clientId: "phone", text: "what next" });
  }

  /** The model answers the speech: its voice turn opens, the line cuts it and is answered. */
  function speechAnsweredThenLine(h: Harness): void {
    h.model({ type: "input_transcript", text: "What can you do?", finished: true });
    h.model({ type: "text_delta", text: "You said: What can you do?" });
    expect(userTurns(h)).toEqual([
      ["t1", "What can you do?"],
      ["t2", "what next"],
    ]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "what next" });
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "You said: what next" });
    h.model({ type: "turn_complete" });
    expect(endOf(h, "t2")).toEqual(["turn_complete"]);
  }

  it("waits for the speech's answer to open its voice turn, then interrupts it and gets its own answer", () => {
    const h = live();
    spokeThenTyped(h);
    expect(h.sentToModel.some((c) => c.type === "user_text")).toBe(false);
    expect(h.traces).toContain("LINE_HELD");
    speechAnsweredThenLine(h);
    const t2 = h.durableFrames("phone").filter((f) => f.type === "text" && f.turnId === "t2");
    expect(t2.map((f) => (f.type === "text" ? f.text : ""))).toEqual(["You said: what next"]);
    expect(h.traces).not.toContain("SUPPRESSED");
  });

  it("a line typed while the user is still speaking (before audio_end) waits the same way, and is answered (issue 28)", () => {
    // It opened its own turn at once; the voice turn then cut it and the line never got an
    // answer (3 of 3 in the attack).
    const h = live();
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.advance(20);
    h.input({ type: "client_text", clientId: "phone", text: "what next" });
    expect(h.traces).toContain("LINE_HELD");
    expect(h.sentToModel.some((c) => c.type === "user_text")).toBe(false);
    h.advance(20);
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.input({ type: "client_audio_end", clientId: "phone" });
    speechAnsweredThenLine(h);
    expect(h.traces).not.toContain("SUPPRESSED");
  });

  it("a line typed after the microphone went quiet (no audio for a while, no audio_end) goes at once", () => {
    const h = live();
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.advance(3_000);
    h.input({ type: "client_text", clientId: "phone", text: "what next" });
    expect(h.traces).not.toContain("LINE_HELD");
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "what next" });
  });

  it("the same while the connection opens: the speech waits in the outbox, the line waits for its answer (found by the attack)", () => {
    // Speech, its end and a line, all before the connection is set up: the line went into the
    // outbox behind the speech, so the speech's answer was taken for the line's and the line's
    // own answer was suppressed as unsolicited.
    const h = new Harness();
    h.connect("phone");
    spokeThenTyped(h);
    expect(h.traces).toContain("LINE_HELD");
    // The grace counts from when the speech reaches the model, not while it waits to.
    h.advance(5_000);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.map((c) => c.type)).toEqual(["user_audio", "audio_end"]);
    speechAnsweredThenLine(h);
    expect(h.traces).not.toContain("SUPPRESSED");
  });

  it("two lines typed while the speech waits: both wait, then each cuts the turn before it; both reach the model with the last, which is answered (found by the second attack; issue 28)", () => {
    // The second line released the first, so both went into the outbox behind the speech:
    // the speech's answer was taken for the second line's, its tool call run for it.
    const h = new Harness();
    h.connect("phone");
    spokeThenTyped(h);
    h.input({ type: "client_text", clientId: "phone", text: "and another" });
    expect(h.traces.filter((t) => t === "LINE_HELD")).toHaveLength(2);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.map((c) => c.type)).toEqual(["user_audio", "audio_end"]);
    h.model({ type: "input_transcript", text: "What can you do?", finished: true });
    h.model({ type: "text_delta", text: "You said: What can you do?" });
    expect(userTurns(h)).toEqual([
      ["t1", "What can you do?"],
      ["t2", "what next"],
      ["t3", "and another"],
    ]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
    expect(endOf(h, "t2")).toEqual(["interrupted:barge_in"]);
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    h.model({ type: "text_delta", text: "You said: and another" });
    h.model({ type: "turn_complete" });
    expect(endOf(h, "t3")).toEqual(["turn_complete"]);
    // The line typed over reaches the model too, before the last: nothing typed is lost.
    expect(h.sentToModel.filter((c) => c.type === "user_text")).toMatchObject([
      { type: "user_text", text: "what next\nand another" },
    ]);
    expect(h.traces).not.toContain("SUPPRESSED");
  });

  it("a line held when the connection is refused is queued input: its turn ends, said so, and nothing retries (found by the second attack)", () => {
    const h = new Harness();
    h.connect("phone");
    spokeThenTyped(h);
    h.input({ type: "upstream_failed", message: "HTTP 401", refused: true });
    const errors = errorCodes(h);
    expect(errors).toContain("speech_lost");
    expect(userTurns(h)).toEqual([["t1", "what next"]]);
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
    // No new connection for it: after a refusal only the user's next input tries again.
    expect(h.effects.filter((e) => e.type === "open_upstream")).toHaveLength(1);
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    expect(h.effects.filter((e) => e.type === "open_upstream")).toHaveLength(2);
  });

  it("a line held when liveline gives up on the connection: its turn ends, and there is one give-up, not two", () => {
    const h = new Harness({ maxReconnectAttempts: 2 });
    h.connect("phone");
    spokeThenTyped(h);
    // Every connection fails before it is set up.
    const failed = () => h.state.upstream.phase === "failed";
    while (!failed()) {
      h.input({ type: "upstream_failed", message: "HTTP 503" });
      if (!failed()) expect(h.fireNextTimer()).toBe(true);
    }
    const opens = h.effects.filter((e) => e.type === "open_upstream").length;
    expect(userTurns(h)).toEqual([["t1", "what next"]]);
    expect(endOf(h, "t1")).toEqual(["interrupted:upstream_lost"]);
    expect(h.state.upstream.phase).toBe("failed");
    expect(h.effects.filter((e) => e.type === "open_upstream")).toHaveLength(opens);
    const errors = errorCodes(h);
    expect(errors.filter((c) => c === "upstream_unavailable")).toHaveLength(1);
  });

  it("a speech answer slower than the follow-up grace still opens its voice turn before the line (found by the second attack)", () => {
    // The OpenAI wire answers speech 1.6–2.1 s after its end (VAD, transcription): with the
    // line let go at 1.5 s, the speech's answer was suppressed and the speech never seen.
    const h = live();
    spokeThenTyped(h);
    h.advance(2_500);
    expect(h.sentToModel.some((c) => c.type === "user_text")).toBe(false);
    speechAnsweredThenLine(h);
  });

  it("a line typed while the user still speaks waits from the speech's end, not from the line (found by the third attack)", () => {
    // Typed 1 s into an utterance that went on 2 s more: the 4 s ran out just as the model
    // began to answer the speech, so the line went first and that answer was suppressed.
    const h = live();
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.model({ type: "speech_started" });
    h.input({ type: "client_text", clientId: "phone", text: "what next" });
    expect(h.traces).toContain("LINE_HELD");
    h.advance(2_000);
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.advance(2_500); // 4.5 s after the line, 2.5 s after the speech ended
    expect(h.sentToModel.some((c) => c.type === "user_text")).toBe(false);
    speechAnsweredThenLine(h);
  });

  it("if the model never answers the speech, the line goes after the grace", () => {
    const h = live();
    spokeThenTyped(h);
    expect(h.fireNextTimer()).toBe(true);
    expect(userTurns(h)).toEqual([["t1", "what next"]]);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "what next" });
  });
});

// Found by the bench: the next line waited 1.5 s.
describe("the end of speech the model is already answering", () => {
  it("belongs to the voice turn it answers: a line typed after that turn goes at once", () => {
    const h = live();
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.model({ type: "input_transcript", text: "hello", finished: false });
    h.model({ type: "text_delta", text: "Hi there" });
    // The client's end of speech arrives while the answer streams (a VAD tail).
    h.input({ type: "client_audio_end", clientId: "phone" });
    h.model({ type: "turn_complete" });
    h.input({ type: "client_text", clientId: "phone", text: "and prices?" });
    expect(h.traces).not.toContain("LINE_HELD");
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "and prices?" });
  });
});

// Found by the attack: each pause ended a turn with empty_response.
describe("the user speaks on before the answer to their speech begins", () => {
  /** The user pauses; the model begins to answer; the user speaks on before it says anything. */
  function pausedAndSpokeOn(h: Harness): void {
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.model({ type: "input_transcript", text: "What can you do?", finished: true });
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    // The service's shape of a generation cut by the user's voice: interrupted, then turnComplete.
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
  }

  it("opens no turn for the answer that never began: the next answer answers all of the speech, once", () => {
    const h = live();
    pausedAndSpokeOn(h);
    expect(userTurns(h)).toEqual([]);
    expect(h.traces).toContain("SPEECH_CONTINUED");
    // A new utterance's transcription need not begin with a space: the user's words get one.
    h.model({ type: "input_transcript", text: "Tell me something.", finished: true });
    h.model({ type: "text_delta", text: "I can look things up." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([["t1", "What can you do? Tell me something."]]);
    expect(endOf(h, "t1")).toEqual(["turn_complete"]);
    expect(h.durableFrames("phone").some((f) => f.type === "error")).toBe(false);
  });

  it("a line typed meanwhile still waits for the speech's answer, then gets its own", () => {
    const h = live();
    pausedAndSpokeOn(h);
    h.input({ type: "client_text", clientId: "phone", text: "and prices?" });
    expect(h.traces).toContain("LINE_HELD");
    h.model({ type: "text_delta", text: "I can look things up." });
    expect(userTurns(h)).toEqual([
      ["t1", "What can you do?"],
      ["t2", "and prices?"],
    ]);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "and prices?" });
  });

  it("a generation cut after it said something is still that answer's turn, interrupted", () => {
    const h = live();
    h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.model({ type: "input_transcript", text: "What can you do?", finished: true });
    h.model({ type: "text_delta", text: "I can" });
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([["t1", "What can you do?"]]);
    expect(endOf(h, "t1")).toEqual(["interrupted:barge_in"]);
  });
});
