/**
 * A long session keeps its per-step state bounded: settled calls go to the archive, and a
 * late duplicate of any of them — a second result, a cancelled call's result, the model
 * delivering the call again — is still refused as it was when the call was recent.
 */
import { describe, expect, it } from "vitest";
import { SETTLED_KEPT } from "../../src/core/call-archive.js";
import { restoreSelection, restoreState } from "../../src/core/restore.js";
import type { Harness } from "./harness.js";
import { live } from "./sessions.js";

/** `n` turns, each with one client call answered (odd turns: the call is cut by a barge-in). */
function longSession(n: number): Harness {
  const h = live();
  for (let i = 1; i <= n; i++) {
    h.input({ type: "client_text", clientId: "phone", text: `line ${i}` });
    h.model({ type: "tool_call", calls: [{ id: `c${i}`, name: "ask_user", args: {} }] });
    if (i % 2 === 0) {
      h.input({
        type: "client_tool_result",
        clientId: "phone",
        callId: `c${i}`,
        result: { ok: i },
      });
      h.model({ type: "text_delta", text: `answer ${i}` });
      h.model({ type: "turn_complete" });
    } else {
      // The user types over the pending call: the turn ends, the call is cancelled.
      h.model({ type: "turn_complete" });
    }
  }
  return h;
}

const errorsOf = (h: Harness) =>
  h.clients
    .get("phone")!
    .frames.flatMap((f) => (f.type === "error" ? [(f as { code: string }).code] : []));

describe("the call archive", () => {
  it("keeps the per-step call table bounded over 400 tool turns", () => {
    const h = longSession(400);
    expect(Object.keys(h.state.calls).length).toBeLessThanOrEqual(2 * SETTLED_KEPT + 1);
    expect(h.state.archive).not.toBeNull();
  });

  it("refuses a second result for a call settled long ago, as for a recent one", () => {
    const h = longSession(400);
    expect(h.state.calls.c2).toBeUndefined(); // archived
    const before = errorsOf(h).length;
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c2", result: { again: 1 } });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "c3", result: { late: 1 } });
    h.input({ type: "client_tool_result", clientId: "phone", callId: "nope", result: {} });
    expect(errorsOf(h).slice(before)).toEqual([
      "duplicate_result",
      "call_cancelled",
      "unknown_call",
    ]);
    // Nothing of it reached the log or the model.
    expect(h.log.filter((e) => e.kind === "tool_result" && e.callId === "c2")).toHaveLength(1);
  });

  it("runs a call the model delivers again once, however old", () => {
    const h = longSession(400);
    h.input({ type: "client_text", clientId: "phone", text: "one more" });
    const calls = () => h.log.filter((e) => e.kind === "tool_call").length;
    const before = calls();
    h.model({ type: "tool_call", calls: [{ id: "c2", name: "ask_user", args: {} }] });
    expect(calls()).toBe(before);
    expect(h.state.counters.duplicateCalls).toBe(1);
  });

  it("a restored session archives what its log holds", () => {
    const h = longSession(200);
    const restored = restoreState(h.state.config, h.log);
    expect(Object.keys(restored.calls).length).toBeLessThanOrEqual(2 * SETTLED_KEPT);
    expect(restored.archive).not.toBeNull();
    // A restore reads its selection only (calls, outcomes, the last turn): the same state.
    const selected = restoreSelection(h.log);
    expect(selected.length).toBeLessThan(h.log.length / 2);
    expect(restoreState(h.state.config, selected, h.log.at(-1)!.seq)).toEqual(restored);
  });
});
