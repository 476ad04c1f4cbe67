/**
 * MEASUREMENT ONLY: the measurement worker's extra phone line (a Worker's main module may
 * export handlers and classes only, so its number lives here). Calls to it are capped at one
 * turn: a cap's goodbye on a phone, for the carrier contract.
 */
export const CAPPED_LINE = "+15550009000";
