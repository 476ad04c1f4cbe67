/**
 * MEASUREMENT ONLY: the measurement worker's extra phone line (a Worker's main module may
 * export handlers and classes only, so its number lives here). Calls to it are capped at one
 * turn: a cap's goodbye on a phone, for the carrier contract.
 */
export const CAPPED_LINE = "+15550009000";

/** A line whose calls are recorded (audio and wire) and told so first (docs/RECORDINGS.md). */
export const RECORDED_LINE = "+15550009001";
/** What the recorded line's caller is told first. */
export const RECORDED_ANNOUNCEMENT = "This call is recorded.";
