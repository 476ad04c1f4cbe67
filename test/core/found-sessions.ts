/**
 * Interleavings on models with turns that soaks found, replayed first in every run of the
 * core's safety properties (fast-check `examples`), so none can come back unseen. Each names
 * the seed that found it and what broke.
 */
import { type GenerationPlan, PLAIN } from "./reference-model.js";
import { type CapsPlan, NO_CAPS, type Scenario } from "./world.js";

/** A world as the soaks drew it: only the capability record, plans and actions varied. */
function found(
  capabilities: string,
  plans: GenerationPlan[],
  actions: Scenario["actions"],
  caps: CapsPlan = NO_CAPS,
): Scenario {
  return {
    capabilities,
    plans,
    emptyNudgeReplies: 0,
    silentLateFollowUps: 0,
    ignoresSilent: false,
    actions,
    arrival: ["announce", "announce"],
    sharedLink: false,
    caps,
  };
}

const LOOKUP_RACE: GenerationPlan = { ...PLAIN, calls: ["lookup_faq"], race: true };

/**
 * Seed 31337 (run 915): the lookup's still-working line was asked, its result came by timeout,
 * the connection dropped; the next connection's answer to the carried turn was taken for the
 * stale still-working line and suppressed: turn t1 never ended.
 */
const STILL_WORKING_ASK_OUTLIVED_ITS_CONNECTION = found(
  "silent-claimed",
  [LOOKUP_RACE],
  [
    { t: "user_text", again: false },
    { t: "model_step", n: 2 },
    { t: "model_step", n: 2 },
    { t: "tool_progress", pick: 0 },
    { t: "timer" },
    { t: "drop_upstream", code: 1011 },
    { t: "model_step", n: 1 },
    { t: "go_away" },
    { t: "client_answer", pick: 0, client: 0 },
    { t: "model_step", n: 1 },
  ],
);

/** Seed 221717 (run 16,672): the same ask, a drop, a duplicate result: turn t2 never ended. */
const STILL_WORKING_THEN_NEXT_LINE = found(
  "silent-claimed",
  [{ ...PLAIN, calls: ["set_preference", "set_preference", "lookup_faq"], race: true }, PLAIN],
  [
    { t: "user_text", again: false },
    { t: "model_step", n: 4 },
    { t: "tool_progress", pick: 2 },
    { t: "drop_upstream", code: 1011 },
    { t: "model_step", n: 1 },
    { t: "duplicate_result", pick: 0 },
    { t: "client_answer", pick: 0, client: 0 },
    { t: "user_text", again: false },
    { t: "reconnect", client: 0 },
  ],
);

/** Seed 90210 (run 13,145): the ask went to a connection already dropping: turn t3 never ended. */
const STILL_WORKING_ASKED_OF_A_DROPPED_CONNECTION = found(
  "silent-claimed",
  [LOOKUP_RACE, PLAIN, { ...PLAIN, reply: "none" }],
  [
    { t: "user_text", again: false },
    { t: "model_step", n: 4 },
    { t: "drop_upstream", code: 1011 },
    { t: "tool_progress", pick: 0 },
    { t: "duplicate_result", pick: 0 },
    { t: "tool_finish", pick: 0 },
    { t: "model_step", n: 1 },
    { t: "user_text", again: false },
    { t: "user_text", again: false },
  ],
);

/** Found by the progress property (calls that report progress, said once). */
export const FOUND_WITH_PROGRESS: [Scenario][] = [
  [STILL_WORKING_ASK_OUTLIVED_ITS_CONNECTION],
  [STILL_WORKING_THEN_NEXT_LINE],
  [STILL_WORKING_ASKED_OF_A_DROPPED_CONNECTION],
];

/**
 * Found by the caps property on its first runs: the turns cap reached as the turn opened; a
 * close moved on by writing into the state the step was given (the frozen harness threw).
 */
const CAP_CLOSE_WROTE_THE_GIVEN_STATE = found(
  "silent-claimed",
  [PLAIN],
  [
    { t: "user_text", again: false },
    { t: "model_step", n: 1 },
    { t: "duplicate_result", pick: 0 },
    { t: "model_step", n: 1 },
    { t: "tool_finish", pick: 0 },
    { t: "model_step", n: 1 },
  ],
  { kind: "turns", max: 1 },
);

/**
 * Found by the caps property: two speak calls refused past the cap were each answered alone,
 * before the other joined its batch, so the model followed each up; the second follow-up was
 * said in the goodbye's turn (and the goodbye never was).
 */
const REFUSED_CALLS_ANSWERED_ONE_BY_ONE = found(
  "silent-claimed",
  [{ ...PLAIN, calls: ["lookup_faq", "lookup_faq"], race: true }, PLAIN],
  [
    { t: "reconnect", client: 0 },
    { t: "reconnect", client: 0 },
    { t: "user_text", again: false },
    { t: "user_text", again: false },
    { t: "model_step", n: 1 },
  ],
  { kind: "turns", max: 1 },
);

/** Found by the caps property (caps reached at every point of a turn). */
export const FOUND_WITH_CAPS: [Scenario][] = [
  [CAP_CLOSE_WROTE_THE_GIVEN_STATE],
  [REFUSED_CALLS_ANSWERED_ONE_BY_ONE],
];
