/**
 * The Gemini Live simulator as a pure state machine:
 *
 *   simStep(state, input, now) -> { state, effects, wakeAt }
 *
 * No I/O, no clock of its own, no ambient randomness: time comes in as `now`, randomness from
 * the seeded PRNG kept in the state. Pacing is a queue of scheduled items inside the state;
 * the shell calls back with a `tick` at `wakeAt`. With `timeScale` 0 every delay is 0 and a
 * whole reply is emitted within the step that caused it.
 *
 * Behaviour (see README.md for the knobs and test/fixtures/gemini/field-observations.md for the sources):
 * - a user turn (clientContent with turnComplete, realtimeInput.text, the end of speech) opens
 *   a generation that says a scripted reply and calls the tools the script names;
 * - BLOCKING calls: the generation waits for their responses, then goes on (speaking
 *   informational results); NON_BLOCKING calls: it goes on at once;
 * - fire-and-forget race (O1): the call comes after the speech and turnComplete follows in the
 *   same instant; nothing is waited for;
 * - a response arriving after its generation ended is new input: a side-effect tool's result
 *   makes the model say its previous reply again in full, an informational result is spoken
 *   once; SILENT on a NON_BLOCKING call adds to context quietly (unless ignoreSilent, O2);
 * - empty replies after tool results; the next clientContent (a nudge) gets the real reply;
 * - barge-in: interrupted, turnComplete, toolCallCancellation for the reply's pending calls;
 * - session resumption handles, goAway, drops and connection limits.
 */

import { goAway, onOpen } from "./connection.js";
import { runGen } from "./generation.js";
import { Ctx, type Scheduled, type SimInput, type SimState, type SimStepResult } from "./state.js";
import { goLive, onFrame, onResumeContext } from "./wire-in.js";

export function simStep(state: SimState, input: SimInput, now: number): SimStepResult {
  const ctx = new Ctx(structuredClone(state), now);
  if (ctx.s.phase !== "closed") {
    switch (input.type) {
      case "open":
        onOpen(ctx);
        break;
      case "frame":
        onFrame(ctx, input.text);
        break;
      case "resume_context":
        onResumeContext(ctx, input.handle, input.context);
        break;
      case "tick":
        break;
    }
    drain(ctx);
  }
  const s = ctx.s;
  const wakeAt = s.queue.length === 0 ? null : Math.min(...s.queue.map((q) => q.at));
  return { state: s, effects: ctx.effects, wakeAt };
}

function drain(ctx: Ctx): void {
  const s = ctx.s;
  for (;;) {
    if (s.phase === "closed") return;
    let best = -1;
    for (let i = 0; i < s.queue.length; i++) {
      const q = s.queue[i]!;
      if (q.at > ctx.now) continue;
      const b = best === -1 ? undefined : s.queue[best]!;
      if (b === undefined || q.at < b.at || (q.at === b.at && q.seq < b.seq)) best = i;
    }
    if (best === -1) return;
    const [due] = s.queue.splice(best, 1);
    runScheduled(ctx, due!.item);
  }
}

function runScheduled(ctx: Ctx, item: Scheduled): void {
  switch (item.kind) {
    case "gen":
      if (ctx.s.gen?.id === item.genId) runGen(ctx);
      return;
    case "go_away":
      goAway(ctx);
      return;
    case "setup_complete":
      goLive(ctx);
      return;
    case "close":
      ctx.close(item.code, item.reason);
      return;
  }
}

// ---------------------------------------------------------------------------
// Connection: open, setup, resumption, limits
// ---------------------------------------------------------------------------

export { handleSession } from "./connection.js";
export type { ResumeContext, SimEffect, SimInput, SimState, SimStepResult } from "./state.js";
export { createSimulator } from "./state.js";
export { schedulingOf } from "./wire-in.js";
