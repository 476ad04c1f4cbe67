import { describe, expect, it } from "vitest";
import { replayBatches } from "../../src/session/sockets.js";

describe("replay batches", () => {
  const frames = Array.from({ length: 1200 }, (_, i) =>
    JSON.stringify({ type: "text", seq: i + 1, text: "x" }),
  );

  it("hold every frame once, in order, at most 512 to a message", () => {
    const batches = replayBatches(frames).map(
      (m) => JSON.parse(m) as { type: string; frames: unknown[] },
    );
    expect(batches.map((b) => b.frames.length)).toEqual([512, 512, 176]);
    expect(batches.every((b) => b.type === "replay")).toBe(true);
    expect(batches.flatMap((b) => b.frames)).toEqual(frames.map((f) => JSON.parse(f)));
  });

  it("keep a message near 256 KB; a frame larger than that goes alone", () => {
    const big = JSON.stringify({ type: "text", seq: 1, text: "y".repeat(300_000) });
    const batches = replayBatches([frames[0]!, big, frames[1]!]);
    expect(batches).toHaveLength(3);
    expect(replayBatches([])).toEqual([]);
  });
});
