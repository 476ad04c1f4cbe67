import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ALL_GUARDS,
  type CoreConfig,
  type Guards,
  NO_GUARDS,
} from "../../src/core/session-state.js";
import { propertySeed } from "../support/property-seed.js";
import { FOUND_WITH_CAPS, FOUND_WITH_PROGRESS } from "./found-sessions.js";
import { FOUND_TURNLESS } from "./found-turnless.js";
import type { Harness } from "./harness.js";
import { judgeOpenings } from "./opening-judgement.js";
import {
  checkAnswersDelivered,
  checkNoAnswerMisplaced,
  checkProgress,
  checkSettled,
  checkStep,
  scenarioArb,
  world,
} from "./world.js";

/** Interleavings per property; raise for a soak: FC_RUNS=200000 npm run test:soak */
const RUNS = Number(process.env.FC_RUNS ?? 2000);
/** Fresh each run (printed; FC_SEED replays one): every run explores new interleavings. */
const SEED = propertySeed("core properties");
/**
 * The controls show that a property can fail: a fixed sample, known to hold the failure, so
 * that a control never passes by the luck of a draw.
 */
const CONTROL_SEED = 20261123;
/**
 * How many runs must have put a mechanism to work for a green run to count. The rarest drawn
 * (a record wrongly claiming SILENT repeating a reply) comes in about 16 runs of 2000: at one
 * in a thousand a fresh seed falls short about once in 50,000 runs, not once a week of CI.
 */
const FAIR_SHARE = RUNS / 1000;
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
  "WATCHDOG_NUDGE",
  "MODEL_TIMEOUT",
  "TURN_CARRIED",
  "RESUME_TURN",
  "HANDOFF",
  "HANDOFF_ANNOUNCE",
  "WATCHDOG_WAIT",
  "LINES_JOINED",
  "REPEATED_INPUT",
] as const;

/** What the liveness runs must also have exercised. */
const COVERED_LIVENESS = [
  "WATCHDOG_NUDGE",
  "WATCHDOG_WAIT",
  "MODEL_TIMEOUT",
  "REPEATED_INPUT",
] as const;

/** The user said a line again (the same question twice gets the same words). */
function repeatedInput(h: { log: readonly { kind: string; text?: string }[] }): boolean {
  const lines = h.log.flatMap((e) => (e.kind === "user" ? [e.text] : []));
  return new Set(lines).size < lines.length;
}

function tally(coverage: Map<string, number> | undefined, kinds: Iterable<string>): void {
  if (!coverage) return;
  for (const kind of new Set(kinds)) coverage.set(kind, (coverage.get(kind) ?? 0) + 1);
}

/**
 * Safety, where the capability record is truthful: history valid, one end per turn, no
 * reply forwarded twice, speak results spoken, nothing recorded lost — plus liveness.
 */
function safety(
  guards: Guards,
  coverage?: Map<string, number>,
  {
    progress = false,
    caps = false,
    config = {},
  }: { progress?: boolean; caps?: boolean; config?: Partial<CoreConfig> } = {},
) {
  return fc.property(scenarioArb("truthful", { progress, caps }), (scenario) => {
    const { h, model, run, drain, lastActivityAt } = world(scenario, guards, config);
    h.connect("phone");
    h.connect("laptop");
    for (const action of scenario.actions) {
      run(action);
      checkStep(h, model);
      checkProgress(h, lastActivityAt());
    }
    drain();
    checkSettled(h, model);
    checkAnswersDelivered(h, model);
    tally(coverage, h.traces);
    if (repeatedInput(h)) tally(coverage, ["REPEATED_INPUT"]);
    const late = Object.values(h.state.calls).some((c) => c.delivery === "late");
    if (late) tally(coverage, ["LATE_SPEAK"]);
  });
}

/**
 * Liveness, under every model behaviour the generator has — honest replies that open alike,
 * the same question again, silence, a model slower than the watchdog, empty replies, replies
 * that stop mid-stream, drops — with new input meeting every race: every user turn ends
 * exactly once, no turn waits past the bound with nothing happening, and every answer the
 * model gave to an input reaches that input's turn or the turn shows an error.
 */
