/**
 * The audio fast path changes nothing but the cost: two sessions, one with the audio gate
 * (src/core/audio-gate.ts), one stepping every chunk through the core, fed the same random
 * interleavings of audio (both ways) with everything else a session sees, send the same
 * commands to the model and the same frames and audio to the clients, in the same order, and
 * end each non-audio input in the same state. The control: a gate that opens whenever the
 * connection is live breaks the equivalence.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type AudioGate, audioGate } from "../../src/core/audio-gate.js";
import type { CoreState } from "../../src/core/session-state.js";
import type { ModelEvent } from "../../src/vocabulary/model.js";
import { propertySeed } from "../support/property-seed.js";
import { Harness, TOOLS } from "./harness.js";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 500);
/** Fresh each run (printed; FC_SEED replays one): every run compares new interleavings. */
const SEED = propertySeed("audio gate");
/** The controls show the property can fail: a fixed sample known to hold the failure. */
const CONTROL_SEED = 20261123;

type Step =
  | { t: "client_audio"; n: number }
  | { t: "model_audio"; n: number }
  | { t: "model"; event: ModelEvent }
  | { t: "tool_call"; tool: string }
  | { t: "text" }
  | { t: "audio_end" }
  | { t: "answer" }
  | { t: "timer" }
  | { t: "advance"; ms: number }
  | { t: "reconnect_client" };

const chunk = () => fc.integer({ min: 1, max: 6 });
const modelEvent = fc.constantFrom<ModelEvent>(
  { type: "setup_complete" },
  { type: "text_delta", text: "Sure, " },
  { type: "transcript_delta", text: "and so on" },
  { type: "input_transcript", text: "hello", finished: false },
  { type: "speech_started" },
  { type: "generation_complete" },
  { type: "turn_complete" },
  { type: "interrupted" },
  { type: "go_away", timeLeftMs: 500 },
  { type: "resumption_update", handle: "h1", resumable: true },
  { type: "upstream_closed", code: 1011, reason: "drop", fatal: false },
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 10, arbitrary: chunk().map((n): Step => ({ t: "client_audio", n })) },
  { weight: 10, arbitrary: chunk().map((n): Step => ({ t: "model_audio", n })) },
  { weight: 8, arbitrary: modelEvent.map((event): Step => ({ t: "model", event })) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(...Object.keys(TOOLS))
      .map((tool): Step => ({ t: "tool_call", tool })),
  },
  { weight: 2, arbitrary: fc.constant<Step>({ t: "text" }) },
  { weight: 1, arbitrary: fc.constant<Step>({ t: "audio_end" }) },
  { weight: 2, arbitrary: fc.constant<Step>({ t: "answer" }) },
  { weight: 2, arbitrary: fc.constant<Step>({ t: "timer" }) },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 0, max: 40 }).map((ms): Step => ({ t: "advance", ms })),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ t: "reconnect_client" }) },
);

/** Runs the steps on both arms, comparing after each; returns the chunks that passed, each way. */
function runBoth(
  steps: Step[],
  gate: (s: CoreState) => AudioGate,
): { client: number; model: number; transcripts: number; resends: number } {
  const fast = new Harness({ idleTimeoutMs: 60_000 }, gate);
  const slow = new Harness({ idleTimeoutMs: 60_000 }, "off");
  const both = (f: (h: Harness) => void) => {
    f(fast);
    f(slow);
  };
  let calls = 0;
  let chunkNo = 0;
  both((h) => h.connect("phone"));
  both((h) => h.model({ type: "setup_complete" }));
  for (const step of steps) {
    const stepsBefore = fast.steps;
    switch (step.t) {
      case "client_audio":
      case "model_audio":
        for (let i = 0; i < step.n; i++) {
          const pcm = new Uint8Array([++chunkNo % 256, 0, 0, 0]);
          both((h) => {
            h.now += 20;
            if (step.t === "client_audio") h.clientAudio("phone", pcm);
            else h.modelAudio(pcm);
          });
        }
        break;
      case "model":
        // As the shell hands it over: a transcription may pass the gate.
        both((h) => h.receive({ type: "model", event: step.event }));
        if (step.event.type === "upstream_closed") {
          // The shell reconnects when the core asks; the new connection comes up.
          both((h) => h.advance(1000));
          both((h) => h.model({ type: "setup_complete" }));
        }
        break;
      case "tool_call": {
        const id = `c${++calls}`;
        both((h) => h.model({ type: "tool_call", calls: [{ id, name: step.tool, args: {} }] }));
        break;
      }
      case "text":
        both((h) => h.input({ type: "client_text", clientId: "phone", text: "and then?" }));
        break;
      case "audio_end":
        both((h) => h.input({ type: "client_audio_end", clientId: "phone" }));
        break;
      case "answer": {
        const running = [...fast.runningTools.keys()][0];
        if (running !== undefined) {
          both((h) => h.input({ type: "tool_outcome", callId: running, result: { ok: true } }));
        } else {
          const call = fast.log.find(
            (e) =>
              e.kind === "tool_call" &&
              e.runOn === "client" &&
              !fast.log.some(
                (o) =>
                  (o.kind === "tool_result" || o.kind === "tool_cancelled") &&
                  o.callId === e.callId,
              ),
          );
          if (call?.kind === "tool_call") {
            both((h) =>
              h.input({
                type: "client_tool_result",
                clientId: "phone",
                callId: call.callId,
                result: { shown: true },
              }),
            );
          }
        }
        break;
      }
      case "timer":
        both((h) => h.fireNextTimer());
        break;
      case "advance":
        both((h) => h.advance(step.ms));
        break;
      case "reconnect_client":
        both((h) => h.disconnect("phone"));
        both((h) => h.connect("phone", h.lastSeqSeen("phone")));
        break;
    }
    expect(fast.sentToModel).toEqual(slow.sentToModel);
    expect(fast.outbound).toEqual(slow.outbound);
    expect(fast.log).toEqual(slow.log);
    expect([...fast.timers]).toEqual([...slow.timers]);
    // After any other input, the passed chunks' timestamps are settled: the same state.
    const stepped =
      fast.steps > stepsBefore && step.t !== "client_audio" && step.t !== "model_audio";
    if (stepped) expect(fast.state).toEqual(slow.state);
  }
  // Settle and compare the final state.
  both((h) =>
    h.input({
      type: "audio_passed",
      clientAt: null,
      speechAt: null,
      clientBytes: 0,
      modelAt: null,
    }),
  );
  expect(fast.state).toEqual(slow.state);
  const resends = fast.effects.filter((e) => e.type === "resend_sent_audio").length;
  return { ...fast.audioPassed, resends };
}

