/**
 * A socket that keeps sending frames over MAX_FRAME_BYTES is closed (src/session/oversized-frames.ts):
 * three within a minute are answered and go on; the fourth closes it; one now and then never does.
 * The workerd test with 8 and 30 MiB messages is test/session/oversized-flood.workers.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  OVERSIZED_FRAMES_ALLOWED,
  OVERSIZED_WINDOW_MS,
  OversizedFrames,
} from "../../src/session/oversized-frames.js";

const socket = () => ({}) as WebSocket;

describe("OversizedFrames", () => {
  it("lets three through within the window and closes on the fourth; each socket on its own", () => {
    const frames = new OversizedFrames();
    const a = socket();
    const b = socket();
    expect(OVERSIZED_FRAMES_ALLOWED).toBe(3);
    for (let i = 0; i < 3; i++) expect(frames.tooMany(a, 1_000 + i)).toBeNull();
    expect(frames.tooMany(b, 1_010)).toBeNull();
    expect(frames.tooMany(a, 1_020)).toBe(4);
  });

  it("forgets what is older than the window: an honest client that errs now and then is never closed", () => {
    const frames = new OversizedFrames();
    const a = socket();
    for (let i = 0; i < 20; i++)
      expect(frames.tooMany(a, i * (OVERSIZED_WINDOW_MS / 3 + 1))).toBeNull();
  });

  it("with the bound off (the workerd test's control) never closes", () => {
    const frames = new OversizedFrames(Number.POSITIVE_INFINITY);
    const a = socket();
    for (let i = 0; i < 50; i++) expect(frames.tooMany(a, i)).toBeNull();
  });
});