function liveness(
  guards: Guards,
  config: Partial<CoreConfig> = {},
  coverage?: Map<string, number>,
  families?: string[],
  {
    pairsReplies = true,
    placed = false,
    around,
  }: { pairsReplies?: boolean; placed?: boolean; around?: (h: Harness) => unknown } = {},
) {
  return fc.property(scenarioArb("truthful", { busy: true, families }), (scenario) => {
    const { h, model, run, drain, lastActivityAt } = world(scenario, guards, config, {
      pairsReplies,
      around,
    });
    h.connect("phone");
    for (const action of scenario.actions) {
      run(action);
      checkStep(h, model);
      checkProgress(h, lastActivityAt());
    }
    drain();
    checkSettled(h, model);
    // A model nothing can cut (turnless) says its answers in full: a turn cut (by a line
    // typed over it) is still owed the answer it was given.
    checkAnswersDelivered(h, model, { cutExcused: !placed });
    if (placed) checkNoAnswerMisplaced(h);
    tally(coverage, h.traces);
    if (repeatedInput(h)) tally(coverage, ["REPEATED_INPUT"]);
  });
}

/**
 * Where a record claims SILENT and the model ignores it (an app's override; O2), a late side
 * effect makes the model say its reply again, and no one can tell that regeneration from an
 * answer. Promised there: history valid, every user turn ends exactly once, no turn waits past
 * the bound, nothing recorded lost. `answers`: also check that every answer reached its
 * turn — not promised (docs/KNOWN-LIMITS.md), used by the repeat guard's control.
 */
function silentClaimed(guards: Guards, coverage?: Map<string, number>, answers = false) {
  return fc.property(scenarioArb("silent-claimed", { busy: true }), (scenario) => {
    const { h, model, run, drain, lastActivityAt } = world(scenario, guards);
    h.connect("phone");
    for (const action of scenario.actions) {
      run(action);
      checkStep(h, model, false);
      checkProgress(h, lastActivityAt());
    }
    drain();
    checkSettled(h, model, "silent-claimed");
    if (answers) checkAnswersDelivered(h, model);
    tally(coverage, h.traces);
  });
}

function failure(result: { errorInstance?: unknown }): string {
  return String(result.errorInstance);
}