describe("the audio gate", () => {
  it("passing audio without a step leaves every effect and the state as stepping each chunk", {
    timeout: 120_000,
  }, () => {
    const passed = { client: 0, model: 0, transcripts: 0, resends: 0 };
    const chunks = { client: 0, model: 0, transcripts: 0 };
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 5, maxLength: 80 }), (steps) => {
        const p = runBoth(steps, audioGate);
        passed.client += p.client;
        passed.model += p.model;
        passed.transcripts += p.transcripts;
        passed.resends += p.resends;
        for (const s of steps) {
          if (s.t === "client_audio") chunks.client += s.n;
          if (s.t === "model_audio") chunks.model += s.n;
          if (
            s.t === "model" &&
            (s.event.type === "input_transcript" || s.event.type === "speech_started")
          ) {
            chunks.transcripts++;
          }
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // The fast path is taken both ways, not only proven harmless.
    console.log(
      `audio gate: ${passed.client}/${chunks.client} client chunks, ${passed.model}/${chunks.model} model chunks and ${passed.transcripts}/${chunks.transcripts} transcriptions passed without a step; unheard audio went again to ${passed.resends} new connections`,
    );
    // Audio kept by the shell across a lost connection (sent-audio.ts) is among what is compared.
    // Floors a fresh sample clears (seen: resends 4-17 in 500 runs, model chunks 6-10 %), so
    // that a green run is known not to be vacuous whatever the seed (one in 5,000 seeds falls
    // short of the resends' floor).
    expect(passed.resends).toBeGreaterThan(RUNS / 500);
    expect(passed.client / chunks.client).toBeGreaterThan(0.3);
    expect(passed.model / chunks.model).toBeGreaterThan(0.03);
    expect(passed.transcripts / chunks.transcripts).toBeGreaterThan(0.05);
  });

  it("control: a gate that opens whenever the connection is live changes what is sent", () => {
    const careless = (s: CoreState): AudioGate => {
      const live = s.upstream.phase === "live" && !s.ended;
      return {
        input: live,
        keep: live,
        output: live && s.generation !== null,
        transcript: false,
      };
    };
    const outcome = fc.check(
      fc.property(fc.array(stepArb, { minLength: 5, maxLength: 80 }), (steps) => {
        runBoth(steps, careless);
      }),
      { numRuns: RUNS, seed: CONTROL_SEED },
    );
    expect(outcome.failed).toBe(true);
  });

  it("control: client audio passed between turns and not kept is missing from what a new connection gets", () => {
    const forgetful = (s: CoreState): AudioGate => ({ ...audioGate(s), keep: false });
    const outcome = fc.check(
      fc.property(fc.array(stepArb, { minLength: 5, maxLength: 80 }), (steps) => {
        runBoth(steps, forgetful);
      }),
      { numRuns: RUNS, seed: CONTROL_SEED },
    );
    expect(outcome.failed).toBe(true);
  });

  it("control: noting every transcription without a step changes what is sent", () => {
    const careless = (s: CoreState): AudioGate => ({ ...audioGate(s), transcript: !s.ended });
    const outcome = fc.check(
      fc.property(fc.array(stepArb, { minLength: 5, maxLength: 80 }), (steps) => {
        runBoth(steps, careless);
      }),
      { numRuns: RUNS, seed: CONTROL_SEED },
    );
    expect(outcome.failed).toBe(true);
  });
});
