/**
 * Interleavings on a model without turns that soaks found (issue 31), replayed first in every
 * run of the turnless properties (fast-check `examples`), so none can come back unseen.
 */
import { type GenerationPlan, PLAIN } from "./reference-model.js";
import { NO_CAPS, type Scenario } from "./world.js";

/** A world on the gpt-live family, as the soaks drew it: only its plans and actions varied. */
function found(plans: GenerationPlan[], actions: Scenario["actions"]): Scenario {
  return {
    capabilities: "gpt-live",
    plans,
    emptyNudgeReplies: 0,
    silentLateFollowUps: 0,
    ignoresSilent: false,
    actions,
    arrival: ["announce", "announce"],
    sharedLink: false,
    caps: NO_CAPS,
  };
}

/** A reply that began, then stalled past the watchdog: its rest went to the next line's turn. */
const STALLED_REPLY_RESUMED = found(
  [PLAIN, PLAIN, { ...PLAIN, reply: "empty" }],
  [
    { t: "model_step", n: 1 },
    { t: "user_text", again: false },
    { t: "model_step", n: 2 },
    { t: "timer" },
    { t: "user_text", again: false },
    { t: "timer" },
    { t: "model_step", n: 2 },
    { t: "timer" },
    { t: "model_step", n: 1 },
    { t: "go_away" },
    { t: "user_text", again: false },
    { t: "tool_finish", pick: 0 },
  ],
);

/**
 * A line typed while the line before it waited for a follow-up window to close: it cut that
 * turn, whose answer (and its call) then came in the later line's.
 */
const LOOKUP_THEN_NOTHING: GenerationPlan = {
  ...PLAIN,
  calls: ["lookup_faq"],
  emptyAfterTools: true,
};
const LINE_OVER_WINDOWED_INPUT = found(
  [LOOKUP_THEN_NOTHING, LOOKUP_THEN_NOTHING, PLAIN],
  [
    { t: "user_text", again: false },
    { t: "model_step", n: 2 },
    { t: "model_step", n: 4 },
    { t: "tool_finish", pick: 0 },
    { t: "model_step", n: 1 },
    { t: "model_step", n: 1 },
    { t: "user_text", again: false },
    { t: "advance", ms: 1500 },
    { t: "user_text", again: false },
    { t: "reconnect", client: 0 },
    { t: "duplicate_result", pick: 0 },
  ],
);

/**
 * An answer slower than the watchdog's three periods, come after the next line went: taken
 * for that line's unless each reply names its request (the pairing control).
 */
const SLOW_ANSWER_AFTER_TIMEOUT = found(
  [PLAIN],
  [
    { t: "model_step", n: 1 },
    { t: "user_text", again: false },
    { t: "timer" },
    { t: "timer" },
    { t: "timer" },
    { t: "user_text", again: false },
    { t: "model_step", n: 4 },
    { t: "model_step", n: 4 },
  ],
);

export const FOUND_TURNLESS: [Scenario][] = [
  [STALLED_REPLY_RESUMED],
  [LINE_OVER_WINDOWED_INPUT],
  [SLOW_ANSWER_AFTER_TIMEOUT],
];
