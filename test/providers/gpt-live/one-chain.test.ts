/**
 * Contract scenarios on the GPT-Live wire (issue 52): liveline's core and adapter against the
 * simulator's GPT-Live face, whose backend is one response chain as the field measured it
 * (src/simulator/README.md, "GPT-Live face"). Each scenario runs with a control arm that
 * shows the failure: the per-response gate the field ran before (PerResponseGate), the
 * naive relay's ledger, the old output for a cancelled call, or the adapter's word of an
 * expiry hidden, as each scenario says.
 */
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../../src/vocabulary/frames.js";
import { type Gate, Wired, type WiredOptions } from "./wired.js";

const calls = (byTurn: Record<number, string[]>) => ({ calls: { byTurn, otherwise: [] } });

interface TurnView {
  user: string;
  source: string | undefined;
  said: string;
  ends: string[];
  errors: string[];
}

/** Each turn as the phone saw it: its line, what was said in it, how it ended, its errors. */
function turns(frames: readonly ServerFrame[]): Map<string, TurnView> {
  const out = new Map<string, TurnView>();
  const of = (id: string) => {
    let t = out.get(id);
    if (t === undefined) {
      t = { user: "", source: undefined, said: "", ends: [], errors: [] };
      out.set(id, t);
    }
    return t;
  };
  for (const f of frames) {
    if (!("turnId" in f) || typeof f.turnId !== "string") continue;
    const t = of(f.turnId);
    if (f.type === "user") {
      t.user = f.text;
      t.source = f.source;
    } else if (f.type === "transcript") t.said += f.text;
    else if (f.type === "turn_complete" || f.type === "interrupted") t.ends.push(f.type);
    else if (f.type === "error") t.errors.push(f.code);
  }
  return out;
}

/** The turn whose line was `text`. */
function turnOf(w: Wired, text: string): TurnView {
  const found = [...turns(w.frames).values()].find((t) => t.user === text);
  if (found === undefined)
    throw new Error(`no turn for "${text}": ${JSON.stringify([...turns(w.frames)])}`);
  return found;
}

/** The line's turn: answered (its words say the line back), ended once, complete, no error. */
function answeredOnce(w: Wired, text: string): TurnView {
  const t = turnOf(w, text);
  expect(t.ends, text).toEqual(["turn_complete"]);
  expect(t.errors, text).toEqual([]);
  expect(t.said.split(`You said: “${text}”`).length - 1, `${text}: ${t.said}`).toBe(1);
  return t;
}

/** How often a server tool ran, and how often each call of a name was recorded. */
const runs = (w: Wired, name: string) =>
  w.h.effects.filter((e) => e.type === "run_tool" && e.name === name).length;
const recorded = (w: Wired, kind: string, name: string) =>
  w.frames.filter((f) => f.type === kind && "name" in f && f.name === name).length;
const errorCodes = (w: Wired) => w.frames.flatMap((f) => (f.type === "error" ? [f.code] : []));
/** Everything the voice said on the wire: what a listener heard, delivered or not. */
const voiceSaid = (w: Wired) =>
  w.received
    .filter((e) => e.type === "session.output_transcript.delta")
    .map((e) => e.delta as string)
    .join("");

