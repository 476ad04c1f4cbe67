// The playback buffer on its own, time as an argument.
import { describe, expect, it } from "vitest";
import { PlaybackBuffer } from "../../../src/simulator/twilio/playback.js";

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);
const total = (chunks: Uint8Array[]) => chunks.reduce((n, c) => n + c.length, 0);

describe("PlaybackBuffer", () => {
  it("plays 8 bytes a ms from when audio arrives, and a mark after its audio", () => {
    const p = new PlaybackBuffer();
    p.enqueueAudio(bytes(160), 1000);
    expect(p.enqueueMark("m", 1000).marks).toEqual([]);
    const half = p.advance(1010);
    expect(total(half.played)).toBe(80);
    expect(half.marks).toEqual([]);
    const rest = p.advance(1020);
    expect(total(rest.played)).toBe(80);
    expect(rest.marks).toEqual(["m"]);
    expect(p.isIdle()).toBe(true);
  });

  it("plays nothing twice and nothing early, however often it is asked", () => {
    const p = new PlaybackBuffer();
    p.enqueueAudio(bytes(1000), 0);
    let played = 0;
    for (let t = 0; t <= 200; t += 3) played += total(p.advance(t).played);
    expect(played).toBe(1000);
  });

  it("echoes a mark at once when nothing is queued before it", () => {
    const p = new PlaybackBuffer();
    expect(p.enqueueMark("now", 5).marks).toEqual(["now"]);
  });

  it("clear returns every pending mark and drops the audio", () => {
    const p = new PlaybackBuffer();
    p.enqueueAudio(bytes(800), 0);
    p.enqueueMark("a", 0);
    p.enqueueAudio(bytes(800), 0);
    p.enqueueMark("b", 0);
    const cleared = p.clear(50);
    expect(total(cleared.played)).toBe(400);
    expect(cleared.marks).toEqual(["a", "b"]);
    expect(p.queuedMs()).toBe(0);
    expect(p.advance(1000)).toEqual({ played: [], marks: [] });
  });

  it("starts the next audio when it arrives after the queue ran dry", () => {
    const p = new PlaybackBuffer();
    p.enqueueAudio(bytes(80), 0);
    expect(total(p.advance(500).played)).toBe(80);
    p.enqueueAudio(bytes(800), 500);
    expect(total(p.advance(510).played)).toBe(80);
    expect(p.queuedMs()).toBe(90);
  });
});
