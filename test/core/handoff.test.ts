/**
 * Handoffs in the core, scenario by scenario: what the new agent does first (its arrival),
 * a connection kept and updated in place, and calls of the old agent that finish first.
 */
import { describe, expect, it } from "vitest";
import type { CoreConfig } from "../../src/core/session-state.js";
import type { ToolPolicy } from "../../src/vocabulary/model.js";
import { TOOLS } from "./harness.js";
import { live, turnEnds } from "./sessions.js";

const TRANSFER: ToolPolicy = {
  name: "transfer_to_desk",
  runOn: "server",
  followUp: "speak",
  timeoutMs: 5_000,
};
const SLOW_SAVE: ToolPolicy = {
  name: "save_note",
  runOn: "server",
  followUp: "silent",
  timeoutMs: 5_000,
  onHandoff: "finish",
};
const FRONT = { ...TOOLS, transfer_to_desk: TRANSFER, save_note: SLOW_SAVE };

function session(config: Partial<CoreConfig> = {}) {
  return live({
    tools: FRONT,
    agent: "front",
    agentTools: { front: FRONT, desk: TOOLS },
    handoffTools: { transfer_to_desk: "desk" },
    ...config,
  });
}

const kinds = (h: ReturnType<typeof session>) =>
  h.durableFrames("phone").map((f) => (f.type === "text" ? `text:${f.text}` : f.type));

/** "billing please" → the old agent calls the transfer tool, which liveline answers. */
function transferTurn(h: ReturnType<typeof session>, extraCalls: string[] = []) {
  h.input({ type: "client_text", clientId: "phone", text: "billing please" });
  h.model({ type: "text_delta", text: "One moment." });
  h.model({
    type: "tool_call",
    calls: [
      { id: "c1", name: "transfer_to_desk", args: { reason: "billing" } },
      ...extraCalls.map((name, i) => ({ id: `x${i}`, name, args: {} })),
    ],
  });
  h.model({ type: "turn_complete" });
  h.input({ type: "tool_outcome", callId: "c1", result: { transferred_to: "desk" } });
  h.model({ type: "text_delta", text: "Transferring you." });
  h.model({ type: "turn_complete" });
}

describe("the new agent's arrival", () => {
  it("announce: the turn stays open for the new agent's one line, then ends once", () => {
    const h = session({ agentArrival: { desk: "announce" } });
    transferTurn(h);
    expect(turnEnds(h)).toEqual([]);
    expect(h.state.agent).toBe("desk");
    // The connection is replaced (Gemini): the new one, once live, is asked to introduce itself.
    expect(h.opens).toBe(2);
    h.model({ type: "setup_complete" });
    const asked = h.sentToModel.at(-1);
    expect(asked).toMatchObject({ type: "nudge" });
    expect(asked?.type === "nudge" && asked.text).toMatch(/desk agent.*Introduce yourself/);
    h.model({ type: "text_delta", text: "Hi, billing here." });
    h.model({ type: "turn_complete" });
    expect(kinds(h).filter((k) => k !== "status")).toEqual([
      "user",
      "text:One moment.",
      "tool_call",
      "tool_result",
      "text:Transferring you.",
      "handoff",
      "text:Hi, billing here.",
      "turn_complete",
    ]);
    expect(h.traces).toContain("HANDOFF_ANNOUNCE");
  });

  it("silent: the turn ends first; the new agent is asked nothing", () => {
    const h = session({ agentArrival: { desk: "silent" } });
    transferTurn(h);
    const k = kinds(h).filter((x) => x !== "status");
    expect(k.slice(-2)).toEqual(["turn_complete", "handoff"]);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.filter((c) => c.type === "nudge")).toEqual([]);
  });

  it("a shared link: the live connection is updated in place, and asked at once", () => {
    const h = session({
      agentArrival: { desk: "announce" },
      agentLinks: { front: "openai gpt-realtime marin", desk: "openai gpt-realtime marin" },
    });
    transferTurn(h);
    expect(h.opens).toBe(1);
    expect(h.agentUpdates).toEqual(["desk"]);
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "nudge" });
    h.model({ type: "text_delta", text: "Hi, billing here." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
  });
});