describe("GPT-Live's one response chain: contract scenarios", () => {
  /**
   * A slow call of one delegation, still open when the next line's own call (a fast one) runs
   * (`announceReplies`: the line's reply is a delegation of its own too).
   */
  function slowAndFast(gate: Gate, announceReplies: boolean): Wired {
    const w = new Wired({
      gate,
      knobs: { ...calls({ 1: ["lookup_preferences"], 2: ["lookup_plan"] }), announceReplies },
      toolDelays: { lookup_preferences: 4_000 },
    });
    w.type("hi");
    w.advance(2_500);
    w.type("what is my plan?");
    w.advance(60_000);
    w.type("thanks");
    w.advance(60_000);
    return w;
  }

  it("two delegations, one slow call and one fast: both answered once, no stall, the backend answers the next line", () => {
    for (const announceReplies of [true, false]) {
      const w = slowAndFast("session", announceReplies);
      answeredOnce(w, "hi");
      expect(answeredOnce(w, "what is my plan?").said).toContain("lookup_plan found");
      answeredOnce(w, "thanks");
      expect([runs(w, "lookup_preferences"), runs(w, "lookup_plan")]).toEqual([1, 1]);
      // Never refused: nothing was asked while a call was open.
      expect(w.received.filter((e) => e.type === "error")).toEqual([]);
    }
  });

  it("control: the per-response gate asks while the slow call is open, is refused, and the line stalls to model_timeout", () => {
    const w = slowAndFast("per-response", false);
    const stalled = turnOf(w, "what is my plan?");
    expect(stalled.errors).toEqual(["model_slow", "model_slow", "model_timeout"]);
    expect(stalled.said).toBe("");
    expect(
      w.received.some((e) => JSON.stringify(e).includes("function_call_outputs_required")),
    ).toBe(true);
  });

  it("two questions in one breath: both calls run once, one answer covers both", () => {
    for (const gate of ["session", "per-response"] as const) {
      const w = new Wired({
        gate,
        knobs: calls({ 1: ["lookup_faq", "lookup_plan"] }),
        toolDelays: { lookup_plan: 3_000 },
      });
      w.say();
      w.advance(60_000);
      const t = answeredOnce(w, "What can you do?");
      expect(t.said.match(/lookup_faq found/g), gate).toHaveLength(1);
      expect(t.said.match(/lookup_plan found/g), gate).toHaveLength(1);
      expect([runs(w, "lookup_faq"), runs(w, "lookup_plan")]).toEqual([1, 1]);
      // One request, once both outputs were in: one reply covers both.
      const types = w.sent.map((e) => e.type).filter((t) => t !== "session.start");
      expect(types, gate).toEqual([
        "response.item.create",
        "response.item.create",
        "response.create",
      ]); // Never refused.
      expect(
        w.received.filter((e) => e.type === "error"),
        gate,
      ).toEqual([]);
    }
    // The per-response gate passes too (as the external stand-in found): a response's own
    // calls are all its calls here. What it gets wrong is in the other scenarios; the control
    // of this one is the relays' habit of a request after every output (below).
  });

  it("control: a relay that sends each output at once and asks after each is refused while the other call runs", () => {
    // Two things keep the chain whole here, and the control switches off both: the core's
    // batch (one delivery's results go back as one input: the `resultScheduling` guard) and
    // the adapter's session-wide gate (nothing asked while a call is open). Either alone
    // suffices; with both off this is the relays' habit on OpenAI Realtime.
    const w = new Wired({
      naive: true,
      gate: "per-output",
      knobs: calls({ 1: ["lookup_faq", "lookup_plan"] }),
      toolDelays: { lookup_plan: 3_000 },
    });
    w.say();
    w.advance(60_000);
    const types = w.sent.map((e) => e.type).filter((t) => t !== "session.start");
    expect(types).toEqual([
      "response.item.create",
      "response.create",
      "response.item.create",
      "response.create",
    ]);
    const refusals = w.received.filter((e) => e.type === "error").map((e) => JSON.stringify(e));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toContain("function_call_outputs_required");
  });

  /** A question spoken while the first one's call runs (the voice holds it, `holdAck`: says so). */
  function spokenOverCall(gate: Gate, holdAck: boolean): Wired {
    const w = new Wired({
      gate,
      knobs: { ...calls({ 1: ["lookup_faq"] }), holdAck },
      toolDelays: { lookup_faq: 3_000 },
    });
    w.say();
    w.advance(1_000);
    w.say();
    w.advance(60_000);
    return w;
  }

  it("a line spoken while a call is open: answered once, after the call's result, in a turn of its own", () => {
    const w = spokenOverCall("session", false);
    const first = answeredOnce(w, "What can you do?");
    expect(first.said).toContain("lookup_faq found");
    // A voice turn of its own (no `source`: spoken), not one of the model's.
    expect(answeredOnce(w, "Tell me something interesting.").source).toBeUndefined();
    const order = w.frames.map((f) => f.type);
    expect(order.indexOf("tool_result")).toBeLessThan(
      w.frames.findIndex((f) => f.type === "user" && f.text === "Tell me something interesting."),
    );
  });

  it("a line spoken over a call the voice acknowledges: the call is cancelled, the chain goes on, the line is answered once", () => {
    const w = spokenOverCall("session", true);
    expect(w.frames.filter((f) => f.type === "tool_cancelled")).toHaveLength(1);
    const held = turnOf(w, "Tell me something interesting.");
    expect(held.said).toContain("I'm still looking that up.");
    expect(held.said.split("You said: “Tell me something interesting.”").length - 1).toBe(1);
    expect(held.ends).toEqual(["turn_complete"]);
    expect(errorCodes(w)).toEqual([]);
  });

  it("control: the per-response gate sends the cancelled call's output but no response.create: the held line is never answered", () => {
    const w = spokenOverCall("per-response", true);
    const held = turnOf(w, "Tell me something interesting.");
    expect(held.said).toBe("I'm still looking that up.");
    expect(w.sent.filter((e) => e.type === "response.create")).toEqual([]);
  });

  /** The first backend response fails after its call. */
  function failed(gate: Gate): Wired {
    const w = new Wired({ gate, knobs: { ...calls({ 1: ["lookup_faq"] }), failResponses: [1] } });
    w.type("hours?");
    w.advance(30_000);
    w.type("anything new?");
    w.advance(60_000);
    return w;
  }

  it("a failed response: its calls closed in the record with the reason, never run; the next line answered once", () => {
    const w = failed("session");
    const cancelled = w.frames.filter((f) => f.type === "tool_cancelled");
    expect(cancelled).toEqual([
      expect.objectContaining({ name: "lookup_faq", reason: "response_failed" }),
    ]);
    expect(runs(w, "lookup_faq")).toBe(0);
    expect(recorded(w, "tool_result", "lookup_faq")).toBe(0);
    expect(turnOf(w, "hours?").ends).toEqual(["turn_complete"]);
    answeredOnce(w, "anything new?");
    expect(errorCodes(w)).toEqual([]);
  });

  it("control: the per-response gate runs the dropped call and sends its output, which the service refuses", () => {
    const w = failed("per-response");
    expect(runs(w, "lookup_faq")).toBe(1);
    expect(recorded(w, "tool_cancelled", "lookup_faq")).toBe(0);
    expect(w.received.some((e) => JSON.stringify(e).includes("No function call found"))).toBe(true);
  });

  /** Each delegation delivered twice (`duplicateDelegation`); the ledger, or the naive relay's. */
  function deliveredTwice(naive: boolean): Wired {
    const w = new Wired({
      naive,
      gate: naive ? "per-response" : "session",
      knobs: { ...calls({ 1: ["lookup_faq"] }), duplicateDelegation: true },
    });
    w.say();
    w.advance(60_000);
    return w;
  }

  it("a delegation delivered twice: recorded once, its call run once, answered once", () => {
    const w = deliveredTwice(false);
    expect(w.frames.filter((f) => f.type === "delegation")).toHaveLength(1);
    expect(runs(w, "lookup_faq")).toBe(1);
    const t = answeredOnce(w, "What can you do?");
    expect(t.said.match(/lookup_faq found/g)).toHaveLength(1);
  });

  it("control: the naive relay runs the call twice", () => {
    expect(runs(deliveredTwice(true), "lookup_faq")).toBe(2);
  });

  /** A run that only called a side effect, then a new line (`replayToolsOnly`). */
  function toolsOnlyThenLine(naive: boolean): Wired {
    const w = new Wired({
      naive,
      gate: naive ? "per-response" : "session",
      knobs: { ...calls({ 1: ["set_preference"], 2: ["lookup_faq"] }), replayToolsOnly: true },
    });
    w.say();
    w.advance(30_000);
    w.say();
    w.advance(60_000);
    return w;
  }

  it("a tools-only run then a new delegation: the tool is not run again", () => {
    const w = toolsOnlyThenLine(false);
    expect(runs(w, "set_preference")).toBe(1);
    expect(recorded(w, "tool_call", "set_preference")).toBe(1);
    expect(turnOf(w, "Tell me something interesting.").said).toContain("lookup_faq found");
  });

  it("control: the naive relay runs the replayed side effect again", () => {
    expect(runs(toolsOnlyThenLine(true), "set_preference")).toBe(2);
  });

  /** Service sessions that expire after 20 s; a line, quiet for a minute, a line. */
  function expiring(opts: WiredOptions): Wired {
    const w = new Wired({ ...opts, knobs: { expireAfterMs: 20_000 } });
    w.type("my name is Ada");
    w.advance(60_000);
    w.type("what is my name?");
    w.advance(10_000);
    return w;
  }

  it("an expiry mid-conversation: nothing reopened while nobody speaks; the next line answered once, the earlier conversation in the new service session", () => {
    const w = expiring({});
    answeredOnce(w, "my name is Ada");
    answeredOnce(w, "what is my name?");
    // One session for the first line; none while idle (the minute is billed); one for the next.
    expect(w.sessions).toHaveLength(2);
    const seed = JSON.stringify(w.service.config?.input);
    expect(seed).toContain("my name is Ada");
    expect(w.frames.some((f) => f.type === "status" && f.state === "idle")).toBe(true);
  });

  it("control: told no expiry, the session reconnects at once and again after each expiry, nobody speaking", () => {
    const w = expiring({ hideExpiry: true });
    expect(w.sessions.length).toBeGreaterThanOrEqual(4);
  });

  /** Typed lines whose replies the service announces as delegations (`announceReplies`). */
  function announced(gate: Gate, announceReplies: boolean): Wired {
    const w = new Wired({ gate, knobs: { ...calls({ 2: ["lookup_faq"] }), announceReplies } });
    w.type("hello there");
    w.advance(60_000);
    w.type("what are your hours?");
    w.advance(60_000);
    return w;
  }

  it("typed turns end once whether or not the reply to liveline's request is announced as a delegation", () => {
    for (const announceReplies of [false, true]) {
      const w = announced("session", announceReplies);
      answeredOnce(w, "hello there");
      expect(answeredOnce(w, "what are your hours?").said).toContain("lookup_faq found");
    }
  });

  it("control: the per-response gate takes an announced reply for the voice's own: the typed turn waits to model_timeout", () => {
    const w = announced("per-response", true);
    expect(turnOf(w, "hello there").errors).toContain("model_timeout");
  });

  /** A line typed while a client call (the user's answer to a question) is still waited for. */
  function overClientCall(cancelledOutput: "cancelled" | "error"): Wired {
    const w = new Wired({
      cancelledOutput,
      clientAnswerMs: null,
      knobs: calls({ 1: ["ask_user"], 2: ["lookup_faq"] }),
    });
    w.type("book me a table");
    w.advance(2_000);
    w.type("where are you?");
    w.advance(30_000);
    return w;
  }

  it("a typed line over a waiting client call: the call is cancelled, and its cancellation is not what the user hears", () => {
    const w = overClientCall("cancelled");
    expect(w.frames.filter((f) => f.type === "tool_cancelled")).toHaveLength(1);
    answeredOnce(w, "where are you?");
    expect(voiceSaid(w)).not.toMatch(/cancel|error/i);
    expect(voiceSaid(w)).not.toContain("ask_user");
  });

  it("control: told as the old error output, the backend reads the cancellation out", () => {
    expect(voiceSaid(overClientCall("error"))).toContain("ask_user found: cancelled: barge_in");
  });

  /** The greeting's chips (a client call) never answered; then a line. */
  function overStaleChips(off: WiredOptions["off"]): Wired {
    const w = new Wired({
      off,
      clientAnswerMs: null,
      knobs: calls({ 1: ["suggest_topics"] }),
    });
    w.type("hi");
    w.advance(5_000);
    w.type("what is new?");
    w.advance(10_000);
    return w;
  }

  it("a line typed while an earlier turn's client call waits: the call is superseded, the line answered at once", () => {
    const w = overStaleChips(undefined);
    expect(w.frames).toContainEqual(
      expect.objectContaining({
        type: "tool_cancelled",
        name: "suggest_topics",
        reason: "superseded",
      }),
    );
    answeredOnce(w, "what is new?");
  });

  it("control: held for the stale call, the line waits until the call times out (20 s)", () => {
    const w = overStaleChips({ staleClientCallsSuperseded: false });
    expect(turnOf(w, "what is new?").said).toBe("");
  });

  it("two spoken lines in one service session: no empty turn of the model's own between them", () => {
    const w = new Wired();
    w.say();
    w.advance(10_000);
    w.say();
    w.advance(10_000);
    expect([...turns(w.frames).values()].map((t) => t.user)).toEqual([
      "What can you do?",
      "Tell me something interesting.",
    ]);
    expect(errorCodes(w)).toEqual([]);
  });

  it("control: ended again where the user's speech begins, the quiet utterance opened an empty turn of the model's own", () => {
    const w = new Wired({ off: { utteranceEndsOnce: false } });
    w.say();
    w.advance(10_000);
    w.say();
    w.advance(10_000);
    const empty = [...turns(w.frames).values()].find((t) => t.source === "model");
    expect(empty).toMatchObject({ user: "", said: "", errors: ["empty_response"] });
  });
});
