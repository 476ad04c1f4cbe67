/**
 * Interleavings on a model without turns that soaks found (issue 31), replayed first in every
 * run of the turnless properties (fast-check `examples`), so none can come back unseen.
 */
import type { Scenario } from "./world.js";

/** A reply that began, then stalled past the watchdog: its rest went to the next line's turn. */
const STALLED_REPLY_RESUMED: Scenario = {
  capabilities: "gpt-live",
  plans: [
    {
      calls: [],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: false,
      duplicateCallDelivery: false,
    },
    {
      calls: [],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: false,
      duplicateCallDelivery: false,
    },
    {
      calls: [],
      opening: "",
      reply: "empty",
      race: false,
      emptyAfterTools: false,
      duplicateCallDelivery: false,
    },
  ],
  emptyNudgeReplies: 0,
  silentLateFollowUps: 0,
  ignoresSilent: false,
  actions: [
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
  arrival: ["announce", "announce"],
  sharedLink: false,
};

/**
 * A line typed while the line before it waited for a follow-up window to close: it cut that
 * turn, whose answer (and its call) then came in the later line's.
 */
const LINE_OVER_WINDOWED_INPUT: Scenario = {
  capabilities: "gpt-live",
  plans: [
    {
      calls: ["lookup_faq"],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: true,
      duplicateCallDelivery: false,
    },
    {
      calls: ["lookup_faq"],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: true,
      duplicateCallDelivery: false,
    },
    {
      calls: [],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: false,
      duplicateCallDelivery: false,
    },
  ],
  emptyNudgeReplies: 0,
  silentLateFollowUps: 0,
  ignoresSilent: false,
  actions: [
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
  arrival: ["announce", "announce"],
  sharedLink: false,
};

/**
 * An answer slower than the watchdog's three periods, come after the next line went: taken
 * for that line's unless each reply names its request (the pairing control).
 */
const SLOW_ANSWER_AFTER_TIMEOUT: Scenario = {
  capabilities: "gpt-live",
  plans: [
    {
      calls: [],
      opening: "",
      reply: "normal",
      race: false,
      emptyAfterTools: false,
      duplicateCallDelivery: false,
    },
  ],
  emptyNudgeReplies: 0,
  silentLateFollowUps: 0,
  ignoresSilent: false,
  actions: [
    { t: "model_step", n: 1 },
    { t: "user_text", again: false },
    { t: "timer" },
    { t: "timer" },
    { t: "timer" },
    { t: "user_text", again: false },
    { t: "model_step", n: 4 },
    { t: "model_step", n: 4 },
  ],
  arrival: ["announce", "announce"],
  sharedLink: false,
};

export const FOUND_TURNLESS: [Scenario][] = [
  [STALLED_REPLY_RESUMED],
  [LINE_OVER_WINDOWED_INPUT],
  [SLOW_ANSWER_AFTER_TIMEOUT],
];