describe("the session core over random interleavings", () => {
  it(`keeps every guarantee (${RUNS} interleavings)`, { timeout: TIMEOUT }, () => {
    const coverage = new Map<string, number>();
    fc.assert(safety(ALL_GUARDS, coverage), { numRuns: RUNS, seed: SEED });
    // Each protection was actually put to work in a fair share of the runs.
    for (const kind of [...COVERED, "LATE_SPEAK"]) {
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    }
    console.log(
      `safety, ${RUNS} interleavings; runs exercising each mechanism:`,
      Object.fromEntries(coverage),
    );
  });

  // Its control is in tool-progress.test.ts: the interleaving that loses a result there (a
  // result ready between two pieces of the few words) is one these runs seldom draw.
  it(`calls that report progress, said once by the model: every guarantee holds (${RUNS} interleavings)`, {
    timeout: TIMEOUT,
  }, () => {
    const coverage = new Map<string, number>();
    fc.assert(safety(ALL_GUARDS, coverage, { progress: true }), {
      numRuns: RUNS,
      seed: SEED,
      examples: FOUND_WITH_PROGRESS,
    });
    for (const kind of ["TOOL_PROGRESS_SAID", "LATE_SPEAK"])
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    console.log(
      `progress, ${RUNS} interleavings; runs saying it is still working:`,
      coverage.get("TOOL_PROGRESS_SAID"),
    );
  });

  it(`caps reached at every point of a turn: every guarantee holds, the session ends once, every frame offered live (${RUNS} interleavings)`, {
    timeout: TIMEOUT,
  }, () => {
    const coverage = new Map<string, number>();
    fc.assert(safety(ALL_GUARDS, coverage, { progress: true, caps: true }), {
      numRuns: RUNS,
      seed: SEED,
      examples: FOUND_WITH_CAPS,
    });
    const limits = ["LIMIT_REACHED", "LIMIT_GOODBYE", "LIMIT_REFUSED_CALL"] as const;
    for (const kind of limits) expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    console.log(
      `caps, ${RUNS} interleavings; runs exercising each:`,
      Object.fromEntries(limits.map((kind) => [kind, coverage.get(kind) ?? 0])),
    );
  });

  it(`every turn ends once and every answer is delivered (${RUNS} interleavings)`, {
    timeout: TIMEOUT,
  }, () => {
    const coverage = new Map<string, number>();
    fc.assert(liveness(ALL_GUARDS, {}, coverage), { numRuns: RUNS, seed: SEED });
    for (const kind of COVERED_LIVENESS) {
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    }
    console.log(
      `liveness, ${RUNS} interleavings; runs exercising each mechanism:`,
      Object.fromEntries(coverage),
    );
  });

  it(`a record that claims SILENT wrongly: every turn still ends once, without a stall (${RUNS} interleavings)`, {
    timeout: TIMEOUT,
  }, () => {
    const coverage = new Map<string, number>();
    fc.assert(silentClaimed(ALL_GUARDS, coverage), { numRuns: RUNS, seed: SEED });
    for (const kind of ["REPEATED_REPLY", "SUPPRESSED"]) {
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    }
    console.log(
      `silent claimed, ${RUNS} interleavings; runs exercising each:`,
      Object.fromEntries(["REPEATED_REPLY", "SUPPRESSED"].map((k) => [k, coverage.get(k) ?? 0])),
    );
  });

  // Each protection on its own is necessary: switching off just that one breaks a guarantee.
  // carryTurns is not among them: without it the turn ends `upstream_lost`, which the
  // properties accept as an honest end; its control is a scenario (turn-continuity.test.ts).
  // Nor carryUnheardAudio: these worlds send no audio; its controls are scenarios
  // (unheard-audio.test.ts, and test/session/reconnect.workers.test.ts on the real wire).
  // Nor the protections that replaced a judgement liveline once made: their controls are the
  // scenarios and properties that found them, named here.
  const controlledElsewhere: Partial<Record<keyof Guards, string>> = {
    carryTurns: "turn-continuity.test.ts",
    carryUnheardAudio: "unheard-audio.test.ts",
    resultsAwaitTheirReply: "turnless.test.ts",
    answersKeepTheirTurn: "turnless.test.ts, and the turnless properties below",
    openRepliesOutlastQuiet: "the turnless properties below",
    stillWorkingTakesNoResults: "tool-progress.test.ts",
    utteranceEndsOnce: "test/providers/gpt-live/one-chain.test.ts",
    staleClientCallsSuperseded: "test/providers/gpt-live/one-chain.test.ts",
    capSparesOpenTurn: "test/session/caps.workers.test.ts",
    silentResultsOweNoWords: "turn-continuity.test.ts, and the provider contract",
    quietLineIsNoSpeech: "held-lines.test.ts, and test/telephony/phone-keys.workers.test.ts",
  };
  const controlled = (Object.keys(ALL_GUARDS) as (keyof Guards)[]).filter(
    (guard) => controlledElsewhere[guard] === undefined,
  );
  for (const guard of controlled) {
    // A repeat only reaches the check where the model ignores SILENT against its record's
    // claim; there the guard is what gets answers to their turns in the sampled runs.
    const prop =
      guard === "detectRepeats"
        ? (guards: Guards) => silentClaimed(guards, undefined, true)
        : safety;
    it(`control: without ${guard}, a counterexample is found`, { timeout: TIMEOUT }, () => {
      const result = fc.check(prop({ ...ALL_GUARDS, [guard]: false }), {
        numRuns: RUNS,
        seed: CONTROL_SEED,
      });
      expect(result.failed).toBe(true);
    });
  }

  it("control: with the protections off, a counterexample is found", { timeout: TIMEOUT }, () => {
    const result = fc.check(safety(NO_GUARDS), { numRuns: RUNS, seed: CONTROL_SEED });
    expect(result.failed).toBe(true);
    expect(failure(result)).toMatch(/forwarded twice|ended 2 times|history invalid|never spoken/);
  });

  it("control: the opening-words judgement that issue 8 removed drops honest answers", {
    timeout: TIMEOUT,
  }, () => {
    const opening = { around: judgeOpenings };
    const result = fc.check(liveness(ALL_GUARDS, {}, undefined, undefined, opening), {
      numRuns: RUNS,
      seed: CONTROL_SEED,
    });
    expect(result.failed, "no counterexample found").toBe(true);
    // The dropped answer shows as an answer that never reached its turn, a speak result
    // never spoken, or a turn left open.
    expect(failure(result)).toMatch(
      /never reached turn|never spoken|waited .* ms with nothing happening|ended 0 times/,
    );
  });

  it("control: the repeat judgement before issue 28, on the OpenAI wire, punishes a question asked twice", {
    timeout: TIMEOUT,
  }, () => {
    const result = fc.check(
      liveness({ ...ALL_GUARDS, narrowRepeatJudgement: false }, {}, undefined, ["openai"]),
      // It needs a late silent result and then the same question again: rarer than a run in 2,000.
      { numRuns: RUNS * 5, seed: CONTROL_SEED },
    );
    expect(result.failed, "no counterexample found").toBe(true);
    // The answer was delivered, then the turn ended with an error.
    expect(failure(result)).toMatch(/answered, then ended with repeated_reply/);
  });

  it("control: without the watchdog, a silent model leaves a turn open", {
    timeout: TIMEOUT,
  }, () => {
    const result = fc.check(liveness(ALL_GUARDS, { modelTimeoutMs: 0 }), {
      numRuns: RUNS,
      seed: CONTROL_SEED,
    });
    expect(result.failed).toBe(true);
    expect(failure(result)).toMatch(/waited .* ms with nothing happening|ended 0 times/);
  });
});