describe("calls of the old agent still running at a handoff", () => {
  it("a tool that finishes first: the handoff (and the held turn) wait for its outcome", () => {
    const h = session({ agentArrival: { desk: "announce" } });
    transferTurn(h, ["save_note"]);
    // The transfer is answered, but save_note still runs: no handoff yet, the turn held.
    expect(kinds(h)).not.toContain("handoff");
    expect(turnEnds(h)).toEqual([]);
    h.input({ type: "tool_outcome", callId: "x0", result: { saved: true } });
    expect(kinds(h)).toContain("handoff");
    const results = h.durableFrames("phone").filter((f) => f.type === "tool_result");
    expect(results.map((f) => f.type === "tool_result" && f.callId)).toEqual(["c1", "x0"]);
    h.model({ type: "setup_complete" });
    h.model({ type: "text_delta", text: "Hi, billing here." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toHaveLength(1);
  });

  it("control: a tool that cancels (the default) is cancelled with reason handoff", () => {
    const h = session({
      agentArrival: { desk: "announce" },
      agentTools: { front: { ...FRONT, save_note: { ...SLOW_SAVE, onHandoff: "cancel" } } },
    });
    transferTurn(h, ["save_note"]);
    expect(kinds(h)).toContain("handoff");
    expect(h.durableFrames("phone")).toContainEqual(
      expect.objectContaining({ type: "tool_cancelled", callId: "x0", reason: "handoff" }),
    );
  });

  it("a finishing tool that never answers: its timeout ends the wait, the turn still ends once", () => {
    const h = session({ agentArrival: { desk: "announce" } });
    transferTurn(h, ["save_note"]);
    expect(h.fireNextTimer()).toBe(true); // save_note's timeout: an error result
    expect(kinds(h)).toContain("handoff");
    h.model({ type: "setup_complete" });
    h.model({ type: "text_delta", text: "Hi, billing here." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toHaveLength(1);
  });
});

// Found by the black-box attack on the handoff.
describe("a transfer answered while a call, speech or a backend request is still open", () => {
  it("an unanswered call the transfer turn would wait for is cancelled when the transfer is answered", () => {
    const h = session({ agentArrival: { desk: "silent" } });
    h.input({ type: "client_text", clientId: "phone", text: "billing please" });
    h.model({
      type: "tool_call",
      calls: [
        { id: "p1", name: "ask_user", args: {} }, // a client call whose result is spoken
        { id: "c1", name: "transfer_to_desk", args: {} },
      ],
    });
    h.model({ type: "turn_complete" });
    h.input({ type: "tool_outcome", callId: "c1", result: { transferred_to: "desk" } });
    // At once, not at ask_user's timeout: cancelled, and the transfer's result goes out.
    expect(h.durableFrames("phone")).toContainEqual(
      expect.objectContaining({ type: "tool_cancelled", callId: "p1", reason: "handoff" }),
    );
    h.model({ type: "text_delta", text: "Transferring you." });
    h.model({ type: "turn_complete" });
    expect(kinds(h)).toContain("handoff");
    expect(h.timers.has("tool:p1")).toBe(false);
  });

  it("speech the old connection heard before the handoff is answered there: no false speech_lost", () => {
    // The user speaks over the old agent's follow-up to the transfer result.
    const h2 = session({ agentArrival: { desk: "silent" } });
    h2.input({ type: "client_text", clientId: "phone", text: "billing please" });
    h2.model({ type: "tool_call", calls: [{ id: "c1", name: "transfer_to_desk", args: {} }] });
    h2.model({ type: "turn_complete" });
    h2.input({ type: "tool_outcome", callId: "c1", result: { transferred_to: "desk" } });
    h2.model({ type: "text_delta", text: "Transferring" });
    // The user speaks over it: the model hears it and stops; the user speaks on.
    const chunk = () =>
      h2.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    chunk();
    h2.model({ type: "input_transcript", text: "and my invoice", finished: false });
    h2.model({ type: "interrupted" });
    h2.model({ type: "turn_complete" }); // the cut generation's end
    chunk();
    chunk();
    expect(kinds(h2)).not.toContain("handoff");
    // The old connection answers the speech, in its own turn; then the handoff.
    h2.model({ type: "text_delta", text: "Sure, one moment." });
    h2.model({ type: "turn_complete" });
    const k = kinds(h2);
    expect(h2.durableFrames("phone").filter((f) => f.type === "error")).toEqual([]);
    expect(k.indexOf("handoff")).toBeGreaterThan(k.lastIndexOf("turn_complete"));
  });

  it("a backend request neither calls off nor redirects a transfer the model made", () => {
    const h = session({ agentArrival: { desk: "silent" } });
    h.input({ type: "client_text", clientId: "phone", text: "billing please" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "transfer_to_desk", args: {} }] });
    h.model({ type: "turn_complete" });
    h.input({ type: "tool_outcome", callId: "c1", result: { transferred_to: "desk" } });
    h.input({ type: "handoff_requested", to: "front", reason: "backend" });
    expect(h.state.pendingHandoff).toMatchObject({ to: "desk", callId: "c1" });
    h.model({ type: "text_delta", text: "Transferring you." });
    h.model({ type: "turn_complete" });
    expect(h.state.agent).toBe("desk");
  });
});

// Found by a soak.
describe("a transfer answered with other results of its reply", () => {
  it("goes back with them as one input: every spoken result is answered before the handoff", () => {
    const h = session({ agentArrival: { desk: "silent" } });
    h.input({ type: "client_text", clientId: "phone", text: "billing, and your hours?" });
    h.model({ type: "text_delta", text: "One moment." });
    h.model({
      type: "tool_call",
      calls: [
        { id: "chips", name: "suggest_topics", args: {} },
        { id: "c1", name: "transfer_to_desk", args: { reason: "billing" } },
        { id: "faq", name: "lookup_faq", args: {} },
      ],
    });
    h.model({ type: "turn_complete" });
    h.input({ type: "tool_outcome", callId: "faq", result: { hours: "9-5" } });
    // The transfer's result cancels the chips call; that flushed the batch without it, so the
    // transfer's result went as a second input which the handoff then left unanswered.
    h.input({ type: "tool_outcome", callId: "c1", result: { transferred_to: "desk" } });
    const results = h.sentToModel.filter((c) => c.type === "tool_responses");
    expect(results).toHaveLength(1);
    const ids =
      results[0]?.type === "tool_responses" ? results[0].responses.map((r) => r.callId) : [];
    expect(ids.sort()).toEqual(["c1", "faq"]);
    h.model({ type: "text_delta", text: "We open at nine. Transferring you." });
    h.model({ type: "turn_complete" });
    expect(turnEnds(h)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(h.log.some((e) => e.kind === "handoff")).toBe(true);
  });
});
