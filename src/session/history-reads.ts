/**
 * GET /history and /timeline, read from the log a page at a time: never the whole log in
 * memory. Objects may share a 128 MB isolate, and a long session's log (20,000 events and
 * more) joined into one string, beside its parsed rows, would take a large share of it.
 *
 * A read without a page is the whole answer, as it always was, streamed: rows are read
 * `STREAM_ROWS` at a time, each batch written out before the next is read, and only the
 * summary of the user turns (an id and an agent or two per turn) is kept to the end. A paged
 * read answers `limit` rows after a cursor, and the cursor of the next page when there is one.
 */

/** Rows a streamed read takes from the log at a time. */
export const STREAM_ROWS = 500;

type LogTable = "events" | "events_unchecked";
type LogRow = { seq: number; body: string; kind: string; turn_id: string | null };
type TurnSummary = { turnId: string; agents: string[] };

/** The kinds of row in which an agent speaks in a turn (the agents of `turns`). */
const SPEAKING = new Set(["model_text", "transcript", "tool_call"]);

/**
 * Which agents spoke in each user turn, row by row: the one in force at its input, then any a
 * handoff put in force before it said something in that turn (an announcing agent's line).
 */
class TurnAgents {
  readonly turns = new Map<string, string[]>();

  constructor(
    public agent: string,
    /** Only these turns are summed up (null: every turn that has a user row). */
    private readonly only: ReadonlySet<string> | null = null,
  ) {}

  take(kind: string, turnId: string | null, handoffTo: () => string): void {
    if (kind === "handoff") this.agent = handoffTo();
    else if (turnId === null) return;
    else if (kind === "user") {
      if (this.only === null || this.only.has(turnId)) this.turns.set(turnId, [this.agent]);
    } else if (SPEAKING.has(kind)) {
      const agents = this.turns.get(turnId);
      if (agents !== undefined && agents.at(-1) !== this.agent) agents.push(this.agent);
    }
  }

  summary(): TurnSummary[] {
    return [...this.turns].map(([turnId, agents]) => ({ turnId, agents }));
  }
}

const handoffTarget = (body: string) => () => (JSON.parse(body) as { to: string }).to;

