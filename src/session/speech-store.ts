import type { UnansweredSpeech } from "../core/restore.js";
import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "unanswered_speech: speech the model heard and has not answered yet (one row)",
    up(sql) {
      sql.exec(`CREATE TABLE unanswered_speech (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        transcript TEXT NOT NULL,
        at INTEGER NOT NULL
      )`);
    },
  },
];

/** A transcription kept beyond this is cut (a question, not a monologue). */
const MAX_TRANSCRIPT_CHARS = 4_000;

/**
 * Speech the user finished that is not yet a turn: the model heard it (it signalled speech,
 * and may have transcribed it) and has not begun to answer. It lives in no log event until
 * the answer opens its turn, so it is kept here, in the same step as the signal, and cleared
 * in the step that opens the turn: an object that restarts in between carries it over
 * (core/restore.ts `planRestart`) instead of losing it in silence. Its own component: a
 * release without it never reads or migrates this table.
 */
export class SpeechStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "unanswered_speech", MIGRATIONS);
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
}
