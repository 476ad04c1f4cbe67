/**
 * GET /v1/usage?from&to&agent: what the sessions created in [from, to) used and cost, summed
 * from the usage database (one row per session: its latest closing record). For the app's
 * backend (API key).
 */
import { Hono } from "hono";
import { z } from "zod";
import { SUM_SESSION_USAGE, UsageSumRow } from "../../contracts/usage-table.js";
import { requireApiKey } from "../auth.js";
import type { AppEnv } from "../context.js";
import { HttpError } from "../errors.js";
import { parseQuery } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";

const DAY_MS = 86_400_000;
/** Without `from`: this long before `to`. */
const DEFAULT_WINDOW_MS = 30 * DAY_MS;

/** A moment: a date (`2026-11-01`, its midnight UTC) or an ISO 8601 date-time. */
const Moment = z
  .string()
  .refine(
    isMoment,
    "must be a date (2026-11-01) or an ISO 8601 date-time (2026-11-01T09:00:00Z) that exists",
  )
  .transform((v) => Date.parse(v));

/** The form, and a day that exists (Date.parse rolls 2026-02-30 over to March). */
function isMoment(v: string): boolean {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/.exec(v);
  if (m === null || Number.isNaN(Date.parse(v))) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const UsageQuery = z
  .object({
    from: Moment.optional(),
    to: Moment.optional(),
    agent: z.string().min(1).max(200).optional(),
  })
  .strict()
  .transform(({ from, to, agent }, ctx) => {
    const end = to ?? Date.now();
    const start = from ?? end - DEFAULT_WINDOW_MS;
    if (start >= end) ctx.addIssue({ code: "custom", message: "from: must be before to" });
    return { from: start, to: end, agent: agent ?? null };
  });

export interface UsageAnswer {
  from: string;
  to: string;
  agent: string | null;
  /** Sessions created in the window that have a record: ended, or idle (they may go on). */
  sessions: number;
  ended: number;
  idle: number;
  durationSeconds: number;
  modelLiveSeconds: number;
  /** A model billed by time (GPT-Live): the seconds it metered. */
  meteredSeconds: number;
  turns: number;
  toolCalls: number;
  tokens: {
    responses: number;
    prompt: number;
    response: number;
    total: number;
    cached: number;
    thoughts: number;
  };
  /**
   * As a session's cost says it: `priced` (every session priced: `usd` is their sum),
   * `partial` (`usd` sums what had a price; some sessions had parts without one, or none),
   * `unpriced` (no session had a price: no `usd`, never $0). Their usage is in the token sums.
   */
  cost: {
    status: "priced" | "partial" | "unpriced";
    usd?: number;
    pricedSessions: number;
    partialSessions: number;
    unpricedSessions: number;
  };
  /** Ended sessions by how they ended (`limit:<cap>` for a cap). */
  endedBy: Record<string, number>;
}

export const usageRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    await requireApiKey(c.var.auth, c.req.header("Authorization"));
    const query = parseQuery(c, UsageQuery);
    const db = c.env.USAGE_DB;
    if (db === undefined)
      throw new HttpError(
        503,
        "not_configured",
        "usage needs the USAGE_DB binding: a D1 database in wrangler.toml [[d1_databases]] with liveline's migrations applied (see the README, Deploy)",
      );
    const from = new Date(query.from).toISOString();
    const to = new Date(query.to).toISOString();
    let rows: unknown[];
    try {
      rows = (await db.prepare(SUM_SESSION_USAGE).bind(from, to, query.agent).all()).results;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      console.error(`liveline: GET /v1/usage: ${message}`);
      throw new HttpError(
        503,
        "usage_unavailable",
        /no such table/i.test(message)
          ? "the usage database has no session_usage table: apply liveline's migrations (wrangler d1 migrations apply)"
          : "the usage database did not answer; try again",
      );
    }
    return c.json(
      sum(
        rows.map((row) => UsageSumRow.parse(row)),
        from,
        to,
        query.agent,
      ),
    );
  })
  .all("/", methodNotAllowed("GET"));

function sum(rows: readonly UsageSumRow[], from: string, to: string, agent: string | null) {
  const answer: UsageAnswer = {
    from,
    to,
    agent,
    sessions: 0,
    ended: 0,
    idle: 0,
    durationSeconds: 0,
    modelLiveSeconds: 0,
    meteredSeconds: 0,
    turns: 0,
    toolCalls: 0,
    tokens: { responses: 0, prompt: 0, response: 0, total: 0, cached: 0, thoughts: 0 },
    cost: { status: "priced", pricedSessions: 0, partialSessions: 0, unpricedSessions: 0 },
    endedBy: {},
  };
  let usd = 0;
  for (const row of rows) {
    answer.sessions += row.sessions;
    answer[row.state] += row.sessions;
    answer.durationSeconds += row.duration_ms / 1000;
    answer.modelLiveSeconds += row.model_live_ms / 1000;
    answer.meteredSeconds += row.metered_seconds;
    answer.turns += row.turns;
    answer.toolCalls += row.tool_calls;
    answer.tokens.responses += row.responses;
    answer.tokens.prompt += row.prompt_tokens;
    answer.tokens.response += row.response_tokens;
    answer.tokens.total += row.total_tokens;
    answer.tokens.cached += row.cached_tokens;
    answer.tokens.thoughts += row.thoughts_tokens;
    usd += row.cost_usd;
    answer.cost[`${row.cost_status}Sessions` as const] += row.sessions;
    if (row.state === "ended") {
      const by =
        row.ended_by === "limit" && row.limit_name !== null
          ? `limit:${row.limit_name}`
          : (row.ended_by ?? "unknown");
      answer.endedBy[by] = (answer.endedBy[by] ?? 0) + row.sessions;
    }
  }
  // Sums of doubles: rounded as costs are (to a millionth of a cent), seconds to the ms.
  const { pricedSessions, partialSessions, unpricedSessions } = answer.cost;
  answer.cost.status =
    pricedSessions + partialSessions === 0 && unpricedSessions > 0
      ? "unpriced"
      : partialSessions + unpricedSessions > 0
        ? "partial"
        : "priced";
  if (answer.cost.status !== "unpriced") answer.cost.usd = Math.round(usd * 1e8) / 1e8;
  answer.durationSeconds = Math.round(answer.durationSeconds * 1000) / 1000;
  answer.modelLiveSeconds = Math.round(answer.modelLiveSeconds * 1000) / 1000;
  answer.meteredSeconds = Math.round(answer.meteredSeconds * 1000) / 1000;
  return answer;
}
