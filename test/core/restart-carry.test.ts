/**
 * The turn in flight across a restart of the session's object (a deploy, a runtime update):
 * the old instance's log (and the speech it kept) is all the new one has. Each case runs the
 * production interpreter and recovery (src/session/recover.ts) over an in-memory log; its
 * control is the guard `carryTurns` off (or no carry at all), which closes everything in
 * flight as before: the question is never answered, the tool's effect is reported cancelled.
 */
import { describe, expect, it } from "vitest";
import { ASK_AGAIN } from "../../src/core/carry.js";
import { ALL_GUARDS } from "../../src/core/core-config.js";
import { CUT_OFF_NOTE, rebuildContext } from "../../src/history/rebuild.js";
import { validateHistory } from "../../src/history/validate.js";
import { OUTCOME_UNKNOWN, type ToolPolicy } from "../../src/vocabulary/model.js";
import { type Harness, TOOLS } from "./harness.js";
import { live } from "./sessions.js";

const RERUN = { ...TOOLS.lookup_faq!, name: "book_table", idempotent: true };
const ONCE = { ...TOOLS.lookup_faq!, name: "send_sms" };
const tools: Record<string, ToolPolicy> = { ...TOOLS, book_table: RERUN, send_sms: ONCE };
/** The policies' `idempotent`, as the shell reads them from the agent's definitions. */
const rerunTimeoutMs = (name: string) => (tools[name]?.idempotent === true ? 5_000 : null);

const kinds = (h: Harness) => h.log.map((e) => e.kind);
const ends = (h: Harness, turnId: string) =>
  h.log.filter(
    (e) => (e.kind === "turn_complete" || e.kind === "interrupted") && e.turnId === turnId,
  );

/** The restarted session's client comes back, and its model connection goes live. */
function reconnect(h: Harness): void {
  h.connect("phone", h.log.at(-1)?.seq ?? 0);
  h.model({ type: "setup_complete" });
}

describe("a turn whose answer had not begun", () => {
  it("is carried to the next connection and answered there once", () => {
    const before = live();
    before.input({ type: "client_text", clientId: "phone", text: "what are your hours?" });
    const after = before.restart();
    // Nothing was closed: the turn waits for a client and a connection.
    expect(after.log).toEqual(before.log);
    expect(after.state.turn).toMatchObject({ id: "t1", carried: "pending" });
    expect(after.opens).toBe(0);
    reconnect(after);
    // The rebuilt context holds the question; the model is asked, once, to go on.
    expect(after.effects.find((e) => e.type === "open_upstream")).toMatchObject({
      open: { mode: "rebuild" },
    });
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(1);
    after.model({ type: "text_delta", text: "We open at nine." });
    after.model({ type: "turn_complete" });
    expect(ends(after, "t1")).toEqual([expect.objectContaining({ kind: "turn_complete" })]);
    expect(validateHistory(after.log)).toEqual([]);
  });

  it("control: without carryTurns it ends upstream_lost, unanswered", () => {
    const before = live({ guards: { ...ALL_GUARDS, carryTurns: false } });
    before.input({ type: "client_text", clientId: "phone", text: "what are your hours?" });
    const after = before.restart();
    expect(ends(after, "t1")).toEqual([
      expect.objectContaining({ kind: "interrupted", reason: "upstream_lost" }),
    ]);
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
  });
});

describe("a reply cut mid-way", () => {
  it("ends once, upstream_lost, and is not asked again", () => {
    const before = live();
    before.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    before.model({ type: "text_delta", text: "Once upon a time" });
    const after = before.restart();
    expect(ends(after, "t1")).toEqual([
      expect.objectContaining({ kind: "interrupted", reason: "upstream_lost" }),
    ]);
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
    expect(after.state.turn).toBeNull();
    expect(validateHistory(after.log)).toEqual([]);
  });
});

// Found by the attack of 2026-12-02: a goodbye whose words had not begun was carried like a
// question; the model answered its hidden, empty line ("You said: “”") and then said goodbye
// again in a second turn. PROTOCOL-REFERENCE (session caps) promises the goodbye's turn ends
// `interrupted` and the cap, found again, asks for a new one.
describe("a cap's goodbye under way", () => {
  const goodbyes = (h: Harness) =>
    h.sentToModel.filter((c) => c.type === "nudge" && /reached .* and ends now/.test(c.text));
  const lines = (h: Harness) => h.log.filter((e) => e.kind === "user");

  function goodbyeAsked(): Harness {
    const h = live({ limits: { startedAt: 1_000_000, maxTurns: 1 } });
    h.input({ type: "client_text", clientId: "phone", text: "what are your hours?" });
    h.model({ type: "text_delta", text: "We open at nine." });
    h.model({ type: "turn_complete" });
    expect(lines(h).at(-1)).toMatchObject({ turnId: "t2", source: "limit", text: "" });
    expect(goodbyes(h)).toHaveLength(1);
    return h;
  }

  for (const [when, said] of [
    ["before its first words", []],
    ["after its first words", ["Thank you for"]],
  ] as const) {
    it(`${when}: its turn ends interrupted once, and a new goodbye is asked for (not the hidden line answered)`, () => {
      const before = goodbyeAsked();
      for (const text of said) before.model({ type: "text_delta", text });
      const after = before.restart();
      expect(ends(after, "t2")).toEqual([
        expect.objectContaining({ kind: "interrupted", reason: "upstream_lost" }),
      ]);
      reconnect(after);
      // Asked for the goodbye again, never to go on with the hidden line.
      expect(goodbyes(after)).toHaveLength(1);
      expect(after.sentToModel.filter((c) => c.type === "nudge")).toEqual(goodbyes(after));
      after.model({ type: "text_delta", text: "Goodbye!" });
      after.model({ type: "turn_complete" });
      expect(lines(after).map((e) => e.turnId)).toEqual(["t1", "t2", "t3"]);
      expect(ends(after, "t3")).toEqual([expect.objectContaining({ kind: "turn_complete" })]);
      expect(after.log.filter((e) => e.kind === "session_limit")).toHaveLength(1);
      expect(validateHistory(after.log)).toEqual([]);
    });
  }
});

