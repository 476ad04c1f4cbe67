import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/core/core-config.js";
import {
  closingEventsAfterRestart,
  restoreSelection,
  restoreState,
} from "../../src/core/restore.js";
import type { HistoryEvent, HistoryEventBody } from "../../src/vocabulary/log-events.js";

/**
 * A restore reads a selection of the log (HistoryStore.readForRestore reads the same through
 * indexes): over random logs — turns opened and ended or left open, late turn ends, calls
 * answered, cancelled or left running, transfers, backend handoffs, status changes — the
 * selection gives the same state and the same closing events as the whole log.
 */
const step = fc.oneof(
  fc.constant({ op: "turn" as const }),
  fc.constant({ op: "end" as const }),
  fc.constant({ op: "late_end" as const }),
  fc.constant({ op: "text" as const }),
  fc.record({ op: fc.constant("call" as const), transfer: fc.boolean() }),
  fc.record({ op: fc.constant("outcome" as const), cancelled: fc.boolean(), pick: fc.nat() }),
  fc.record({
    op: fc.constant("status" as const),
    state: fc.constantFrom("connecting", "live", "reconnecting", "idle", "ended"),
  }),
  fc.record({ op: fc.constant("handoff" as const), to: fc.constantFrom("front", "desk") }),
);

type Op = typeof step extends fc.Arbitrary<infer T> ? T : never;

function build(ops: Op[]): HistoryEvent[] {
  const bodies: HistoryEventBody[] = [];
  let turn = 0;
  let open: string | null = null;
  const openCalls: { callId: string; turnId: string; name: string }[] = [];
  let calls = 0;
  for (const o of ops) {
    const turnId = open ?? `t${Math.max(1, turn)}`;
    switch (o.op) {
      case "turn":
        turn++;
        open = `t${turn}`;
        bodies.push({ kind: "user", turnId: open, text: "hi", source: "text" });
        break;
      case "end":
        if (open) bodies.push({ kind: "turn_complete", turnId: open });
        open = null;
        break;
      case "late_end":
        if (turn > 1)
          bodies.push({ kind: "interrupted", turnId: `t${turn - 1}`, reason: "upstream_lost" });
        break;
      case "text":
        bodies.push({ kind: "model_text", turnId, text: "words" });
        break;
      case "call": {
        const callId = `c${++calls}`;
        const name = o.transfer ? "transfer_to_desk" : "lookup_faq";
        openCalls.push({ callId, turnId, name });
        bodies.push({ kind: "tool_call", turnId, callId, name, args: {}, runOn: "server" });
        break;
      }
      case "outcome": {
        if (openCalls.length === 0) break;
        const [c] = openCalls.splice(o.pick % openCalls.length, 1);
        bodies.push(
          o.cancelled
            ? {
                kind: "tool_cancelled",
                turnId: c!.turnId,
                callId: c!.callId,
                name: c!.name,
                reason: "x",
              }
            : {
                kind: "tool_result",
                turnId: c!.turnId,
                callId: c!.callId,
                name: c!.name,
                result: { ok: true },
              },
        );
        break;
      }
      case "status":
        bodies.push({ kind: "status", state: o.state });
        break;
      case "handoff":
        bodies.push({ kind: "handoff", from: "front", to: o.to, reason: "backend" });
        break;
    }
  }
  return bodies.map((b, i) => ({ ...b, seq: i + 1, at: 1000 + i }) as HistoryEvent);
}

describe("restoreSelection", () => {
  it("restores the same state and closes the same turn and calls as the whole log", () => {
    const config = defaultConfig({
      sessionId: "s",
      tools: {},
      handoffTools: { transfer_to_desk: "desk" },
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (ops) => {
        const log = build(ops);
        const selected = restoreSelection(log);
        const lastSeq = log.at(-1)?.seq ?? 0;
        expect(closingEventsAfterRestart(selected)).toEqual(closingEventsAfterRestart(log));
        expect(restoreState(config, selected, lastSeq)).toEqual(restoreState(config, log, lastSeq));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 500) },
    );
  });

  it("control: a selection that drops the turn ends after the last user turn closes a turn that had ended", () => {
    const log = build([{ op: "turn" }, { op: "end" }]);
    const careless = log.filter((e) => e.kind !== "turn_complete");
    expect(closingEventsAfterRestart(careless)).not.toEqual(closingEventsAfterRestart(log));
    expect(closingEventsAfterRestart(restoreSelection(log))).toEqual([]);
  });
});
