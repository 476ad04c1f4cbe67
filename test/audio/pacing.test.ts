/**
 * A line's audio in 20 ms frames (audio/pacing.ts): whole frames of each codec, the last
 * padded with that codec's silence; in real time, each frame at its own due time from the
 * start (a late frame does not push the next ones back), none after the call stopped.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ALAW_LINE, type LineCodec, MULAW_LINE } from "../../src/audio/line-audio.js";
import { FRAME_MS, frameBytes, sendInFrames, wholeFrame } from "../../src/audio/pacing.js";

const L16_16K: LineCodec = { kind: "l16", rate: 16000 };

describe("frames of a line's codec", () => {
  it.each([
    [MULAW_LINE, 160, 0xff],
    [ALAW_LINE, 160, 0xd5],
    [L16_16K, 640, 0],
  ] as const)("%o: %i bytes a frame, padded with %i", (codec, bytes, silence) => {
    expect(frameBytes(codec)).toBe(bytes);
    const frame = wholeFrame(codec, Uint8Array.of(1, 2, 3));
    expect(frame.length).toBe(bytes);
    expect([...frame.subarray(0, 3)]).toEqual([1, 2, 3]);
    expect(frame.subarray(3).every((b) => b === silence)).toBe(true);
  });

  it("all at once: whole frames, the last padded", async () => {
    const sent: Uint8Array[] = [];
    const audio = new Uint8Array(400).fill(7);
    await sendInFrames(MULAW_LINE, audio, {
      realTime: false,
      now: () => 0,
      stopped: () => false,
      send: (f) => sent.push(f),
    });
    expect(sent.map((f) => f.length)).toEqual([160, 160, 160]);
    expect(sent[2]!.subarray(0, 80).every((b) => b === 7)).toBe(true);
    expect(sent[2]!.subarray(80).every((b) => b === 0xff)).toBe(true);
  });
});

describe("in real time", () => {
  afterEach(() => vi.useRealTimers());

  it("frame i goes when (i + 1) × 20 ms have passed since the start, and none once stopped", async () => {
    vi.useFakeTimers();
    const start = Date.now();
    const at: number[] = [];
    let stopped = false;
    const done = sendInFrames(MULAW_LINE, new Uint8Array(160 * 5), {
      realTime: true,
      now: () => Date.now(),
      stopped: () => stopped,
      send: () => {
        at.push(Date.now() - start);
        if (at.length === 3) stopped = true;
      },
    });
    await vi.advanceTimersByTimeAsync(10 * FRAME_MS);
    await done;
    expect(at).toEqual([20, 40, 60]);
  });
});
