/**
 * MEASUREMENT ONLY: the measurement worker's extra phone lines (a Worker's main module may
 * export handlers and classes only, so their numbers live here). Calls to CAPPED_LINE are
 * capped at one turn: a cap's goodbye on a phone, for the carrier contract. DESK_LINE reaches
 * the order desk, whose tools are an MCP server's: a call with a tool in flight when the
 * gateway restarts (test/end-to-end/deploy-restart.scripts.test.mjs).
 */
export const CAPPED_LINE = "+15550009000";
export const DESK_LINE = "+15550009100";

/** A line whose calls are recorded (audio and wire) and told so first (docs/RECORDINGS.md). */
export const RECORDED_LINE = "+15550009001";
/** What the recorded line's caller is told first. */
export const RECORDED_ANNOUNCEMENT = "This call is recorded.";
