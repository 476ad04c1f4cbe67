import { utf8Bytes } from "../json-limits.js";
import type { StatusAt } from "../metering/closing-record.js";
import { frameOf } from "../vocabulary/frames.js";
import type { HistoryEvent, UpstreamStatus } from "../vocabulary/log-events.js";
import { HISTORY_MIGRATIONS, SEQ_TAKEN } from "./history-migrations.js";
import {
  historyPage,
  historyStream,
  lastTimelineId,
  type TimelineReadRow,
  timelineRows,
  timelineStream,
} from "./history-reads.js";
import { LogWriterSuperseded, type TraceRow } from "./interpreter-ports.js";
import { migrate } from "./migrations.js";

/**
 * The largest string, blob or row Cloudflare's SQLite storage takes in production: 2 MB
 * (Durable Objects limits, "Maximum string, BLOB or table row size"). Local workerd takes
 * 4 MiB, so a value between the two passes every local run and fails on Cloudflare: values
 * are measured in UTF-8 bytes against this, never against what the local runtime takes.
 */
export const SQL_VALUE_MAX_BYTES = 2_000_000;

/** A step writes its events and timeline rows in one statement up to this many rows of each. */
const STEP_ROWS_MAX = 8;
const NO_EVENT = [null, null, null, null, null, null, null] as const;
const NO_TRACE = [null, null, null] as const;

type EventRow = { body: string };

/**
 * The query of `readForRestore` (exported for the test that reads its plan). Each term reads
 * through an index of migration 5, or from the log's end; the kinds are written out (not
 * bound) so that the partial indexes apply.
 */
export function restoreQuery(t: "events" | "events_unchecked"): string {
  // Five terms: the runtime limits a compound SELECT to five.
  return `WITH last_user AS (SELECT seq FROM ${t} WHERE kind = 'user' ORDER BY seq DESC LIMIT 1)
    SELECT seq, body FROM ${t} WHERE kind = 'tool_call'
    UNION ALL SELECT seq, body FROM ${t} WHERE kind IN ('tool_result', 'tool_cancelled')
    UNION ALL SELECT seq, body FROM ${t} WHERE kind = 'handoff'
    UNION ALL SELECT * FROM (SELECT seq, body FROM ${t} WHERE kind = 'status' ORDER BY seq DESC LIMIT 1)
    UNION ALL SELECT seq, body FROM ${t}
      WHERE seq >= (SELECT seq FROM last_user)
        AND (seq = (SELECT seq FROM last_user) OR kind IN ('turn_complete', 'interrupted'))
    ORDER BY seq`;
}
type FrameRow = { frame: string | null; body: string };

/** An event's columns, in the order of the inserts: seq, kind, turn_id, call_id, at, body, frame. */
function eventRow(e: HistoryEvent, frame: string | undefined) {
  const row = [
    e.seq,
    e.kind,
    "turnId" in e ? (e.turnId ?? null) : null,
    "callId" in e ? e.callId : null,
    e.at,
    JSON.stringify(e),
    frame || null,
  ] as const;
  const chars = row[5].length + (row[6]?.length ?? 0);
  // Refused here as Cloudflare would refuse it, whatever the local runtime takes.
  if (chars * 3 > SQL_VALUE_MAX_BYTES - 1_000) {
    const bytes = utf8Bytes(row[5]) + utf8Bytes(row[6] ?? "") + 1_000;
    if (bytes > SQL_VALUE_MAX_BYTES)
      throw new Error(
        `event ${e.seq} (${e.kind}) is ${bytes} bytes with its frame: over the ${SQL_VALUE_MAX_BYTES} a stored row may hold on Cloudflare`,
      );
  }
  return row;
}

/** A timeline row's columns, in the order of the inserts: at, kind, detail. */
function timelineRow(r: TraceRow) {
  return [r.at, r.kind, r.detail === undefined ? null : JSON.stringify(r.detail)] as const;
}
type TimelineRow = { at: number; kind: string; detail: string | null };

/**
 * The session's event log and timeline in the object's SQLite storage.
 * `checked` (always, but for the naive relay's measurement sessions) makes the store refuse
 * what would break the log; unchecked, it keeps whatever it is given, as frameworks do.
 */
export class HistoryStore {
  private readonly sql: SqlStorage;
  private readonly table: "events" | "events_unchecked";
  /** One event's insert, and a batch's (its rows as one JSON array): made once. */
  private readonly eventInsert: string;
  private readonly batchInsert: string;

  constructor(
    private readonly storage: DurableObjectStorage,
    checked = true,
    /** The timeline keeps its newest rows, at most this many (a flood cannot fill storage). */
    private readonly timelineMaxRows = Number.POSITIVE_INFINITY,
  ) {
    migrate(storage, "history", HISTORY_MIGRATIONS);
    this.sql = storage.sql;
    this.table = checked ? "events" : "events_unchecked";
    const into = `INSERT INTO ${this.table} (seq, kind, turn_id, call_id, at, body, frame)`;
    this.eventInsert = `${into} VALUES (?, ?, ?, ?, ?, ?, ?)`;
    this.batchInsert = `${into}
      SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6
      FROM json_each(?) ORDER BY key`;
    this.trimSlack = Math.max(1, Math.floor(timelineMaxRows / 16));
  }