describe("a server tool in flight", () => {
  it("declared idempotent: runs again under the same call id, its one result spoken once", () => {
    const before = live({ tools });
    before.input({ type: "client_text", clientId: "phone", text: "book a table" });
    before.model({ type: "tool_call", calls: [{ id: "c1", name: "book_table", args: { n: 2 } }] });
    expect(before.runningTools.get("c1")).toBe("book_table");
    const after = before.restart({ rerunTimeoutMs });
    // Run again with the same id (the shell derives the same key from it), not closed.
    expect(after.runningTools.get("c1")).toBe("book_table");
    expect(after.log.filter((e) => e.kind === "tool_cancelled")).toEqual([]);
    // A client comes back while it runs: the connection waits for its outcome.
    after.connect("phone", after.log.at(-1)!.seq);
    expect(after.opens).toBe(0);
    after.input({ type: "tool_outcome", callId: "c1", result: { booked: true } });
    expect(after.opens).toBe(1);
    // Its result went to no connection: the next one's context holds it, with its call.
    expect(after.sentToModel.filter((c) => c.type === "tool_responses")).toEqual([]);
    const context = rebuildContext(after.log);
    expect(context.items.at(-1)).toEqual({
      role: "tool_results",
      results: [{ callId: "c1", name: "book_table", result: { booked: true } }],
    });
    after.model({ type: "setup_complete" });
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(1);
    after.model({ type: "text_delta", text: "Booked for two." });
    after.model({ type: "turn_complete" });
    expect(after.log.filter((e) => e.kind === "tool_result")).toHaveLength(1);
    expect(ends(after, "t1")).toEqual([expect.objectContaining({ kind: "turn_complete" })]);
    expect(validateHistory(after.log)).toEqual([]);
  });

  it("not idempotent: not run again; the model hears its outcome is unknown, and is asked to go on", () => {
    const before = live({ tools });
    before.input({ type: "client_text", clientId: "phone", text: "text my friend" });
    before.model({ type: "tool_call", calls: [{ id: "c1", name: "send_sms", args: {} }] });
    const after = before.restart({ rerunTimeoutMs });
    expect(after.runningTools.size).toBe(0);
    expect(after.log.filter((e) => e.kind === "tool_cancelled")).toEqual([
      expect.objectContaining({ callId: "c1", reason: "restart" }),
    ]);
    expect(rebuildContext(after.log).items.at(-1)).toEqual({
      role: "tool_results",
      results: [{ callId: "c1", name: "send_sms", error: OUTCOME_UNKNOWN }],
    });
    expect(OUTCOME_UNKNOWN).toMatch(/^outcome unknown: .*may or may not have taken effect/);
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(1);
    expect(ends(after, "t1")).toEqual([]);
  });

  it("control: without carryTurns the idempotent call is cancelled, not run again", () => {
    const before = live({ tools, guards: { ...ALL_GUARDS, carryTurns: false } });
    before.input({ type: "client_text", clientId: "phone", text: "book a table" });
    before.model({ type: "tool_call", calls: [{ id: "c1", name: "book_table", args: {} }] });
    const after = before.restart({ rerunTimeoutMs });
    expect(after.runningTools.size).toBe(0);
    expect(kinds(after).slice(-2)).toEqual(["tool_cancelled", "interrupted"]);
  });
});

