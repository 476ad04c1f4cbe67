/**
 * `vad=energy`: both faces detect speech by energy in continuous audio (a phone call sends
 * 20 ms every 20 ms, silence included, and never an end): silence and line noise start
 * nothing, speech barges in only after BARGE_IN_MS of it, and `vadSilenceMs` of non-speech
 * ends an utterance, which is then answered once.
 */
import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../src/providers/base64.js";
import type { GeminiServerMessage } from "../../src/providers/gemini/schemas.js";
import { DEFAULT_KNOBS, parseKnobs } from "../../src/simulator/knobs.js";
import { BARGE_IN_MS, createVad, hear, rms } from "../../src/simulator/vad.js";
import { SimDriver, turnCompletes } from "./driver.js";
import { type Msg, OaiDriver, types } from "./openai-driver.js";

const VAD = { vad: "energy" } as const;

/** PCM16 little-endian bytes of these samples. */
function pcm16(samples: number[]): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  samples.forEach((v, i) => {
    const w = Math.max(-32768, Math.min(32767, Math.round(v))) & 0xffff;
    out[2 * i] = w & 0xff;
    out[2 * i + 1] = w >> 8;
  });
  return out;
}

/** `ms` of a 300 Hz sine at amplitude 8000 (RMS ≈ 5657): speech level. */
function speech(ms: number, rate: number): Uint8Array {
  const n = (rate * ms) / 1000;
  return pcm16(
    Array.from({ length: n }, (_, i) => 8000 * Math.sin((2 * Math.PI * 300 * i) / rate)),
  );
}

/** Digital silence, as espeak-ng writes between and after its words. */
function silence(ms: number, rate: number): Uint8Array {
  return new Uint8Array(((rate * ms) / 1000) * 2);
}

/** G.711 μ-law to linear PCM16. */
function ulaw(code: number): number {
  const u = ~code & 0xff;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << ((u >> 4) & 7)) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

/**
 * Line noise as a phone carrier sends it: 8 kHz μ-law codes of the two lowest segments
 * (|x| ≤ 120 of 32768, RMS ≈ 70: about -47 dBm0, a noisy line), upsampled to `rate` by repeating.
 */
function lineNoise(ms: number, rate: number, seed = 1): Uint8Array {
  let x = seed;
  const samples: number[] = [];
  for (let i = 0; i < (8000 * ms) / 1000; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const code = (x >> 16) & 0x1f; // 0..31: 0xF0..0xFF or 0x70..0x7F
    const v = ulaw(code < 16 ? 0xf0 | code : 0x70 | (code - 16));
    for (let r = 0; r < rate / 8000; r++) samples.push(v);
  }
  return pcm16(samples);
}