  /** Timeline rows written since the last trim, and how many may be before the next. */
  private untrimmed = 0;
  private readonly trimSlack: number;

  /**
   * Appends events, each with its encoded client frame (`frames[i]`, as sent), and the step's
   * timeline rows, in one statement: it is atomic (the store's rules refuse all of them or
   * none), and one statement is what a write costs in the runtime (each `exec` costs ≈ 60–90 µs
   * in workerd, a row in a statement ≈ 2 µs; measured with a scratch worker under wrangler dev).
   */
  append(
    events: readonly HistoryEvent[],
    frames: readonly string[] = [],
    /** The step's timeline rows: in the same statement as its events when they fit. */
    traces: readonly TraceRow[] = [],
  ): void {
    try {
      this.write(events, frames, traces);
    } catch (err) {
      // The one writer numbers the log contiguously: a next seq already taken means another
      // writer (a second instance of the object) has written it since.
      const message = err instanceof Error ? err.message : String(err);
      if (message.includes(SEQ_TAKEN)) throw new LogWriterSuperseded(message);
      throw err;
    }
  }

  private write(
    events: readonly HistoryEvent[],
    frames: readonly string[],
    traces: readonly TraceRow[],
  ): void {
    if (events.length === 0) {
      this.trace(traces);
      return;
    }
    const rows = Math.max(events.length, traces.length);
    if (traces.length > 0 && rows <= STEP_ROWS_MAX) {
      // Row i: event i and timeline row i, each bound as it is (NULLs where a step has fewer).
      const bindings: unknown[] = [];
      for (let i = 0; i < rows; i++) {
        const e = events[i];
        const t = traces[i];
        bindings.push(
          ...(e === undefined ? NO_EVENT : eventRow(e, frames[i])),
          ...(t === undefined ? NO_TRACE : timelineRow(t)),
        );
      }
      this.sql.exec(this.stepInsert(rows), ...bindings);
      this.trimTimeline(traces.length);
      return;
    }
    this.appendEvents(events, frames);
    this.trace(traces);
  }

  /** The insert of `rows` rows into the step view, made once per row count. */
  private readonly stepInserts: string[] = [];
  private stepInsert(rows: number): string {
    const cached = this.stepInserts[rows];
    if (cached !== undefined) return cached;
    const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
    const sql = `INSERT INTO ${this.table}_step
      (seq, kind, turn_id, call_id, at, body, frame, trace_at, trace_kind, trace_detail)
      VALUES ${values}`;
    this.stepInserts[rows] = sql;
    return sql;
  }

  private appendEvents(events: readonly HistoryEvent[], frames: readonly string[]): void {
    if (events.length === 0) return;
    // One event (most steps): bound as it is, its body not encoded twice nor parsed by SQLite.
    if (events.length === 1) {
      this.sql.exec(this.eventInsert, ...eventRow(events[0]!, frames[0]));
      return;
    }
    const rows = events.map((e, i) => eventRow(e, frames[i]));
    // A batch goes as one JSON value while that value fits SQL_VALUE_MAX_BYTES, else event by
    // event (a longer value is refused: SQLITE_TOOBIG; a step of 22 held lines of 260,000
    // characters each was ~11 MB of JSON). A character is at least one byte of UTF-8 and at
    // most 3: most batches need no measuring.
    let chars = 0;
    for (const row of rows) chars += row[5].length + (row[6]?.length ?? 0);
    const batch = chars > SQL_VALUE_MAX_BYTES ? null : JSON.stringify(rows);
    if (
      batch === null ||
      (batch.length * 3 > SQL_VALUE_MAX_BYTES && utf8Bytes(batch) > SQL_VALUE_MAX_BYTES)
    ) {
      // Too big for one bound value: event by event, in a transaction of their own, which the
      // store's rules refuse as a whole just as they refuse one statement.
      this.storage.transactionSync(() => {
        for (const row of rows) this.sql.exec(this.eventInsert, ...row);
      });
      return;
    }
    this.sql.exec(this.batchInsert, batch);
  }

