import { describe, expect, it } from "vitest";
import {
  AudioRecording,
  KEY_SILENT_AFTER_MS,
  KEY_SILENT_BEFORE_MS,
  PART_CLOSE_SLACK_MS,
} from "../../src/recording/audio-recording.js";
import type { RecordedPart } from "../../src/recording/audio-timeline.js";
import { AudioTimeline, HEARD, SAID, TRACKS } from "../../src/recording/audio-timeline.js";

/** `ms` of a 16 kHz PCM16 tone (as a client sends it), loud enough to tell from silence. */
function tone16(ms: number, amplitude = 8000): Uint8Array {
  const samples = new Int16Array((16000 * ms) / 1000);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 16000));
  return new Uint8Array(samples.buffer);
}

/** `ms` of the model's 24 kHz PCM16 (a constant level: easy to find, no resampler ripple). */
function level24(ms: number, value = 6000): Uint8Array {
  return new Uint8Array(new Int16Array((24000 * ms) / 1000).fill(value).buffer);
}

/** One track of the parts laid end to end, from sample 0 (absent parts are silence). */
function track(parts: readonly RecordedPart[], which: number, partSamples: number): Int16Array {
  const last = Math.max(-1, ...parts.map((p) => p.index));
  const out = new Int16Array((last + 1) * partSamples);
  for (const part of parts) {
    const samples = new Int16Array(part.bytes.buffer, part.bytes.byteOffset, part.bytes.length / 2);
    for (let i = 0; i * TRACKS < samples.length; i++)
      out[part.index * partSamples + i] = samples[i * TRACKS + which]!;
  }
  return out;
}

/** The first and last sample of a track louder than `floor` (null: silent throughout). */
function extent(samples: Int16Array, floor = 200): [number, number] | null {
  let first = -1;
  let last = -1;
  samples.forEach((v, i) => {
    if (Math.abs(v) > floor) {
      if (first === -1) first = i;
      last = i;
    }
  });
  return first === -1 ? null : [first, last];
}

const ms = (samples: number, rate = 16000) => (samples * 1000) / rate;

describe("the audio timeline", () => {
  it("places samples in the parts they fall in, across a part's end, and takes parts once", () => {
    const timeline = new AudioTimeline(1000, 100); // 100 samples a part
    timeline.mix(HEARD, 90, new Int16Array(20).fill(7));
    const first = timeline.takeBefore(100);
    expect(first.map((p) => p.index)).toEqual([0]);
    // A part taken takes nothing more: what falls there is counted, not kept.
    timeline.mix(SAID, 95, new Int16Array(10).fill(3));
    expect(timeline.lateSamples).toBe(5);
    const rest = timeline.takeAll();
    const heard = track([...first, ...rest], HEARD, 100);
    expect([...heard.slice(88, 112)]).toEqual([0, 0, ...Array(20).fill(7), 0, 0].slice(0, 24));
    // The last part is cut where its audio ends.
    expect(rest.at(-1)?.bytes.length).toBe(10 * TRACKS * 2);
  });

  it("keeps a silenced range silent for audio placed there later (and clamps mixes)", () => {
    const timeline = new AudioTimeline(1000, 100);
    timeline.silence(HEARD, 10, 20);
    timeline.mix(HEARD, 0, new Int16Array(30).fill(30000));
    timeline.mix(HEARD, 0, new Int16Array(30).fill(30000));
    const heard = track(timeline.takeAll(), HEARD, 100);
    expect(heard[5]).toBe(32767);
    expect([...heard.slice(10, 20)]).toEqual(Array(10).fill(0));
    expect(heard[25]).toBe(32767);
  });
});

