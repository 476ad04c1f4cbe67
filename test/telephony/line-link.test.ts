/**
 * The line link every carrier but Twilio speaks through, against a recording wire: the
 * model's audio goes out in whole 20 ms frames of the line's codec (the reply's last part
 * padded with silence), a mark after each batch; marks say what was heard; an interruption
 * clears and tells the session how much played; a clear makes the pending marks moot (a
 * carrier that never gives them back is not waited for); a close waits for the goodbye.
 */
import { describe, expect, it } from "vitest";
import { pcm16ToAlaw, pcm16ToMulaw } from "../../src/telephony/audio/g711.js";
import { type LineCodec, MULAW_LINE } from "../../src/telephony/audio/line-audio.js";
import type { CallStreamHooks } from "../../src/telephony/carrier-contract.js";
import { LineLink, type LineWire } from "../../src/telephony/line-link.js";
import { sine } from "./tones.js";

function recorded(codec: LineCodec = MULAW_LINE, sessionAudio: "pcm16" | "g711_ulaw" = "pcm16") {
  const sent: Array<{ audio: number } | { mark: string } | "clear" | { close: number }> = [];
  const told: string[] = [];
  const wire: LineWire = {
    bytesOf: (payload) => (typeof payload === "string" ? null : payload),
    audio: (bytes) => sent.push({ audio: bytes.length }),
    mark: (name) => sent.push({ mark: name }),
    clear: () => sent.push("clear"),
    close: (code) => sent.push({ close: code }),
  };
  const hooks: CallStreamHooks = {
    played: (ms) => told.push(`played ${ms}`),
    turnEnded: () => told.push("turn ended"),
    clientToolCall: () => told.push("client tool"),
    drained: () => told.push("drained"),
    cut: () => told.push("cut"),
    lineProblem: (message) => told.push(`problem: ${message}`),
  };
  return { link: new LineLink(wire, hooks, codec, sessionAudio), sent, told };
}

/** `ms` of 24 kHz PCM16 (the session's audio out) as bytes. */
const modelAudio = (ms: number) => new Uint8Array(sine(220, 24000, ms * 24, 2000).buffer);

describe("the line link's audio out", () => {
  it("sends whole 20 ms frames, carries the rest, and pads the reply's last part", () => {
    const { link, sent } = recorded();
    link.audio(modelAudio(30)); // 240 line bytes: one frame out, 80 carried
    link.audio(modelAudio(30)); // 320 with the carried: two frames
    link.frame({ type: "turn_complete", turnId: "t" } as never);
    expect(sent).toEqual([
      { audio: 160 },
      { mark: "0:20" },
      { audio: 320 },
      { mark: "0:60" },
      // Nothing was carried after the second chunk: nothing to pad.
    ]);
    const { link: other, sent: out } = recorded();
    other.audio(modelAudio(30));
    other.frame({ type: "turn_complete", turnId: "t" } as never);
    expect(out).toEqual([{ audio: 160 }, { mark: "0:20" }, { audio: 160 }, { mark: "0:40" }]);
  });

  it("frames 16 kHz linear PCM in 640-byte frames (Vonage's only size)", () => {
    const { link, sent } = recorded({ kind: "l16", rate: 16000 });
    link.audio(modelAudio(50));
    expect(sent).toEqual([{ audio: 1280 }, { mark: "0:40" }]);
  });

  it("is drained once the marks of an ended reply came back", () => {
    const { link, told } = recorded();
    link.audio(modelAudio(40));
    link.frame({ type: "turn_complete", turnId: "t" } as never);
    expect(link.drained).toBe(false);
    link.marked("0:40");
    expect(link.drained).toBe(true);
    expect(told.at(-1)).toBe("drained");
  });

  it("on an interruption clears, tells what was heard, and needs no mark back to close", () => {
    const { link, sent, told } = recorded();
    link.audio(modelAudio(60));
    link.marked("0:20"); // a mark of the batch... named for 60 ms: heard up to 20 of it
    link.frame({ type: "interrupted", turnId: "t", reason: "barge_in" } as never);
    expect(sent.at(-1)).toBe("clear");
    expect(told).toContain("played 20");
    expect(told).toContain("cut");
    // The clear made the pending mark moot (Plivo and Vonage never give it back).
    link.close(1000, "bye");
    expect(sent.at(-1)).toEqual({ close: 1000 });
  });

  it("waits for the goodbye's mark before it closes, and closes on it", () => {
    const { link, sent } = recorded();
    link.audio(modelAudio(40));
    link.close(1000, "bye");
    expect(sent.at(-1)).toEqual({ mark: "0:40" });
    link.marked("0:40");
    expect(sent.at(-1)).toEqual({ close: 1000 });
  });
});

describe("the line link's audio in", () => {
  it("gives an A-law line's audio to a μ-law session by table, and to a PCM16 one resampled", () => {
    const alaw = pcm16ToAlaw(sine(300, 8000, 160, 6000));
    const ulawSession = recorded({ kind: "alaw" }, "g711_ulaw").link.callerAudio(alaw);
    expect(ulawSession?.length).toBe(160);
    const pcmSession = recorded({ kind: "alaw" }, "pcm16").link.callerAudio(alaw);
    expect(pcmSession?.length).toBe(640); // 320 samples at 16 kHz
  });

  it("passes 16 kHz linear PCM to a PCM16 session as it came", () => {
    const frame = new Uint8Array(sine(300, 16000, 320, 6000).buffer);
    const out = recorded({ kind: "l16", rate: 16000 }).link.callerAudio(frame);
    expect([...(out ?? [])]).toEqual([...frame]);
  });

  it("reports a line whose audio is in the other law, once", () => {
    const { link, told } = recorded({ kind: "alaw" });
    // μ-law on a line declared A-law: 300 ms of a tone, in 20 ms frames.
    const pcm = sine(300, 8000, 2400, 6000);
    for (let at = 0; at < 2400; at += 160)
      link.callerAudio(pcm16ToMulaw(pcm.subarray(at, at + 160)));
    expect(told.filter((t) => t.startsWith("problem"))).toEqual([
      "problem: the caller's audio reads as μ-law, but the stream declared A-law: it is heard garbled (the carrier's codec setting?)",
    ]);
  });
});
