/**
 * A session's closing record: what it was (agent, provider, model), how long it ran, what it
 * used and cost, how many turns and tool calls it took, and how it ended. Written when the
 * session ends or its model connection idles (a later one replaces it), kept in the session's
 * own storage and copied to the usage database (`GET /v1/usage` sums those copies). Pure.
 */
import type { LimitName, UpstreamStatus } from "../vocabulary/log-events.js";
import type { UsageTotals } from "../vocabulary/model.js";
import type { Cost } from "./cost.js";

/**
 * How a session ended. `deleted`: its backend ended it (DELETE); `limit`: a cap
 * (`limit` names it); the rest are a phone call's: the caller hung up (`caller_hung_up`), the
 * agent hung up (`agent_hung_up`) or put the call through (`transferred`), the carrier's
 * stream went away without a word (`stream_dropped`) or the carrier said the call was over
 * (`carrier_ended`).
 */
export const END_REASONS = [
  "deleted",
  "limit",
  "caller_hung_up",
  "agent_hung_up",
  "transferred",
  "stream_dropped",
  "carrier_ended",
] as const;
export type EndReason = (typeof END_REASONS)[number];

export interface ClosingRecord {
  sessionId: string;
  agent: string;
  provider: string;
  model: string;
  /** `idle`: the model connection was closed for want of use (the session may go on). */
  state: "idle" | "ended";
  /** null while idle. */
  endedBy: EndReason | null;
  /** The cap that ended it, when one did. */
  limit: { limit: LimitName; value: number } | null;
  /** ISO 8601: the session's creation, and when this record was made. */
  createdAt: string;
  closedAt: string;
  /** From creation to this record. */
  durationMs: number;
  /** How long a model connection was live. */
  modelLiveMs: number;
  usage: UsageTotals;
  cost: Cost;
  turns: number;
  toolCalls: number;
  /** Grows with each record the session makes: a copy never replaces a newer one. */
  version: number;
}

/**
 * Where a session's copy of its record stands: the usage database holds it (`written`), will
 * (`pending`: being written, or retried), or the Worker binds no usage database.
 */
export type ClosingCopy = "written" | "pending" | "no_database";

/** A status change of the model connection, as the log holds it. */
export interface StatusAt {
  at: number;
  state: UpstreamStatus;
}

/**
 * How long the model connection was live: from each `live` to the next status that is not
 * (reconnecting, idle, ended), the last open one up to `now`.
 */
export function modelLiveMs(statuses: readonly StatusAt[], now: number): number {
  let total = 0;
  let liveSince: number | null = null;
  for (const { at, state } of statuses) {
    if (state === "live") {
      liveSince ??= at;
      continue;
    }
    if (liveSince !== null) total += Math.max(0, at - liveSince);
    liveSince = null;
  }
  if (liveSince !== null) total += Math.max(0, now - liveSince);
  return total;
}