/** Cuts audio into 20 ms chunks. */
function chunks(audio: Uint8Array, rate: number): Uint8Array[] {
  const size = (rate / 50) * 2;
  const out: Uint8Array[] = [];
  for (let i = 0; i < audio.length; i += size) out.push(audio.subarray(i, i + size));
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Gemini face (16 kHz)
// ---------------------------------------------------------------------------

/** Streams audio to the Gemini face 20 ms at a time, the clock moving with it. */
function geminiStream(
  sim: SimDriver,
  audio: Uint8Array,
): Array<{ atMs: number; out: GeminiServerMessage[] }> {
  const steps: Array<{ atMs: number; out: GeminiServerMessage[] }> = [];
  let atMs = 0;
  for (const c of chunks(audio, 16000)) {
    sim.now += 20;
    atMs += 20;
    const out = sim.send({
      realtimeInput: { audio: { data: bytesToBase64(c), mimeType: "audio/pcm;rate=16000" } },
    });
    steps.push({ atMs, out });
  }
  return steps;
}

const transcriptions = (f: GeminiServerMessage) =>
  f.serverContent?.inputTranscription !== undefined;
const interrupts = (f: GeminiServerMessage) => f.serverContent?.interrupted === true;

describe("the energy detector", () => {
  const cfg = { sampleRate: 16000, vadThreshold: 500, vadSilenceMs: 500 };

  it("hears no speech in silence or μ-law line noise; hears a 300 Hz sine at 8000", () => {
    const noise = lineNoise(1000, 16000);
    const samples = new Int16Array(noise.buffer, noise.byteOffset, noise.length / 2);
    const noiseRms = rms(
      samples.reduce((sum, v) => sum + v * v, 0),
      samples.length,
    );
    expect(noiseRms).toBeGreaterThan(40); // not silence: a noisy line
    expect(noiseRms).toBeLessThan(cfg.vadThreshold / 4);
    const vad = createVad();
    expect(hear(vad, silence(5000, 16000), cfg)).toEqual([]);
    expect(hear(vad, lineNoise(5000, 16000), cfg)).toEqual([]);
    expect(vad.segment).toBeNull();
    const events = hear(vad, speech(200, 16000), cfg);
    expect(events[0]).toEqual({ type: "start", atMs: 10_000 });
    expect(events.filter((e) => e.type === "speech")).toHaveLength((200 - BARGE_IN_MS) / 20 + 1);
  });

  it("is indifferent to how the audio is chunked (odd byte counts included)", () => {
    const audio = concat(speech(600, 16000), silence(1000, 16000));
    const whole = hear(createVad(), audio, cfg);
    const vad = createVad();
    const pieces = [];
    for (let i = 0; i < audio.length; i += 333)
      pieces.push(...hear(vad, audio.subarray(i, i + 333), cfg));
    expect(pieces).toEqual(whole);
    expect(whole.at(-1)).toEqual({ type: "end", atMs: 600 });
  });

  it("drops a burst shorter than BARGE_IN_MS (a click, a cough)", () => {
    const events = hear(createVad(), concat(speech(60, 16000), silence(1000, 16000)), cfg);
    expect(events).toEqual([]);
  });
});

describe("Gemini face, vad=energy", () => {
  it("5 s of continuous silence and line noise: no utterance, nothing sent", () => {
    const sim = new SimDriver(VAD);
    sim.setup();
    const n = sim.frames.length;
    geminiStream(sim, concat(silence(2500, 16000), lineNoise(2500, 16000)));
    expect(sim.frames.length).toBe(n);
  });

  it("600 ms of speech then 1 s of silence: one utterance, ended vadSilenceMs after the speech, answered once", () => {
    const sim = new SimDriver(VAD);
    sim.setup();
    const steps = geminiStream(sim, concat(speech(600, 16000), silence(1000, 16000)));
    const ended = steps.filter((s) => s.out.some(transcriptions));
    expect(ended.map((s) => s.atMs)).toEqual([600 + DEFAULT_KNOBS.vadSilenceMs]);
    expect(ended[0]!.out[0]).toEqual({
      serverContent: { inputTranscription: { text: "What can you do?", finished: true } },
    });
    expect(sim.count(transcriptions)).toBe(1);
    expect(sim.count(turnCompletes)).toBe(1);
    expect(sim.text()).toContain("[#r1]");
    expect(sim.count(interrupts)).toBe(0);
  });

  it("vadSilenceMs sets the end; a pause shorter than it does not end the utterance", () => {
    const sim = new SimDriver({ ...VAD, vadSilenceMs: 800 });
    sim.setup();
    const steps = geminiStream(
      sim,
      concat(speech(300, 16000), silence(400, 16000), speech(300, 16000), silence(1000, 16000)),
    );
    expect(steps.filter((s) => s.out.some(transcriptions)).map((s) => s.atMs)).toEqual([
      1000 + 800,
    ]);
  });

  it("during a reply: silence and line noise never barge in; speech does after BARGE_IN_MS of it", () => {
    const sim = new SimDriver({ ...VAD, timeScale: 1 });
    sim.setup();
    sim.user("hi"); // a long greeting, paced in real time
    geminiStream(sim, concat(silence(1000, 16000), lineNoise(1000, 16000)));
    expect(sim.count(interrupts)).toBe(0);
    expect(sim.count(turnCompletes)).toBe(0);
    // A 60 ms burst and silence after it: no barge-in, no utterance.
    geminiStream(sim, concat(speech(60, 16000), silence(600, 16000)));
    expect(sim.count(interrupts)).toBe(0);
    expect(sim.count(transcriptions)).toBe(0);
    const steps = geminiStream(sim, speech(200, 16000));
    const barged = steps.filter((s) => s.out.some(interrupts)).map((s) => s.atMs);
    expect(barged).toEqual([BARGE_IN_MS]);
    expect(sim.count(interrupts)).toBe(1);
    // The utterance that barged in ends with silence and is answered once.
    geminiStream(sim, silence(1000, 16000));
    expect(sim.count(transcriptions)).toBe(1);
    sim.runTimers();
    expect(sim.count(turnCompletes)).toBe(2); // the interrupted reply's and the answer's
    expect(sim.text()).toContain("[#r2]");
  });

  it("audioStreamEnd ends an utterance at once; after silence alone it ends nothing", () => {
    const sim = new SimDriver(VAD);
    sim.setup();
    geminiStream(sim, silence(1000, 16000));
    sim.send({ realtimeInput: { audioStreamEnd: true } });
    expect(sim.count(transcriptions)).toBe(0);
    geminiStream(sim, speech(300, 16000));
    const out = sim.send({ realtimeInput: { audioStreamEnd: true } });
    expect(out[0]?.serverContent?.inputTranscription?.finished).toBe(true);
    // The silence after it ends nothing more.
    geminiStream(sim, silence(1000, 16000));
    expect(sim.count(transcriptions)).toBe(1);
    expect(sim.count(turnCompletes)).toBe(1);
  });

  it("vad=off (the default): any audio is speech, as before — 100 ms of silence barges in", () => {
    expect(DEFAULT_KNOBS.vad).toBe("off");
    const sim = new SimDriver({ timeScale: 1 });
    sim.setup();
    sim.user("hi");
    const steps = geminiStream(sim, silence(100, 16000));
    expect(steps.filter((s) => s.out.some(interrupts)).map((s) => s.atMs)).toEqual([100]);
  });
});

// ---------------------------------------------------------------------------
// OpenAI face (24 kHz)
// ---------------------------------------------------------------------------

function openaiStream(face: OaiDriver, audio: Uint8Array): Array<{ atMs: number; out: Msg[] }> {
  const steps: Array<{ atMs: number; out: Msg[] }> = [];
  let atMs = 0;
  for (const c of chunks(audio, 24000)) {
    face.now += 20;
    atMs += 20;
    steps.push({
      atMs,
      out: face.send({ type: "input_audio_buffer.append", audio: bytesToBase64(c) }),
    });
  }
  return steps;
}

const count = (msgs: Msg[], type: string) => msgs.filter((m) => m.type === type).length;

describe("OpenAI face, vad=energy", () => {
  it("5 s of continuous silence and line noise: no speech_started, no response", () => {
    const face = new OaiDriver(VAD);
    face.setup();
    const n = face.out.length;
    openaiStream(face, concat(silence(2500, 24000), lineNoise(2500, 24000)));
    expect(face.out.length).toBe(n);
  });

  it("600 ms of speech then 1 s of silence: one utterance, ended vadSilenceMs after the speech, answered once", () => {
    const face = new OaiDriver(VAD);
    face.setup();
    face.now = 0;
    const steps = openaiStream(
      face,
      concat(silence(200, 24000), speech(600, 24000), silence(1000, 24000)),
    );
    const started = steps.filter((s) => count(s.out, "input_audio_buffer.speech_started") > 0);
    expect(started.map((s) => s.atMs)).toEqual([200 + BARGE_IN_MS]);
    expect(started[0]!.out[0]).toMatchObject({ audio_start_ms: 200 });
    const stopped = steps.filter((s) => count(s.out, "input_audio_buffer.speech_stopped") > 0);
    expect(stopped.map((s) => s.atMs)).toEqual([800 + DEFAULT_KNOBS.vadSilenceMs]);
    expect(types(stopped[0]!.out).slice(0, 4)).toEqual([
      "input_audio_buffer.speech_stopped",
      "input_audio_buffer.committed",
      "conversation.item.input_audio_transcription.completed",
      "response.created",
    ]);
    expect(stopped[0]!.out[0]).toMatchObject({ audio_end_ms: 800 });
    expect(count(face.out, "response.created")).toBe(1);
    expect(count(face.out, "response.done")).toBe(1);
    expect(count(face.out, "conversation.item.input_audio_transcription.completed")).toBe(1);
  });

  it("during a response: silence never cancels it; speech does after BARGE_IN_MS of it", () => {
    const face = new OaiDriver({ ...VAD, timeScale: 1, msPerWord: 100 });
    face.setup();
    face.user("hi");
    face.send({ type: "response.create" });
    const quiet = openaiStream(face, concat(silence(300, 24000), lineNoise(300, 24000)));
    expect(quiet.flatMap((s) => s.out).filter((m) => m.type === "response.done")).toEqual([]);
    const steps = openaiStream(face, speech(200, 24000));
    const cancelled = steps.filter((s) => count(s.out, "response.done") > 0);
    expect(cancelled.map((s) => s.atMs)).toEqual([BARGE_IN_MS]);
    expect(types(cancelled[0]!.out)).toEqual([
      "input_audio_buffer.speech_started",
      "response.done",
    ]);
    expect(cancelled[0]!.out[1]!.response).toMatchObject({
      status: "cancelled",
      status_details: { reason: "turn_detected" },
    });
  });

  it("vad=off (the default): the first appended audio, silence included, is speech", () => {
    const face = new OaiDriver({ timeScale: 1, msPerWord: 100 });
    face.setup();
    face.user("hi");
    face.send({ type: "response.create" });
    const [first] = openaiStream(face, silence(20, 24000));
    expect(types(first!.out)).toEqual(["input_audio_buffer.speech_started", "response.done"]);
  });
});

describe("knobs", () => {
  it("vad, vadThreshold, vadSilenceMs parse and are checked", () => {
    expect(DEFAULT_KNOBS).toMatchObject({ vad: "off", vadThreshold: 500, vadSilenceMs: 500 });
    expect(
      parseKnobs(new URLSearchParams("vad=energy&vadThreshold=800&vadSilenceMs=700")),
    ).toMatchObject({
      vad: "energy",
      vadThreshold: 800,
      vadSilenceMs: 700,
    });
    for (const bad of ["vad=webrtc", "vadThreshold=-1", "vadThreshold=40000", "vadSilenceMs=x"]) {
      expect(() => parseKnobs(new URLSearchParams(bad)), bad).toThrow();
    }
  });
});
