/**
 * The GPT-Live family under the field's one-chain rules (issue 52): random sessions of lines
 * and speech against the simulator's GPT-Live face (its pure machine, on the wire through the
 * real adapter and core: wired.ts), drawing what the field measured — slow and fast tools, a
 * client that answers late or never, failed responses, replies announced as delegations,
 * delegations delivered twice, speech the voice holds (and acknowledges) while a call is open.
 *
 * Safety and liveness: every turn ends once and none stalls (no model_timeout, no empty
 * turn); every call is recorded once and settled once, and runs at most once; at the end the
 * backend is idle (no call without its output, no speech held, no line unread). A request may
 * still be refused: the voice can start a delegation for speech it held in the instant the
 * chain went idle, as liveline's request goes (a race on the service too); the refusal is
 * recovered (the request goes again once that call is answered), and these checks say so. Control: the
 * per-response gate the field ran before (livekit/agents before PR #7266) finds a
 * counterexample. The core's own properties (test/core/properties.test.ts) draw the
 * turnless family at the level of model events; the chain lives below it, in the adapter.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chainBusy, openCalls } from "../../../src/simulator/gpt-live/respond.js";
import type { SimulatorKnobs } from "../../../src/simulator/knobs.js";
import { type Gate, WIRED_TOOLS, Wired } from "./wired.js";

/** Sessions per property in `npm test`; a soak raises it (FC_RUNS). */
const RUNS = Number(process.env.FC_RUNS ?? 40);
const SEED = process.env.FC_RUNS === undefined ? 5200 : Date.now();

const TOOL_NAMES = Object.keys(WIRED_TOOLS);

const world = fc.record({
  calls: fc.array(fc.subarray(TOOL_NAMES, { maxLength: 2 }), { minLength: 6, maxLength: 6 }),
  delays: fc.array(fc.integer({ min: 0, max: 6_000 }), {
    minLength: TOOL_NAMES.length,
    maxLength: TOOL_NAMES.length,
  }),
  clientAnswerMs: fc.option(fc.integer({ min: 0, max: 4_000 }), { nil: null }),
  failResponses: fc.subarray([1, 2, 3, 4, 5, 6, 7, 8], { maxLength: 2 }),
  announceReplies: fc.boolean(),
  holdAck: fc.boolean(),
  duplicateDelegation: fc.boolean(),
  steps: fc.array(fc.record({ speak: fc.boolean(), waitMs: fc.integer({ min: 0, max: 8_000 }) }), {
    minLength: 2,
    maxLength: 5,
  }),
});
type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

function play(w: World, gate: Gate): Wired {
  const byTurn: Record<number, string[]> = {};
  w.calls.forEach((names, i) => {
    byTurn[i + 1] = names;
  });
  const knobs: Partial<SimulatorKnobs> = {
    calls: { byTurn, otherwise: [] },
    failResponses: w.failResponses,
    announceReplies: w.announceReplies,
    holdAck: w.holdAck,
    duplicateDelegation: w.duplicateDelegation,
  };
  const toolDelays = Object.fromEntries(TOOL_NAMES.map((n, i) => [n, w.delays[i]!]));
  const wired = new Wired({ gate, knobs, toolDelays, clientAnswerMs: w.clientAnswerMs });
  w.steps.forEach((step, i) => {
    if (step.speak) wired.say();
    else wired.type(`line ${i + 1}`);
    wired.advance(step.waitMs);
  });
  wired.advance(120_000);
  return wired;
}

/** What went wrong in a session, if anything (empty: the properties hold). */
function problems(wired: Wired): string[] {
  const out: string[] = [];
  // A reply that failed is said to be empty (its turn ends, with that error): not a stall.
  const failed = wired.received.some(
    (e) => e.type === "response.event" && (e.event as { type?: string }).type === "response.failed",
  );
  const frames = wired.frames;
  const ends = new Map<string, number>();
  for (const f of frames) {
    if (f.type === "user") ends.set(f.turnId, ends.get(f.turnId) ?? 0);
    if (f.type === "turn_complete" || f.type === "interrupted")
      ends.set(f.turnId, (ends.get(f.turnId) ?? 0) + 1);
    if (
      f.type === "error" &&
      (f.code === "model_timeout" || (f.code === "empty_response" && !failed))
    )
      out.push(`${f.code} in ${"turnId" in f ? f.turnId : "no turn"}`);
  }
  for (const [turn, n] of ends) if (n !== 1) out.push(`${turn} ended ${n} times`);
  const called = new Map<string, number>();
  const settled = new Map<string, number>();
  for (const f of frames) {
    if (f.type === "tool_call") called.set(f.callId, (called.get(f.callId) ?? 0) + 1);
    if (f.type === "tool_result" || f.type === "tool_cancelled")
      settled.set(f.callId, (settled.get(f.callId) ?? 0) + 1);
  }
  for (const [id, n] of called) {
    if (n !== 1) out.push(`call ${id} recorded ${n} times`);
    if (settled.get(id) !== 1) out.push(`call ${id} settled ${settled.get(id) ?? 0} times`);
  }
  const runs = new Map<string, number>();
  for (const e of wired.h.effects)
    if (e.type === "run_tool") runs.set(e.callId, (runs.get(e.callId) ?? 0) + 1);
  for (const [id, n] of runs) if (n > 1) out.push(`call ${id} ran ${n} times`);
  const service = wired.service;
  if (!service.closed) {
    if (openCalls(service).length > 0) out.push("the backend still waits for an output");
    if (service.held.length > 0) out.push("the voice still holds speech");
    if (service.pendingUser.length > 0) out.push("a line was never read");
    if (chainBusy(service)) out.push("the chain never went idle");
  }
  return out;
}

describe("the GPT-Live family under the one-chain rules (property)", () => {
  it("every turn ends once, nothing stalls, every call settles once, the backend ends idle", {
    timeout: 120_000,
  }, () => {
    fc.assert(
      fc.property(world, (w) => {
        expect(problems(play(w, "session"))).toEqual([]);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("control: the per-response gate finds a counterexample", { timeout: 120_000 }, () => {
    const result = fc.check(
      fc.property(world, (w) => problems(play(w, "per-response")).length === 0),
      { numRuns: RUNS, seed: SEED },
    );
    expect(result.failed).toBe(true);
  });
});