describe("the session core on a model without turns (GPT-Live), over random interleavings", () => {
  const TURNLESS = ["gpt-live"];
  /** What the turnless runs must have exercised. */
  const COVERED_TURNLESS = [
    "LINE_HELD",
    "REPLY_READY",
    "UTTERANCE_QUIET",
    "TOOL_CANCELLED",
    "DUPLICATE_CALL",
    "UPSTREAM_RECONNECT",
    "MODEL_TIMEOUT",
  ] as const;

  it(`every turn ends once and every answer reaches its own turn (${RUNS} interleavings)`, {
    timeout: TIMEOUT,
  }, () => {
    const coverage = new Map<string, number>();
    fc.assert(liveness(ALL_GUARDS, {}, coverage, TURNLESS, { placed: true }), {
      numRuns: RUNS,
      seed: SEED,
      examples: FOUND_TURNLESS,
    });
    for (const kind of COVERED_TURNLESS) {
      expect(coverage.get(kind) ?? 0, kind).toBeGreaterThan(FAIR_SHARE);
    }
    console.log(
      `turnless liveness, ${RUNS} interleavings; runs exercising each mechanism:`,
      Object.fromEntries(coverage),
    );
  });

  it("control: where a reply does not name the request it answers, a found interleaving fails", {
    timeout: TIMEOUT,
  }, () => {
    const unpaired = liveness(ALL_GUARDS, {}, undefined, TURNLESS, {
      pairsReplies: false,
      placed: true,
    });
    const result = fc.check(unpaired, {
      numRuns: FOUND_TURNLESS.length,
      examples: FOUND_TURNLESS,
    });
    expect(result.failed, "no counterexample found").toBe(true);
    expect(failure(result)).toMatch(/reached turn t\d+, the line/);
  });

  // Each issue-31 rule on its own is necessary: the judgement it replaced misplaces answers.
  // (Results taken as answered by the voice's words: their reply, once on the wire, now holds
  // the turn open anyway; that control is a scenario, turnless.test.ts.)
  for (const [name, off] of [
    ["a line cuts the answer it was typed over", { answersKeepTheirTurn: false }],
    [
      "the quiet ends an utterance whose reply is still on the wire",
      { openRepliesOutlastQuiet: false },
    ],
  ] as const) {
    it(`control: where ${name}, a counterexample is found`, { timeout: TIMEOUT }, () => {
      const result = fc.check(
        liveness({ ...ALL_GUARDS, ...off }, {}, undefined, TURNLESS, { placed: true }),
        {
          numRuns: RUNS,
          seed: CONTROL_SEED,
        },
      );
      expect(result.failed, "no counterexample found").toBe(true);
      expect(failure(result)).toMatch(/never reached turn|never spoken|ended \d times/);
    });
  }
});
