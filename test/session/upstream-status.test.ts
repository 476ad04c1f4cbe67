/**
 * The model connection's durable `status` frames across planned moves and drops
 * (docs/PROTOCOL-REFERENCE.md, "The model connection"), through the core and the production interpreter.
 */
import { describe, expect, it } from "vitest";
import type { Harness } from "../core/harness.js";
import { live } from "../core/sessions.js";

const statuses = (h: Harness) => h.log.flatMap((e) => (e.kind === "status" ? [e.state] : []));
const opens = (h: Harness) => h.effects.filter((e) => e.type === "open_upstream").length;

/** A goAway answered by a move: the old connection closes, the next one is set up. */
function goAwayMove(h: Harness): void {
  const before = opens(h);
  h.model({ type: "go_away", timeLeftMs: 50_000 });
  expect(opens(h)).toBe(before + 1);
  h.model({ type: "setup_complete" });
}

describe("a goAway move", () => {
  it("with nothing in flight is no loss: it writes no status, however often it comes", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    for (let i = 0; i < 5; i++) {
      h.advance(2_000);
      goAwayMove(h);
    }
    expect(h.traces.filter((k) => k === "UPSTREAM_RECONNECT")).toHaveLength(5);
    expect(statuses(h)).toEqual(["connecting", "live"]);
    // The session goes on on the last connection.
    h.input({ type: "client_text", clientId: "phone", text: "still there?" });
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "still there?" });
  });

  it("whose next connection fails says `reconnecting` then, and `live` once one proves itself", () => {
    const h = live();
    h.advance(20_000); // the first connection proved itself (up healthyAfterMs)
    h.model({ type: "go_away", timeLeftMs: 50_000 });
    expect(statuses(h)).toEqual(["connecting", "live"]);
    h.input({ type: "upstream_failed", message: "connection refused" });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting"]);
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    // The failed one never served: this one is folded until it proves itself.
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting"]);
    h.advance(10_000);
    h.model({ type: "usage", usage: { promptTokens: 1, responseTokens: 1, totalTokens: 2 } });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting", "live"]);
  });

  it("whose resumption handle is refused stays quiet: the fallback is seeded from the log", () => {
    const h = live();
    h.model({ type: "resumption_update", handle: "h1", resumable: true });
    h.model({ type: "go_away", timeLeftMs: 50_000 });
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "resume", handle: "h1" },
    });
    h.model({ type: "upstream_closed", code: 1007, reason: "bad handle", fatal: true });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "rebuild" },
    });
    h.model({ type: "setup_complete" });
    expect(statuses(h)).toEqual(["connecting", "live"]);
  });

  it("forced at the deadline while a call runs says `reconnecting` and `live` (it may cut or carry the turn)", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "show me topics" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.model({ type: "go_away", timeLeftMs: 10_000 });
    expect(opens(h)).toBe(1); // the client call holds the move
    h.advance(10_000);
    expect(opens(h)).toBe(2);
    h.model({ type: "setup_complete" });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting", "live"]);
  });
});

describe("a connection that fails without serving", () => {
  it("folds the next one: no `live` until it serves a turn or stays up healthyAfterMs", () => {
    const h = live();
    h.advance(1);
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting"]);
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting", "live"]);
  });

  it("but one that served a turn, however soon it drops, is followed by `live` at once", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    h.model({ type: "upstream_closed", code: 1011, reason: "", fatal: false });
    expect(h.fireNextTimer()).toBe(true);
    h.model({ type: "setup_complete" });
    expect(statuses(h)).toEqual(["connecting", "live", "reconnecting", "live"]);
  });
});
