import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mulawFromWav, WavFormatError } from "../../../src/simulator/twilio/wav.js";

/** A WAV as sox writes μ-law: an 18-byte fmt chunk, a fact chunk, then data. */
function wav({
  tag = 7,
  rate = 8000,
  channels = 1,
  bits = 8,
  data = new Uint8Array([1, 2, 3]),
} = {}): Uint8Array {
  const fmt = 18;
  const size = 12 + (8 + fmt) + (8 + 4) + 8 + data.length + (data.length % 2);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  const ascii = (at: number, s: string) =>
    out.set(
      [...s].map((c) => c.charCodeAt(0)),
      at,
    );
  ascii(0, "RIFF");
  view.setUint32(4, size - 8, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  view.setUint32(16, fmt, true);
  view.setUint16(20, tag, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, rate, true);
  view.setUint32(28, rate * channels * (bits / 8), true);
  view.setUint16(32, channels * (bits / 8), true);
  view.setUint16(34, bits, true);
  ascii(38, "fact");
  view.setUint32(42, 4, true);
  view.setUint32(46, data.length, true);
  ascii(50, "data");
  view.setUint32(54, data.length, true);
  out.set(data, 58);
  return out;
}

function tool(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("mulawFromWav", () => {
  it("returns the data chunk of a μ-law 8 kHz mono WAV, past fmt and fact chunks", () => {
    expect([...mulawFromWav(wav({ data: new Uint8Array([0xff, 0x7e, 0x00]) }))]).toEqual([
      0xff, 0x7e, 0x00,
    ]);
  });

  it.each([
    ["PCM", { tag: 1, bits: 16 }],
    ["16 kHz", { rate: 16000 }],
    ["stereo", { channels: 2 }],
  ])("refuses %s, saying how to convert", (_, format) => {
    expect(() => mulawFromWav(wav(format))).toThrow(WavFormatError);
    expect(() => mulawFromWav(wav(format))).toThrow(/sox in\.wav -r 8000 -c 1 -e u-law/);
  });

  it("refuses what is not a WAV", () => {
    expect(() => mulawFromWav(new TextEncoder().encode("ID3 not a wav file"))).toThrow(/RIFF/);
  });

  it.skipIf(!tool("espeak-ng") || !tool("sox"))("reads espeak-ng speech converted by sox", () => {
    const dir = mkdtempSync(join(tmpdir(), "liveline-wav-"));
    const speech = join(dir, "x.wav");
    const mulaw = join(dir, "y.wav");
    execFileSync("espeak-ng", ["-w", speech, "hello there"]);
    execFileSync("sox", [speech, "-r", "8000", "-c", "1", "-e", "u-law", mulaw]);
    const samples = mulawFromWav(new Uint8Array(readFileSync(mulaw)));
    // About a second of speech, not silence (μ-law silence is 0xFF / 0x7F).
    expect(samples.length).toBeGreaterThan(4000);
    expect(samples.filter((b) => b !== 0xff && b !== 0x7f).length).toBeGreaterThan(1000);
  });
});
