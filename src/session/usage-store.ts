import { emptyUsage } from "../metering/cost.js";
import type { TokenUsage, UsageTotals } from "../vocabulary/model.js";
import { type Migration, migrate } from "./migrations.js";

const USAGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "usage: token counts per turn, summed over the model's responses",
    up(sql) {
      sql.exec(`CREATE TABLE usage (
        turn_id TEXT PRIMARY KEY,
        responses INTEGER NOT NULL,
        prompt INTEGER NOT NULL,
        response INTEGER NOT NULL,
        total INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        thoughts INTEGER NOT NULL,
        tool_prompt INTEGER NOT NULL,
        modalities TEXT NOT NULL
      )`);
    },
  },
  {
    version: 2,
    description: "usage: the seconds a model billed by time metered (GPT-Live)",
    up(sql) {
      sql.exec("ALTER TABLE usage ADD COLUMN seconds REAL NOT NULL DEFAULT 0");
    },
  },
  {
    version: 3,
    description: "usage: the model that reported it, which prices it (an agent may change model)",
    up(sql) {
      sql.exec("ALTER TABLE usage ADD COLUMN model TEXT NOT NULL DEFAULT ''");
    },
  },
];

type UsageRow = {
  turn_id: string;
  responses: number;
  prompt: number;
  response: number;
  total: number;
  cached: number;
  thoughts: number;
  tool_prompt: number;
  modalities: string;
  seconds: number;
  /** The model of the turn's first report ('' in rows written before it was kept). */
  model: string;
};

/** Responses outside any turn (before the first one) are summed under this key. */
const NO_TURN = "";

/**
 * What the model reported it used, per turn, in the object's SQLite storage: what an
 * operator bills and alerts on (`GET /v1/sessions/:id`). One row per turn, updated in place.
 */
export class UsageStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "usage", USAGE_MIGRATIONS);
  }

  add(turnId: string | null, usage: TokenUsage, model: string): void {
    const key = turnId ?? NO_TURN;
    const rows = this.sql.exec<UsageRow>("SELECT * FROM usage WHERE turn_id = ?", key).toArray();
    const before = rows[0] === undefined ? emptyUsage() : totalsOf(rows[0]);
    const after = addTo(before, usage);
    this.sql.exec(
      `INSERT INTO usage (turn_id, responses, prompt, response, total, cached, thoughts, tool_prompt, modalities, seconds, model)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (turn_id) DO UPDATE SET responses = excluded.responses, prompt = excluded.prompt,
         response = excluded.response, total = excluded.total, cached = excluded.cached,
         thoughts = excluded.thoughts, tool_prompt = excluded.tool_prompt, modalities = excluded.modalities,
         seconds = excluded.seconds`,
      key,
      after.responses,
      after.promptTokens,
      after.responseTokens,
      after.totalTokens,
      after.cachedTokens,
      after.thoughtsTokens,
      after.toolUsePromptTokens,
      JSON.stringify({
        prompt: after.promptByModality,
        response: after.responseByModality,
        cached: after.cachedByModality,
      }),
      after.seconds,
      model,
    );
  }

  /** Each turn's sums, in the order turns first reported (responses before any turn: `null`). */
  byTurn(): { turnId: string | null; model: string; usage: UsageTotals }[] {
    return this.sql
      .exec<UsageRow>("SELECT * FROM usage ORDER BY rowid")
      .toArray()
      .map((row) => ({
        turnId: row.turn_id === NO_TURN ? null : row.turn_id,
        model: row.model,
        usage: totalsOf(row),
      }));
  }

  /** One turn's sums (null: it reported none). */
  ofTurn(turnId: string): { model: string; usage: UsageTotals } | null {
    const row = this.sql
      .exec<UsageRow>("SELECT * FROM usage WHERE turn_id = ?", turnId)
      .toArray()[0];
    return row === undefined ? null : { model: row.model, usage: totalsOf(row) };
  }

  /** The session's sums and the number of turns that reported usage. */
  totals(): UsageTotals & { turns: number } {
    const rows = this.sql.exec<UsageRow>("SELECT * FROM usage").toArray();
    let sum = emptyUsage();
    for (const row of rows) sum = merge(sum, totalsOf(row));
    return { ...sum, turns: rows.filter((r) => r.turn_id !== NO_TURN).length };
  }
}

function totalsOf(row: UsageRow): UsageTotals {
  const modalities = JSON.parse(row.modalities) as {
    prompt: Record<string, number>;
    response: Record<string, number>;
    /** Absent in rows written before cached tokens were kept by modality. */
    cached?: Record<string, number>;
  };
  return {
    responses: row.responses,
    promptTokens: row.prompt,
    responseTokens: row.response,
    totalTokens: row.total,
    cachedTokens: row.cached,
    thoughtsTokens: row.thoughts,
    toolUsePromptTokens: row.tool_prompt,
    promptByModality: modalities.prompt,
    responseByModality: modalities.response,
    cachedByModality: modalities.cached ?? {},
    seconds: row.seconds,
  };
}

function addTo(t: UsageTotals, u: TokenUsage): UsageTotals {
  return merge(t, {
    // A time-billed model's seconds come on their own, not with a response.
    responses: u.seconds === undefined ? 1 : 0,
    promptTokens: u.promptTokens,
    responseTokens: u.responseTokens,
    totalTokens: u.totalTokens,
    cachedTokens: u.cachedTokens ?? 0,
    thoughtsTokens: u.thoughtsTokens ?? 0,
    toolUsePromptTokens: u.toolUsePromptTokens ?? 0,
    promptByModality: u.promptByModality ?? {},
    responseByModality: u.responseByModality ?? {},
    cachedByModality: u.cachedByModality ?? {},
    seconds: u.seconds ?? 0,
  });
}

function merge(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    responses: a.responses + b.responses,
    promptTokens: a.promptTokens + b.promptTokens,
    responseTokens: a.responseTokens + b.responseTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    thoughtsTokens: a.thoughtsTokens + b.thoughtsTokens,
    toolUsePromptTokens: a.toolUsePromptTokens + b.toolUsePromptTokens,
    promptByModality: sumRecords(a.promptByModality, b.promptByModality),
    responseByModality: sumRecords(a.responseByModality, b.responseByModality),
    cachedByModality: sumRecords(a.cachedByModality, b.cachedByModality),
    seconds: a.seconds + b.seconds,
  };
}

function sumRecords(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}
