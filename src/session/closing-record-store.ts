/**
 * The session's closing record in its own storage, and its copy in the usage database (D1).
 *
 * The record is kept first (one row, a new version each time the session ends or idles), then
 * copied to the database by a request nobody waits on: a frame's path never holds for it. A
 * copy that failed, or never ran because the object stopped, is retried from the kept record:
 * by the object's alarm (set before the first attempt, so it outlives a crash), and at the
 * object's next start.
 */
import { UPSERT_SESSION_USAGE, usageRowValues } from "../contracts/usage-table.js";
import type { ClosingCopy, ClosingRecord } from "../metering/closing-record.js";
import { withinDeadline } from "../outbound.js";
import { type Migration, migrate } from "./migrations.js";
import type { SessionAlarm } from "./session-alarm.js";

const CLOSING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "closing: the session's closing record, and which version the usage database holds",
    up(sql) {
      sql.exec(`CREATE TABLE closing_record (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        body TEXT NOT NULL,
        version INTEGER NOT NULL,
        written_version INTEGER NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0
      )`);
    },
  },
];

/** The safety net: a copy not confirmed by then is tried again (the object may have died). */
const FIRST_RETRY_MS = 30_000;
/** Retries back off to this, and stop after MAX_ATTEMPTS (the record stays readable). */
const MAX_RETRY_MS = 3_600_000;
const MAX_ATTEMPTS = 30;
/**
 * A copy the database has not answered by then is taken as failed (and retried): a write
 * that never answers must not hold up every later copy. D1 takes no abort signal, so the
 * write itself is left to end on its own.
 */
export const USAGE_WRITE_DEADLINE_MS = 10_000;

type Row = { body: string; version: number; written_version: number; attempts: number };

export class ClosingRecordStore {
  private readonly sql: SqlStorage;
  /** A copy under way (one at a time; a newer record is copied after it). */
  private copying: Promise<void> | null = null;

  constructor(
    storage: DurableObjectStorage,
    private readonly alarm: SessionAlarm,
    /** The usage database, or undefined when the Worker binds none. */
    private readonly db: D1Database | undefined,
    private readonly log: (message: string) => void,
    /** Each copy sent to the database (one subrequest). */
    private readonly sent: () => void = () => {},
    private readonly deadlineMs = USAGE_WRITE_DEADLINE_MS,
  ) {
    this.sql = storage.sql;
    migrate(storage, "closing", CLOSING_MIGRATIONS);
  }

  read(): { record: ClosingRecord; copy: ClosingCopy } | null {
    const row = this.row();
    if (row === null) return null;
    return {
      record: JSON.parse(row.body) as ClosingRecord,
      copy:
        this.db === undefined
          ? "no_database"
          : row.written_version >= row.version
            ? "written"
            : "pending",
    };
  }

  /** The next record's version. */
  nextVersion(): number {
    return (this.row()?.version ?? 0) + 1;
  }

  /** Keeps `record` (its version from nextVersion) and copies it to the database soon. */
  keep(record: ClosingRecord): void {
    this.sql.exec(
      `INSERT INTO closing_record (id, body, version) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET body = excluded.body, version = excluded.version, attempts = 0`,
      JSON.stringify(record),
      record.version,
    );
    if (this.db === undefined) return;
    // Set with the record (the output gate holds both): a crash before the copy still retries.
    this.alarm.set("closing", Date.now() + FIRST_RETRY_MS);
    void this.copy();
  }

  /** Whether a kept record waits for its copy. */
  pending(): boolean {
    const row = this.row();
    return this.db !== undefined && row !== null && row.written_version < row.version;
  }

  /**
   * Copies the kept record to the database unless it holds it already. Never throws: a failure
   * is said in the log and tried again later, with the alarm.
   */
  copy(): Promise<void> {
    if (this.copying !== null) return this.copying.then(() => this.copy());
    const row = this.row();
    const db = this.db;
    if (db === undefined || row === null || row.written_version >= row.version)
      return Promise.resolve();
    const record = JSON.parse(row.body) as ClosingRecord;
    this.sent();
    this.copying = withinDeadline(
      db
        .prepare(UPSERT_SESSION_USAGE)
        .bind(...usageRowValues(record))
        .run(),
      this.deadlineMs,
    )
      .then(
        () => {
          this.sql.exec(
            "UPDATE closing_record SET written_version = MAX(written_version, ?), attempts = 0 WHERE id = 1",
            record.version,
          );
          if (!this.pending()) this.alarm.clear("closing");
        },
        (err: unknown) => this.failed(record, err),
      )
      .finally(() => {
        this.copying = null;
      });
    return this.copying;
  }

  private failed(record: ClosingRecord, err: unknown): void {
    const attempts = (this.row()?.attempts ?? 0) + 1;
    this.sql.exec("UPDATE closing_record SET attempts = ? WHERE id = 1", attempts);
    const message = err instanceof Error ? err.message : String(err);
    if (attempts >= MAX_ATTEMPTS) {
      this.log(
        `usage record of session ${record.sessionId} not written after ${attempts} attempts (${message}); it stays in the session (GET /v1/sessions/:id)`,
      );
      this.alarm.clear("closing");
      return;
    }
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempts - 1));
    this.log(
      `usage record of session ${record.sessionId} not written (${message}); retrying in ${Math.round(delay / 1000)} s`,
    );
    this.alarm.set("closing", Date.now() + delay);
  }

  private row(): Row | null {
    return (
      this.sql
        .exec<Row>(
          "SELECT body, version, written_version, attempts FROM closing_record WHERE id = 1",
        )
        .toArray()[0] ?? null
    );
  }
}