describe("a session's audio recording", () => {
  const format = { encoding: "pcm16", rate: 16000 } as const;

  it("places a client's stream where it was heard and the model's from when it was sent", () => {
    const recording = new AudioRecording(format, 1000);
    // The user speaks 200 ms, arriving at 1000-1200 ms as 20 ms chunks.
    for (let i = 1; i <= 10; i++)
      recording.take([{ kind: "heard", client: "a", at: 1000 + i * 20, pcm: tone16(20) }]);
    // The model's reply: 600 ms of audio, all sent at 1500 ms (faster than real time).
    for (let i = 0; i < 3; i++) recording.take([{ kind: "said", at: 1500, pcm: level24(200) }]);
    const parts = recording.remainingParts();
    const heard = extent(track(parts, HEARD, 16000));
    const said = extent(track(parts, SAID, 16000), 3000);
    expect(heard).not.toBeNull();
    expect(said).not.toBeNull();
    // Within a few ms (the resampler's delay, a tone's zero crossings) of the timeline's.
    expect(ms(heard![0])).toBeGreaterThanOrEqual(1000);
    expect(ms(heard![0])).toBeLessThan(1010);
    expect(Math.abs(ms(heard![1]) - 1200)).toBeLessThan(5);
    expect(Math.abs(ms(said![0]) - 1500)).toBeLessThan(5);
    expect(Math.abs(ms(said![1]) - 2100)).toBeLessThan(5);
  });

  it("clears what the model sent past a cut (a barge-in); without the cut it stays (control)", () => {
    const said = (cut: boolean) => {
      const recording = new AudioRecording(format, 1000);
      recording.take([{ kind: "said", at: 500, pcm: level24(1000) }]);
      if (cut) recording.take([{ kind: "cut", at: 800 }]);
      recording.take([{ kind: "said", at: 900, pcm: level24(100) }]);
      return extent(track(recording.remainingParts(), SAID, 16000), 3000);
    };
    const whole = said(false);
    const cut = said(true);
    // Without the cut the reply runs to 1500 ms and the next audio follows it (control).
    expect(ms(whole![1])).toBeGreaterThan(1550);
    // With it, the reply stops at 800 ms and the next audio begins when it was sent.
    const recording = new AudioRecording(format, 1000);
    recording.take([
      { kind: "said", at: 500, pcm: level24(1000) },
      { kind: "cut", at: 800 },
    ]);
    expect(
      Math.abs(ms(extent(track(recording.remainingParts(), SAID, 16000), 3000)![1]) - 800),
    ).toBeLessThan(5);
    expect(Math.abs(ms(cut![1]) - 1000)).toBeLessThan(5);
  });

  it("silences a key's tone around its stream position; without the key it is heard (control)", () => {
    const heard = (key: boolean) => {
      const recording = new AudioRecording(format, 1000);
      // Speech, a 200 ms tone (the key), speech again: one continuous stream.
      let at = 2000;
      for (const chunk of [tone16(500, 3000), tone16(200, 12000), tone16(500, 3000)]) {
        for (let i = 0; i < chunk.length; i += 640) {
          at += 20;
          recording.take([{ kind: "heard", client: "line", at, pcm: chunk.slice(i, i + 640) }]);
        }
        // The key's event comes as its tone ends.
        if (key && chunk.length === 6400) recording.take([{ kind: "key", client: "line", at }]);
      }
      return track(recording.remainingParts(), HEARD, 16000);
    };
    const toneAt = (samples: Int16Array) =>
      extent(samples.slice(32000 + 8000, 32000 + 11200), 9000);
    // Control: the tone is there.
    expect(toneAt(heard(false))).not.toBeNull();
    const silenced = heard(true);
    expect(toneAt(silenced)).toBeNull();
    // What is silent is the key's span, not the speech around it.
    const keyEnd = 32000 + 11200;
    const from = keyEnd - (16000 * KEY_SILENT_BEFORE_MS) / 1000;
    const to = keyEnd + (16000 * KEY_SILENT_AFTER_MS) / 1000;
    expect(extent(silenced.slice(from, to), 0)).toBeNull();
    expect(extent(silenced.slice(from - 1600, from))).not.toBeNull();
    expect(extent(silenced.slice(to, to + 1600))).not.toBeNull();
  });

  it("takes a part once the clock is past its end and the slack, never before", () => {
    const recording = new AudioRecording(format, 1000);
    recording.take([{ kind: "heard", client: "a", at: 900, pcm: tone16(20) }]);
    expect(recording.closedParts(1000 + PART_CLOSE_SLACK_MS - 1)).toEqual([]);
    expect(recording.closedParts(1000 + PART_CLOSE_SLACK_MS).map((p) => p.index)).toEqual([0]);
  });

  it("records a phone line at 8 kHz from its μ-law both ways", () => {
    const recording = new AudioRecording({ encoding: "g711_ulaw", rate: 8000 }, 1000);
    // μ-law 0x00 is the loudest negative sample; 0xFF is silence.
    recording.take([
      { kind: "heard", client: "line", at: 300, pcm: new Uint8Array(160).fill(0x00) },
      { kind: "said", at: 600, pcm: new Uint8Array(160).fill(0x00) },
    ]);
    const parts = recording.remainingParts();
    expect(Math.abs(ms(extent(track(parts, HEARD, 8000), 1000)![0], 8000) - 280)).toBeLessThan(5);
    expect(Math.abs(ms(extent(track(parts, SAID, 8000), 1000)![0], 8000) - 600)).toBeLessThan(5);
  });
});
