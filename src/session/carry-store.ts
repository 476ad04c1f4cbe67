import type { UnansweredSpeech } from "../core/restore.js";
import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "restart_carry: speech not yet a turn, and the model's resumption handle (one row each)",
    up(sql) {
      sql.exec(`CREATE TABLE unanswered_speech (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        transcript TEXT NOT NULL,
        at INTEGER NOT NULL
      )`);
      sql.exec(`CREATE TABLE resumption_handle (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        handle TEXT NOT NULL,
        seq INTEGER NOT NULL
      )`);
    },
  },
];

/** A transcription kept beyond this is cut (a question, not a monologue). */
const MAX_TRANSCRIPT_CHARS = 4_000;

/** A resumption handle, and the log's last seq when it was issued. */
export interface KeptHandle {
  handle: string;
  seq: number;
}

/**
 * What a restart of the session's object carries over that its log does not hold, kept in
 * the step that changed it:
 * - speech the user finished that is not yet a turn: the model heard it (it signalled speech,
 *   and may have transcribed it) and has not begun to answer. It is in no log event until the
 *   answer opens its turn, and cleared in that same step: an object that restarts in between
 *   carries it over (core/restore.ts `planRestart`) instead of losing it in silence;
 * - the model's latest resumption handle (Gemini), with the log's seq then: a restart with
 *   nothing said since resumes the model's own session instead of seeding a new one.
 * Its own component: a release without it never reads or migrates these tables.
 */
export class CarryStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "restart_carry", MIGRATIONS);
  }

  /** Keeps `transcript` (the speech's words so far), or clears it (null: answered, or gone). */
  keep(transcript: string | null, at: number): void {
    if (transcript === null) {
      this.sql.exec("DELETE FROM unanswered_speech");
      return;
    }
    this.sql.exec(
      "INSERT INTO unanswered_speech (id, transcript, at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET transcript = excluded.transcript, at = excluded.at",
      transcript.slice(0, MAX_TRANSCRIPT_CHARS),
      at,
    );
  }

  read(): UnansweredSpeech | null {
    return (
      this.sql
        .exec<{ transcript: string; at: number }>("SELECT transcript, at FROM unanswered_speech")
        .toArray()[0] ?? null
    );
  }

  /** Keeps the model's latest handle (null: none any more), issued when the log was at `seq`. */
  keepHandle(handle: string | null, seq: number): void {
    if (handle === null) {
      this.sql.exec("DELETE FROM resumption_handle");
      return;
    }
    this.sql.exec(
      "INSERT INTO resumption_handle (id, handle, seq) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET handle = excluded.handle, seq = excluded.seq",
      handle,
      seq,
    );
  }

  readHandle(): KeptHandle | null {
    return (
      this.sql
        .exec<{ handle: string; seq: number }>("SELECT handle, seq FROM resumption_handle")
        .toArray()[0] ?? null
    );
  }
}
