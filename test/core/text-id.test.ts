/**
 * A line sent again with its `textId` (a client that lost its socket before it saw the line's
 * `user` frame) is taken once; without the id it is two turns (the control: the id is what
 * protects).
 */
import { describe, expect, it } from "vitest";
import type { Harness } from "./harness.js";
import { live, userTurns } from "./sessions.js";

const line = (h: Harness, textId?: string) =>
  h.receive({ type: "client_text", clientId: "phone", text: "book a table", textId });
const userTexts = (h: Harness) => h.sentToModel.filter((c) => c.type === "user_text");

describe("a line sent again with its textId", () => {
  it("is taken once: one turn, one user frame (with the id), one send to the model", () => {
    const h = live();
    line(h, "L1");
    h.model({ type: "text_delta", text: "Done." });
    h.model({ type: "turn_complete" });
    line(h, "L1");
    expect(userTurns(h)).toEqual([["t1", "book a table"]]);
    expect(h.durableFrames("phone").filter((f) => f.type === "user")).toEqual([
      expect.objectContaining({ turnId: "t1", text: "book a table", textId: "L1" }),
    ]);
    expect(userTexts(h)).toHaveLength(1);
    expect(h.traces).toContain("TEXT_DUPLICATE");
    expect(h.state.turn).toBeNull();
  });

  it("is taken once while the first is still held for the speech's answer", () => {
    const h = live();
    h.receive({ type: "client_audio", clientId: "phone", pcm: new Uint8Array(640) });
    h.receive({ type: "client_audio_end", clientId: "phone" });
    line(h, "L1");
    expect(h.traces).toContain("LINE_HELD");
    line(h, "L1");
    expect(h.fireNextTimer()).toBe(true);
    expect(userTurns(h)).toEqual([["t1", "book a table"]]);
    expect(userTexts(h)).toHaveLength(1);
  });

  it("another id, or a line of the same text with another id, is a turn of its own", () => {
    const h = live();
    line(h, "L1");
    line(h, "L2");
    expect(userTurns(h).map(([, text]) => text)).toEqual(["book a table", "book a table"]);
  });

  it("control: without a textId the same line sent again is a second turn", () => {
    const h = live();
    line(h);
    h.model({ type: "text_delta", text: "Done." });
    h.model({ type: "turn_complete" });
    line(h);
    expect(userTurns(h)).toHaveLength(2);
    expect(userTexts(h)).toHaveLength(2);
  });
});
