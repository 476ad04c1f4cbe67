/**
 * The check of a G.711 line's law: speech in the declared law is consistent, the same speech
 * in the other law a mismatch, in both directions; noise and silence give no verdict (they
 * cannot be told apart, and an honest line is never reported on them). The speech is
 * espeak-ng's, where the machine has it (as the guide says it does); a sum of harmonics stands
 * in where it has not.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { pcm16ToAlaw, pcm16ToMulaw } from "../../src/telephony/audio/g711.js";
import { LawCheck } from "../../src/telephony/audio/law-check.js";
import { createResampler } from "../../src/telephony/audio/resample.js";

/** A spoken question at 8 kHz (espeak-ng's 22.05 kHz WAV, resampled), or null without it. */
function spoken(): Int16Array | null {
  const run = spawnSync("espeak-ng", ["--stdout", "What time does the pharmacy open on Sunday?"], {
    maxBuffer: 8 * 1024 * 1024,
  });
  if (run.status !== 0 || run.stdout.length < 44) return null;
  const wav = run.stdout;
  const rate = wav.readUInt32LE(24);
  const samples = new Int16Array(
    wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.length - ((wav.length - 44) % 2)),
  );
  // espeak speaks at 22050 Hz: to 24 kHz by holding samples (enough for a voice), then down.
  const at24 = Int16Array.from(
    { length: Math.floor((samples.length * 24000) / rate) },
    (_, i) => samples[Math.floor((i * rate) / 24000)]!,
  );
  return createResampler(24000, 8000).push(at24);
}

/** A voice-like signal: a 140 Hz fundamental and its harmonics, with pauses. */
function harmonics(): Int16Array {
  const pcm = new Int16Array(16000);
  for (let i = 0; i < pcm.length; i++) {
    const voiced = Math.floor(i / 2400) % 2 === 0;
    let x = 0;
    for (let h = 1; h <= 8; h++) x += Math.sin((2 * Math.PI * 140 * h * i) / 8000) / h;
    pcm[i] = voiced ? Math.round(3000 * x) : 0;
  }
  return pcm;
}

function verdict(declared: "alaw" | "mulaw", bytes: Uint8Array) {
  const check = new LawCheck(declared);
  for (let at = 0; at < bytes.length; at += 160) check.push(bytes.subarray(at, at + 160));
  return check.verdict;
}

const speech = spoken();
const voices: Array<[string, Int16Array]> = [["harmonics", harmonics()]];
if (speech !== null) voices.push(["espeak-ng speech", speech]);

describe.each(voices)("the law check on %s", (_name, pcm) => {
  it("finds the declared law consistent", () => {
    expect(verdict("alaw", pcm16ToAlaw(pcm))).toBe("consistent");
    expect(verdict("mulaw", pcm16ToMulaw(pcm))).toBe("consistent");
  });

  it("finds the other law a mismatch (the control: the same audio, declared wrong)", () => {
    expect(verdict("alaw", pcm16ToMulaw(pcm))).toBe("mismatch");
    expect(verdict("mulaw", pcm16ToAlaw(pcm))).toBe("mismatch");
  });
});

describe("the law check on what cannot be judged", () => {
  it("gives no verdict on silence or on noise, in either law", () => {
    const noise = Int16Array.from(
      { length: 16000 },
      (_, i) => Math.round(3000 * Math.sin(i * 12.9898) * 43758.5453) % 3000,
    );
    for (const pcm of [new Int16Array(16000), noise]) {
      expect(verdict("alaw", pcm16ToAlaw(pcm))).toBeNull();
      expect(verdict("alaw", pcm16ToMulaw(pcm))).toBeNull();
    }
  });

  it("stops looking after a minute without evidence", () => {
    const check = new LawCheck("alaw");
    for (let i = 0; i < 3000; i++) check.push(new Uint8Array(160).fill(0xd5));
    // A loud mismatch after that minute is no longer looked at.
    const late = pcm16ToMulaw(harmonics());
    expect(check.push(late)).toBeNull();
    expect(check.verdict).toBeNull();
  });
});
