import { describe, expect, it } from "vitest";
import { Harness } from "../core/harness.js";

/**
 * A step's timeline rows are written in the same statement as its events (one statement a
 * step, not two), and never lost with them: when the log refuses the events, the rows are
 * written by themselves, and the refused events' frames are not sent.
 */
describe("a step's timeline rows", () => {
  it("go with the step's events, in the same write", () => {
    const h = new Harness();
    h.connect("a");
    const before = { ...h.traceWrites };
    h.receive({ type: "client_text", clientId: "a", text: "hello" });
    expect(h.traces).toContain("USER");
    expect(h.traceWrites).toEqual({ withEvents: before.withEvents + 1, alone: before.alone });
  });

  it("are written by themselves when the log refuses the step's events", () => {
    const h = new Harness();
    h.connect("a");
    const seen = h.durableFrames("a").length;
    const before = { ...h.traceWrites };
    h.refuseAppends = true;
    h.receive({ type: "client_text", clientId: "a", text: "hello" });
    expect(h.reported).toEqual([expect.stringContaining("log write failed")]);
    expect(h.traces).toContain("USER");
    expect(h.traceWrites).toEqual({ withEvents: before.withEvents, alone: before.alone + 1 });
    // What the log refused, no client saw; every client is told (ephemeral, not fatal).
    expect(h.durableFrames("a")).toHaveLength(seen);
    expect(h.clients.get("a")?.frames.at(-1)).toMatchObject({
      type: "error",
      code: "log_write_failed",
      fatal: false,
    });
    // The session goes on: the next write lands and is sent.
    h.refuseAppends = false;
    h.receive({ type: "client_text", clientId: "a", text: "again" });
    expect(h.durableFrames("a").at(-1)).toMatchObject({ type: "user", text: "again" });
  });
});
