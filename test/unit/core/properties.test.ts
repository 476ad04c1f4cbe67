import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALL_GUARDS, type Guards, NO_GUARDS } from "../../../src/core/state.js";
import { checkSettled, checkStep, scenarioArb, world } from "./world.js";

/** Interleavings per property; raise for a soak: FC_RUNS=200000 npm run test:soak */
const RUNS = Number(process.env.FC_RUNS ?? 2000);
const SEED = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
/** A soak of many runs takes minutes, not the default five seconds. */
const TIMEOUT = Math.max(60_000, RUNS * 20);

/** How often each mechanism was exercised, so that a green run is known not to be vacuous. */
const COVERED = [
  "SUPPRESSED",
  "TOOL_RESULT_WITHHELD",
  "RETRY_EMPTY",
  "EMPTY_RESPONSE",
  "DUPLICATE_CALL",
  "DUPLICATE_RESULT",
  "UNKNOWN_CALL",
  "UPSTREAM_RECONNECT",
  "CLIENT_RESUME",
  "INTERRUPTED",
  "TOOL_CANCELLED",
  "GO_AWAY",
] as const;

function property(guards: Guards, coverage?: Map<string, number>) {
  return fc.property(scenarioArb, (scenario) => {
    const { h, run, drain } = world(scenario, guards);
    h.connect("phone");
    h.connect("laptop");
    for (const action of scenario.actions) {
      run(action);
      checkStep(h);
    }
    drain();
    checkSettled(h);
    if (coverage) {
      for (const kind of new Set(h.traces)) coverage.set(kind, (coverage.get(kind) ?? 0) + 1);
      const late = Object.values(h.state.calls).filter((c) => c.delivery === "late").length;
      if (late > 0) coverage.set("LATE_SPEAK", (coverage.get("LATE_SPEAK") ?? 0) + 1);
    }
  });
}

describe("the session core over random interleavings", () => {
  it(`keeps every guarantee (${RUNS} interleavings)`, { timeout: TIMEOUT }, () => {
    const coverage = new Map<string, number>();
    fc.assert(property(ALL_GUARDS, coverage), { numRuns: RUNS, seed: SEED });
    // Each protection was actually put to work in a fair share of the runs.
    for (const kind of [...COVERED, "LATE_SPEAK"]) {
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(RUNS / 500);
    }
    console.log(
      `interleavings: ${RUNS}; runs exercising each mechanism:`,
      Object.fromEntries(coverage),
    );
  });

  // Each protection on its own is necessary: switching off just that one breaks a guarantee.
  for (const guard of Object.keys(ALL_GUARDS) as (keyof Guards)[]) {
    it(`control: without ${guard}, a counterexample is found`, { timeout: TIMEOUT }, () => {
      const result = fc.check(property({ ...ALL_GUARDS, [guard]: false }), {
        numRuns: RUNS,
        seed: SEED,
      });
      expect(result.failed).toBe(true);
    });
  }

  it("control: with the protections off, a counterexample is found", { timeout: TIMEOUT }, () => {
    const result = fc.check(property(NO_GUARDS), { numRuns: RUNS, seed: SEED });
    expect(result.failed).toBe(true);
    const error = String(result.errorInstance);
    expect(error).toMatch(/forwarded twice|ended 2 times|history invalid|never spoken/);
  });
});