  /** A user line with this client text id is in the log (one index lookup). */
  hasTextId(textId: string): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM ${this.table}
           WHERE kind = 'user' AND body ->> '$.textId' IS NOT NULL AND body ->> '$.textId' = ?
           LIMIT 1`,
          textId,
        )
        .toArray().length > 0
    );
  }

  /**
   * What a restore reads (core/restore.ts `restoreSelection`), in order, in one statement:
   * calls and outcomes through their unique indexes, handoffs and the last status through
   * theirs, the last user turn and the turn ends after it from the end of the log. No scan
   * of the log's text: a restore costs the session's calls, not its turns.
   */
  readForRestore(): HistoryEvent[] {
    return this.sql
      .exec<EventRow>(restoreQuery(this.table))
      .toArray()
      .map((row) => JSON.parse(row.body) as HistoryEvent);
  }

  /**
   * The client frames of every event with seq > afterSeq, in order, as they were sent: a
   * range read, no parse and no encode (rows written before frames were kept are encoded now).
   */
  framesAfter(afterSeq: number): string[] {
    return this.sql
      .exec<FrameRow>(`SELECT frame, body FROM ${this.table} WHERE seq > ? ORDER BY seq`, afterSeq)
      .toArray()
      .map((row) => row.frame ?? JSON.stringify(frameOf(JSON.parse(row.body) as HistoryEvent)));
  }

  /** Every event with seq > afterSeq, in order. */
  readAfter(afterSeq: number): HistoryEvent[] {
    return this.sql
      .exec<EventRow>(`SELECT body FROM ${this.table} WHERE seq > ? ORDER BY seq`, afterSeq)
      .toArray()
      .map((row) => JSON.parse(row.body) as HistoryEvent);
  }

  /** GET /history unpaged, streamed a page of rows at a time (session/history-reads.ts). */
  historyStream(firstAgent: string): ReadableStream<Uint8Array> {
    return historyStream(this.sql, this.table, firstAgent);
  }

  /** GET /history's page of `limit` events after seq `after` (session/history-reads.ts). */
  historyPage(firstAgent: string, after: number, limit: number): string {
    return historyPage(this.sql, this.table, firstAgent, after, limit);
  }

  /** Each change of the model connection's status, in order, with its time (a closing record's live time). */
  statusTimes(): StatusAt[] {
    return this.sql
      .exec<{ at: number; state: UpstreamStatus }>(
        `SELECT at, body ->> '$.state' AS state FROM ${this.table} WHERE kind = 'status' ORDER BY seq`,
      )
      .toArray();
  }

  lastSeq(): number {
    const row = this.sql
      .exec<{ last: number | null }>(`SELECT MAX(seq) AS last FROM ${this.table}`)
      .one();
    return row.last ?? 0;
  }

  /**
   * Timeline rows, in order, in one statement (see `append` for why one). The rows beyond the
   * cap are deleted once `trimSlack` more have come, not at every step (a statement of its own
   * each time was an eighth of a text turn's worker time); reads keep to the cap exactly.
   */
  trace(rows: readonly TraceRow[]): void {
    if (rows.length === 0) return;
    if (rows.length === 1)
      this.sql.exec(
        "INSERT INTO timeline (at, kind, detail) VALUES (?, ?, ?)",
        ...timelineRow(rows[0]!),
      );
    else
      this.sql.exec(
        `INSERT INTO timeline (at, kind, detail)
         SELECT value->>0, value->>1, value->>2 FROM json_each(?) ORDER BY key`,
        JSON.stringify(rows.map(timelineRow)),
      );
    this.trimTimeline(rows.length);
  }

  /** Counts `written` timeline rows; past the slack, deletes the rows beyond the cap. */
  private trimTimeline(written: number): void {
    if (!Number.isFinite(this.timelineMaxRows)) return;
    this.untrimmed += written;
    if (this.untrimmed < this.trimSlack) return;
    this.untrimmed = 0;
    this.sql.exec(
      "DELETE FROM timeline WHERE id <= (SELECT MAX(id) FROM timeline) - ?",
      this.timelineMaxRows,
    );
  }

  /** The first id within the cap: rows below it are dropped, whether deleted yet or not. */
  private firstKeptId(): number {
    if (!Number.isFinite(this.timelineMaxRows)) return 1;
    const row = this.sql
      .exec<{ last: number | null }>("SELECT MAX(id) AS last FROM timeline")
      .one();
    return Math.max(1, (row.last ?? 0) - this.timelineMaxRows + 1);
  }

  /** Rows the cap dropped: only the oldest go, and ids (AUTOINCREMENT) start at 1, never reused. */
  timelineDropped(): number {
    return this.firstKeptId() - 1;
  }

  /** GET /timeline unpaged, streamed (see session/history-reads.ts): `head`, the rows, `tail()`. */
  timelineStream(startedAt: number, head: string, tail: () => string): ReadableStream<Uint8Array> {
    return timelineStream(this.sql, this.firstKeptId(), startedAt, head, tail);
  }

  /** GET /timeline's page: `limit` rows after row id `after`, and the next page's cursor. */
  timelinePage(
    startedAt: number,
    after: number,
    limit: number,
  ): { rows: TimelineReadRow[]; next: string | null } {
    const { rows, lastId } = timelineRows(
      this.sql,
      this.firstKeptId(),
      after,
      Number.MAX_SAFE_INTEGER,
      limit,
      startedAt,
    );
    const more = lastId !== null && lastId < lastTimelineId(this.sql);
    return { rows, next: more ? String(lastId) : null };
  }

  timeline(): { at: number; kind: string; detail?: unknown }[] {
    return this.sql
      .exec<TimelineRow>(
        "SELECT at, kind, detail FROM timeline WHERE id >= ? ORDER BY id",
        this.firstKeptId(),
      )
      .toArray()
      .map((r) =>
        r.detail === null
          ? { at: r.at, kind: r.kind }
          : { at: r.at, kind: r.kind, detail: JSON.parse(r.detail) },
      );
  }
}
