/**
 * Judgements liveline no longer makes, for the controls that show what they did
 * (CoreConfig.legacy). They live here, in the tests: a gateway's bundle carries none of them.
 */
import type { LegacyJudgements } from "../../src/core/core-config.js";

/** Characters of a reply's opening the removed judgement compared. */
const MIN_PREFIX = 12;

/**
 * Issue 8 removed it: a reply whose first 12 characters repeated a recent reply's opening was
 * taken for a regeneration and dropped — and with it the honest answers that open alike,
 * leaving their turns open.
 */
export const OPENING_JUDGEMENT: LegacyJudgements = {
  openingRepeats: (soFar, recent) => {
    if (soFar.length < MIN_PREFIX) return "undecided";
    const opening = soFar.slice(0, MIN_PREFIX);
    return recent.some((previous) => previous.startsWith(opening));
  },
};

/**
 * Issue 28 replaced it: the repeat judgement ran on every wire (OpenAI's too, where liveline
 * causes every response), judged answers to repeated questions, and ended a turn whose kept
 * repeat was its answer with a durable `repeated_reply`.
 */
export const REPEAT_JUDGEMENT_ON_EVERY_WIRE: LegacyJudgements = { repeatsOnEveryWire: true };

/**
 * Issue 31 replaced it: on a turnless model, results sent while the voice spoke were taken as
 * answered by whatever it said next; the turn ended at the quiet, before their reply came.
 */
export const RESULTS_ANSWERED_BY_VOICE: LegacyJudgements = { resultsAnsweredByVoice: true };

/**
 * Issue 31 replaced it: on a turnless model, a line typed while the open turn's answer was owed
 * or being said cut that turn; the answer, which nothing cuts on such a wire, came in the line's.
 */
export const LINES_CUT_TURNLESS_ANSWERS: LegacyJudgements = { linesCutTurnlessAnswers: true };

/**
 * Issue 31 replaced it: on a turnless model, the quiet ended an utterance while the reply
 * liveline asked for was still on the wire; its calls and the rest of it came after the turn.
 */
export const QUIET_ENDS_OPEN_REPLIES: LegacyJudgements = { quietEndsOpenReplies: true };