describe("a client's call not yet answered", () => {
  it("stays open under its call id and is answered once", () => {
    const before = live();
    before.input({ type: "client_text", clientId: "phone", text: "ask me" });
    before.model({ type: "tool_call", calls: [{ id: "c1", name: "ask_user", args: {} }] });
    const after = before.restart();
    expect(after.log.filter((e) => e.kind === "tool_cancelled")).toEqual([]);
    after.connect("phone", after.log.at(-1)!.seq);
    expect(after.opens).toBe(0);
    after.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { a: 1 } });
    after.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { a: 2 } });
    expect(after.log.filter((e) => e.kind === "tool_result")).toEqual([
      expect.objectContaining({ callId: "c1", result: { a: 1 } }),
    ]);
    expect(after.opens).toBe(1);
    expect(after.ephemeralFrames("phone")).toContainEqual(
      expect.objectContaining({ type: "error", code: "duplicate_result" }),
    );
  });

  it("is answered by its timeout when no client comes back with it", () => {
    const before = live();
    before.input({ type: "client_text", clientId: "phone", text: "ask me" });
    before.model({ type: "tool_call", calls: [{ id: "c1", name: "ask_user", args: {} }] });
    const after = before.restart();
    after.advance(10_000);
    expect(after.log.filter((e) => e.kind === "tool_result")).toEqual([
      expect.objectContaining({ callId: "c1", error: 'tool "ask_user" timed out' }),
    ]);
  });
});

describe("speech the user finished that was not yet a turn", () => {
  /** The user spoke and the model transcribed it; the restart comes before its answer. */
  function spoke(h: Harness, transcript: string): void {
    h.clientAudio("phone", new Uint8Array(640));
    if (transcript !== "") h.model({ type: "input_transcript", text: transcript, finished: true });
    else h.model({ type: "speech_started" });
  }

  it("is kept while it waits, and forgotten in the step that opens its turn", () => {
    const h = live();
    spoke(h, "what can you do?");
    expect(h.keptSpeech).toMatchObject({ transcript: "what can you do?" });
    h.model({ type: "text_delta", text: "Many things." });
    expect(h.keptSpeech).toBeNull();
  });

  it("becomes its turn after the restart, carried and answered once", () => {
    const before = live();
    spoke(before, "what can you do?");
    const after = before.restart();
    expect(after.log.at(-1)).toMatchObject({
      kind: "user",
      source: "audio",
      text: "what can you do?",
    });
    // Carried over once: the store no longer holds it.
    expect(after.keptSpeech).toBeNull();
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toHaveLength(1);
    after.model({ type: "text_delta", text: "Many things." });
    after.model({ type: "turn_complete" });
    expect(ends(after, "t1")).toEqual([expect.objectContaining({ kind: "turn_complete" })]);
    expect(validateHistory(after.log)).toEqual([]);
  });

  it("with no words of it known, the user is asked once to say it again", () => {
    const before = live();
    spoke(before, "");
    const after = before.restart();
    expect(after.log.slice(-2)).toEqual([
      expect.objectContaining({ kind: "error", code: "speech_lost" }),
      expect.objectContaining({ kind: "user", source: "audio", text: "" }),
    ]);
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toEqual([
      expect.objectContaining({ text: ASK_AGAIN }),
    ]);
  });

  it("control: without a carry, it leaves no trace and no answer", () => {
    const before = live();
    spoke(before, "what can you do?");
    const after = before.restart({ carry: false });
    expect(after.log).toEqual(before.log);
    reconnect(after);
    expect(after.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
    expect(after.state.turn).toBeNull();
  });
});

describe("what the model is told of a reply cut by the restart", () => {
  it("its rebuilt context says the user heard no more than what the log holds", () => {
    const before = live();
    before.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    before.model({ type: "text_delta", text: "Once upon a time" });
    const after = before.restart();
    expect(rebuildContext(after.log).items).toEqual([
      { role: "user", text: "tell me a story" },
      { role: "model", text: `Once upon a time ${CUT_OFF_NOTE}` },
    ]);
    // A reply that ended is not marked.
    const whole = live();
    whole.input({ type: "client_text", clientId: "phone", text: "hi" });
    whole.model({ type: "text_delta", text: "Hello." });
    whole.model({ type: "turn_complete" });
    expect(rebuildContext(whole.restart().log).items.at(-1)).toEqual({
      role: "model",
      text: "Hello.",
    });
  });
});

describe("the model connection after a restart", () => {
  /** A turn answered, then the service's handle for the conversation so far. */
  function answeredWithHandle(): Harness {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    h.model({ type: "resumption_update", handle: "h-1", resumable: true });
    return h;
  }

  it("resumes the model's session with its kept handle when nothing was said since", () => {
    const before = answeredWithHandle();
    expect(before.keptHandle).toEqual({ handle: "h-1", seq: before.log.at(-1)!.seq });
    const after = before.restart();
    reconnect(after);
    expect(after.effects.find((e) => e.type === "open_upstream")).toMatchObject({
      open: { mode: "resume", handle: "h-1" },
    });
  });

  it("is seeded from the record when the handle does not cover what came after it", () => {
    const before = answeredWithHandle();
    before.input({ type: "client_text", clientId: "phone", text: "and now?" });
    const after = before.restart();
    reconnect(after);
    expect(after.effects.find((e) => e.type === "open_upstream")).toMatchObject({
      open: { mode: "rebuild" },
    });
  });

  it("control: without a carry, the handle is not used", () => {
    const after = answeredWithHandle().restart({ carry: false });
    reconnect(after);
    expect(after.effects.find((e) => e.type === "open_upstream")).toMatchObject({
      open: { mode: "rebuild" },
    });
  });
});
