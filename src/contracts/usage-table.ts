/**
 * The usage database (D1, binding `USAGE_DB`): one row per session, its latest closing record
 * (src/metering/closing-record.ts). Session objects write it; `GET /v1/usage` sums it. The
 * table is made by the migrations in `migrations/` (wrangler d1 migrations apply).
 */
import { z } from "zod";
import type { ClosingRecord } from "../metering/closing-record.js";

/**
 * A session's row, replacing an older copy only: a retry of an older record that lands after
 * a newer one changes nothing.
 */
export const UPSERT_SESSION_USAGE = `INSERT INTO session_usage (
    session_id, agent, provider, model, state, ended_by, limit_name, created_at, closed_at,
    duration_ms, model_live_ms, metered_seconds, responses, prompt_tokens, response_tokens,
    total_tokens, cached_tokens, thoughts_tokens, modalities, cost_status, cost_usd, unpriced,
    turns, tool_calls, version)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (session_id) DO UPDATE SET
    agent = excluded.agent, provider = excluded.provider, model = excluded.model,
    state = excluded.state, ended_by = excluded.ended_by, limit_name = excluded.limit_name,
    closed_at = excluded.closed_at, duration_ms = excluded.duration_ms,
    model_live_ms = excluded.model_live_ms, metered_seconds = excluded.metered_seconds,
    responses = excluded.responses, prompt_tokens = excluded.prompt_tokens,
    response_tokens = excluded.response_tokens, total_tokens = excluded.total_tokens,
    cached_tokens = excluded.cached_tokens, thoughts_tokens = excluded.thoughts_tokens,
    modalities = excluded.modalities, cost_status = excluded.cost_status,
    cost_usd = excluded.cost_usd, unpriced = excluded.unpriced, turns = excluded.turns,
    tool_calls = excluded.tool_calls, version = excluded.version
  WHERE excluded.version > session_usage.version`;

/** The upsert's values, in its order. */
export function usageRowValues(record: ClosingRecord): (string | number | null)[] {
  const { usage, cost } = record;
  return [
    record.sessionId,
    record.agent,
    record.provider,
    record.model,
    record.state,
    record.endedBy,
    record.limit?.limit ?? null,
    record.createdAt,
    record.closedAt,
    Math.round(record.durationMs),
    Math.round(record.modelLiveMs),
    usage.seconds,
    usage.responses,
    usage.promptTokens,
    usage.responseTokens,
    usage.totalTokens,
    usage.cachedTokens,
    usage.thoughtsTokens,
    JSON.stringify({
      prompt: usage.promptByModality,
      response: usage.responseByModality,
      cached: usage.cachedByModality,
    }),
    cost.status,
    cost.status === "unpriced" ? null : cost.usd,
    cost.status === "priced" ? null : JSON.stringify(cost.unpriced),
    record.turns,
    record.toolCalls,
    record.version,
  ];
}

/**
 * Sums over the sessions created in [from, to), optionally of one agent: one row per
 * (state, ended_by, limit_name, cost_status), summed by the route. Bound: from, to, agent (or null).
 */
export const SUM_SESSION_USAGE = `SELECT state, ended_by, limit_name, cost_status,
    COUNT(*) AS sessions, SUM(duration_ms) AS duration_ms, SUM(model_live_ms) AS model_live_ms,
    SUM(metered_seconds) AS metered_seconds, SUM(responses) AS responses,
    SUM(prompt_tokens) AS prompt_tokens, SUM(response_tokens) AS response_tokens,
    SUM(total_tokens) AS total_tokens, SUM(cached_tokens) AS cached_tokens,
    SUM(thoughts_tokens) AS thoughts_tokens, SUM(COALESCE(cost_usd, 0)) AS cost_usd,
    SUM(turns) AS turns, SUM(tool_calls) AS tool_calls
  FROM session_usage
  WHERE created_at >= ?1 AND created_at < ?2 AND (?3 IS NULL OR agent = ?3)
  GROUP BY state, ended_by, limit_name, cost_status`;

/** A row of SUM_SESSION_USAGE as D1 gives it back (checked: the database is outside us). */
export const UsageSumRow = z.object({
  state: z.enum(["idle", "ended"]),
  ended_by: z.string().nullable(),
  limit_name: z.string().nullable(),
  cost_status: z.enum(["priced", "partial", "unpriced"]),
  sessions: z.number(),
  duration_ms: z.number(),
  model_live_ms: z.number(),
  metered_seconds: z.number(),
  responses: z.number(),
  prompt_tokens: z.number(),
  response_tokens: z.number(),
  total_tokens: z.number(),
  cached_tokens: z.number(),
  thoughts_tokens: z.number(),
  cost_usd: z.number(),
  turns: z.number(),
  tool_calls: z.number(),
});
export type UsageSumRow = z.infer<typeof UsageSumRow>;
