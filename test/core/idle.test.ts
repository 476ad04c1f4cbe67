/** Idle sessions cost nothing: the model connection closes after real silence, and no timer is left. */
import { describe, expect, it } from "vitest";
import { Harness } from "./harness.js";
import { live, opens } from "./sessions.js";

describe("idle sessions cost nothing", () => {
  it("the model connection closes after the idle time and reopens on the next input, resuming", () => {
    const h = new Harness({ idleTimeoutMs: 60_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    h.model({ type: "resumption_update", handle: "h9", resumable: true });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    h.model({ type: "resumption_update", handle: "h10", resumable: true });
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    // Said to clients: closed on purpose, not lost.
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
    // No timer is left either: nothing keeps the object in memory (npm run bench measures it
    // leaving memory about 10 s later).
    expect([...h.timers.keys()]).toEqual([]);
    h.input({ type: "client_text", clientId: "phone", text: "still there?" });
    expect(h.effects.filter((e) => e.type === "open_upstream").at(-1)).toMatchObject({
      open: { mode: "resume", handle: "h10" },
    });
    // Queued until the new connection is live.
    expect(h.sentToModel.filter((c) => c.type === "user_text")).toHaveLength(1);
    h.model({ type: "setup_complete" });
    expect(h.sentToModel.at(-1)).toMatchObject({ type: "user_text", text: "still there?" });
  });

  // Found by the black-box attack (fourth round).
  it("goAway moves are not activity: a session nobody speaks to goes idle all the same", () => {
    const h = live({ idleTimeoutMs: 60_000 });
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "text_delta", text: "Hello." });
    h.model({ type: "turn_complete" });
    // The service moves the connection every 1.5 s (the attack's goAwayAfterMs=1500).
    for (let t = 0; t < 90_000 && h.state.upstream.phase !== "closed"; t += 1_500) {
      h.advance(1_500);
      if (h.state.upstream.phase !== "live") continue;
      const before = opens(h);
      h.model({ type: "go_away", timeLeftMs: 50_000 });
      if (opens(h) > before) h.model({ type: "setup_complete" });
    }
    expect(h.traces).toContain("UPSTREAM_IDLE_CLOSE");
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
  });
});

describe("idle after a turn the model never answered", () => {
  // Found by the black-box attack: the slots a timed-out turn left for the model's late
  // answers kept the session "not quiet" for ever, so its model connection was never closed
  // and its object never left memory.
  const timedOut = () => {
    const h = new Harness({ idleTimeoutMs: 60_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    // Silent model: two nudges, then model_timeout ends the turn.
    for (let i = 0; i < 3; i++) h.advance(15_000);
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
    return h;
  };

  it("a model silent after model_timeout is closed as idle; no timer is left", () => {
    const h = timedOut();
    h.advance(120_000);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
    expect([...h.timers.keys()]).toEqual([]);
    // The next line opens a new connection and gets its own answer.
    h.input({ type: "client_text", clientId: "phone", text: "are you there?" });
    h.model({ type: "setup_complete" });
    h.model({ type: "text_delta", text: "Yes, here." });
    h.model({ type: "turn_complete" });
    expect(h.durableFrames("phone").filter((f) => f.type === "text" && f.turnId === "t2")).toEqual([
      expect.objectContaining({ text: "Yes, here." }),
    ]);
  });

  it("a late answer that comes, then silence: closed as idle after the model's last word", () => {
    const h = timedOut();
    h.advance(5_000);
    h.model({ type: "text_delta", text: "Sorry, I was slow." });
    h.model({ type: "turn_complete" });
    // It reaches no client (its turn ended), and the timeline says so.
    expect(h.durableFrames("phone").some((f) => f.type === "text")).toBe(false);
    expect(h.traces).toContain("SUPPRESSED");
    expect(h.state.counters.suppressedGenerations).toBe(1);
    h.advance(30_000);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    h.advance(90_000);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
  });
});

describe("the idle timer under live audio", () => {
  it("is set once, not once per audio frame, and fires only after real silence", () => {
    const h = new Harness({ idleTimeoutMs: 10_000 });
    h.connect("phone");
    h.model({ type: "setup_complete" });
    const before = h.effects.filter((e) => e.type === "set_timer" && e.timer === "idle").length;
    for (let i = 0; i < 100; i++) {
      h.advance(20);
      h.input({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    }
    expect(h.effects.filter((e) => e.type === "set_timer" && e.timer === "idle").length).toBe(
      before,
    );
    // The first firing comes early (audio kept flowing): it re-arms for the rest.
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.some((e) => e.type === "close_upstream")).toBe(false);
    expect(h.fireNextTimer()).toBe(true);
    expect(h.effects.findLast((e) => e.type === "close_upstream")).toMatchObject({
      reason: "idle",
    });
    // Said to clients: closed on purpose, not lost.
    expect(h.durableFrames("phone").at(-1)).toMatchObject({ type: "status", state: "idle" });
  });
});
