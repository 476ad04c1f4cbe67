/**
 * One writer per session log (issue 50). Local `wrangler dev` starts a new instance of an object
 * on a reload while the old one still holds its sockets: both wrote the log, the store's seq
 * rule refused the old one's next write, and the old one numbered on from what the new one had
 * written — two writers, a turn ended twice, frames never sent. Now the refused writer stands
 * down: it takes no input, writes and sends nothing more, and lets its clients go (the shell
 * closes them with 1012: they resume on the instance that writes).
 */
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import type { Harness } from "../core/harness.js";
import { live } from "../core/sessions.js";

/** Another instance writes the log's next event (recovery's closing of the open turn, say). */
function foreignWrite(h: Harness, turnId: string): HistoryEvent {
  const event: HistoryEvent = {
    kind: "interrupted",
    turnId,
    reason: "upstream_lost",
    seq: (h.log.at(-1)?.seq ?? 0) + 1,
    at: h.now,
  };
  h.log.push(event);
  return event;
}

/** A turn open, the model speaking; then the other writer writes, then the model goes on. */
function splitBrain(seqRule: "superseded" | "plain"): Harness {
  const h = live();
  h.seqRule = seqRule;
  h.input({ type: "client_text", clientId: "phone", text: "hi" });
  h.model({ type: "text_delta", text: "Hello," });
  foreignWrite(h, "t1");
  h.model({ type: "text_delta", text: " how can I help?" });
  h.model({ type: "turn_complete" });
  h.input({ type: "client_text", clientId: "phone", text: "and then?" });
  return h;
}

const ends = (h: Harness, turnId: string) =>
  h.log.filter(
    (e) => (e.kind === "turn_complete" || e.kind === "interrupted") && e.turnId === turnId,
  ).length;

describe("a log with another writer", () => {
  it("the instance whose write it refuses stands down: nothing more written, sent or taken in", () => {
    const h = splitBrain("superseded");
    expect(h.supersededBy).toHaveLength(1);
    expect(h.supersededBy[0]).toMatch(/another instance of the session wrote its log/);
    // The log is the other writer's: its turn end stands alone.
    expect(h.log.map((e) => e.kind).slice(-1)).toEqual(["interrupted"]);
    expect(ends(h, "t1")).toBe(1);
    // Nothing was sent after the refusal: no log_write_failed, no frame the log lacks.
    const seen = h.durableFrames("phone").map((f) => f.seq);
    expect(seen.every((seq) => h.log.some((e) => e.seq === seq))).toBe(true);
    expect(h.ephemeralFrames("phone").some((f) => f.type === "error")).toBe(false);
    expect(h.sentToModel.some((c) => c.type === "user_text" && c.text === "and then?")).toBe(false);
  });

  it("control: read as any refused write, the instance numbers on after the other's writes", () => {
    const h = splitBrain("plain");
    expect(h.supersededBy).toEqual([]);
    // Two writers of one log: the turn ended by the other, and by this one too.
    expect(ends(h, "t1")).toBe(2);
    expect(h.ephemeralFrames("phone").some((f) => f.type === "error")).toBe(true);
  });
});