/** The log's rows with `after < seq <= upTo`, in order, `limit` at most. */
function rowsAfter(sql: SqlStorage, t: LogTable, after: number, upTo: number, limit: number) {
  return sql
    .exec<LogRow>(
      `SELECT seq, body, kind, turn_id FROM ${t} WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
      after,
      upTo,
      limit,
    )
    .toArray();
}

function lastSeqOf(sql: SqlStorage, t: LogTable): number {
  return sql.exec<{ last: number | null }>(`SELECT MAX(seq) AS last FROM ${t}`).one().last ?? 0;
}

/** The agent in force after `seq`: the last handoff's up to it (through its index), or the first. */
function agentAfter(sql: SqlStorage, t: LogTable, seq: number, firstAgent: string): string {
  const row = sql
    .exec<{ agent: string | null }>(
      `SELECT body ->> '$.to' AS agent FROM ${t} WHERE kind = 'handoff' AND seq <= ?
       ORDER BY seq DESC LIMIT 1`,
      seq,
    )
    .toArray()[0];
  return row?.agent ?? firstAgent;
}

/** A stream of `parts`' strings, each asked for when the reader wants more (UTF-8). */
function pulled(parts: Iterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.next();
      if (next.done === true) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
}

/**
 * GET /history unpaged: `{"events":[…],"turns":[…]}`, the same JSON as a join of the whole
 * log, streamed. The log is read up to its last event at the start (later ones are left for
 * the next read).
 */
export function historyStream(
  sql: SqlStorage,
  t: LogTable,
  firstAgent: string,
): ReadableStream<Uint8Array> {
  return pulled(historyParts(sql, t, firstAgent));
}

function* historyParts(sql: SqlStorage, t: LogTable, firstAgent: string): Generator<string> {
  const upTo = lastSeqOf(sql, t);
  const turns = new TurnAgents(firstAgent);
  let after = 0;
  let first = true;
  for (;;) {
    const rows = rowsAfter(sql, t, after, upTo, STREAM_ROWS);
    if (rows.length === 0) break;
    for (const { kind, turn_id: turnId, body } of rows)
      turns.take(kind, turnId, handoffTarget(body));
    yield (first ? '{"events":[' : ",") + rows.map((r) => r.body).join(",");
    first = false;
    after = rows.at(-1)!.seq;
  }
  yield `${first ? '{"events":[' : ""}],"turns":${JSON.stringify(turns.summary())}}`;
}

/**
 * GET /history?limit=N[&cursor=C]: the `limit` events after the cursor (the start when there
 * is none), `turns` for the user turns whose `user` event is in the page (each whole: its
 * agents as the unpaged read says them), and `next`, the cursor of the next page, when there
 * is one. Read: the page's rows, and, only when a handoff follows the page's first user turn,
 * the later rows of its turns and the handoffs (one statement, row by row).
 */
export function historyPage(
  sql: SqlStorage,
  t: LogTable,
  firstAgent: string,
  after: number,
  limit: number,
): string {
  const rows = rowsAfter(sql, t, after, Number.MAX_SAFE_INTEGER, limit);
  const pageTurns = new Set(
    rows.flatMap((r) => (r.kind === "user" && r.turn_id !== null ? [r.turn_id] : [])),
  );
  const turns = new TurnAgents(agentAfter(sql, t, after, firstAgent), pageTurns);
  for (const { kind, turn_id: turnId, body } of rows) turns.take(kind, turnId, handoffTarget(body));
  const last = rows.at(-1)?.seq ?? after;
  if (pageTurns.size > 0 && handoffAfter(sql, t, firstUserSeq(rows))) {
    // An agent handed the turn on may yet speak in it after the page: its rows say so.
    const later = sql.exec<{ kind: string; turn_id: string | null; agent: string | null }>(
      `SELECT kind, turn_id, CASE WHEN kind = 'handoff' THEN body ->> '$.to' END AS agent
       FROM ${t} WHERE seq > ? AND (kind = 'handoff' OR
         (kind IN ('model_text', 'transcript', 'tool_call')
          AND turn_id IN (SELECT value FROM json_each(?))))
       ORDER BY seq`,
      last,
      JSON.stringify([...pageTurns]),
    );
    for (const row of later) turns.take(row.kind, row.turn_id, () => row.agent ?? turns.agent);
  }
  const more = rows.length > 0 && last < lastSeqOf(sql, t);
  const next = more ? `,"next":${JSON.stringify(String(last))}` : "";
  return `{"events":[${rows.map((r) => r.body).join(",")}],"turns":${JSON.stringify(turns.summary())}${next}}`;
}

function firstUserSeq(rows: readonly LogRow[]): number {
  return rows.find((r) => r.kind === "user")?.seq ?? Number.MAX_SAFE_INTEGER;
}

function handoffAfter(sql: SqlStorage, t: LogTable, seq: number): boolean {
  return (
    sql.exec(`SELECT 1 FROM ${t} WHERE kind = 'handoff' AND seq > ? LIMIT 1`, seq).toArray()
      .length > 0
  );
}

/** A timeline row as the API answers it: ms since the session started. */
export interface TimelineReadRow {
  ms: number;
  kind: string;
  detail?: unknown;
}
type StoredTimelineRow = { id: number; at: number; kind: string; detail: string | null };

/** The timeline's rows with `after < id <= upTo` (and at `from` or later), `limit` at most. */
export function timelineRows(
  sql: SqlStorage,
  from: number,
  after: number,
  upTo: number,
  limit: number,
  startedAt: number,
): { rows: TimelineReadRow[]; lastId: number | null } {
  const stored = sql
    .exec<StoredTimelineRow>(
      "SELECT id, at, kind, detail FROM timeline WHERE id >= ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
      from,
      after,
      upTo,
      limit,
    )
    .toArray();
  return {
    rows: stored.map((r) =>
      r.detail === null
        ? { ms: r.at - startedAt, kind: r.kind }
        : { ms: r.at - startedAt, kind: r.kind, detail: JSON.parse(r.detail) },
    ),
    lastId: stored.at(-1)?.id ?? null,
  };
}

export function lastTimelineId(sql: SqlStorage): number {
  return sql.exec<{ last: number | null }>("SELECT MAX(id) AS last FROM timeline").one().last ?? 0;
}

/**
 * The unpaged timeline answer, streamed: `head` (its fields before `rows`), the rows read
 * `STREAM_ROWS` at a time, then `tail()` (its fields after them, made when the rows are out).
 */
export function timelineStream(
  sql: SqlStorage,
  from: number,
  startedAt: number,
  head: string,
  tail: () => string,
): ReadableStream<Uint8Array> {
  return pulled(timelineParts(sql, from, startedAt, head, tail));
}

function* timelineParts(
  sql: SqlStorage,
  from: number,
  startedAt: number,
  head: string,
  tail: () => string,
): Generator<string> {
  const upTo = lastTimelineId(sql);
  let after = 0;
  let first = true;
  for (;;) {
    const { rows, lastId } = timelineRows(sql, from, after, upTo, STREAM_ROWS, startedAt);
    if (lastId === null) break;
    const json = rows.map((r) => JSON.stringify(r)).join(",");
    yield (first ? `${head}"rows":[` : ",") + json;
    first = false;
    after = lastId;
  }
  yield `${first ? `${head}"rows":[` : ""}]${tail()}`;
}
