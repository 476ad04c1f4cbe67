import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "pending_handoff: a backend's handoff waiting for the turn to end (one row)",
    up(sql) {
      sql.exec(`CREATE TABLE pending_handoff (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        agent TEXT NOT NULL,
        reason TEXT NOT NULL
      )`);
    },
  },
];

/**
 * A handoff the app's backend asked for (202) while a turn was open: kept in storage until it
 * takes effect, so a restart of the object before that turn ends does not lose it. (A
 * transfer call's handoff needs no row: its answered call is in the log.)
 */
export class PendingHandoffStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "handoff", MIGRATIONS);
  }

  set(agent: string, reason: string): void {
    this.sql.exec(
      "INSERT INTO pending_handoff (id, agent, reason) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, reason = excluded.reason",
      agent,
      reason,
    );
  }

  clear(): void {
    this.sql.exec("DELETE FROM pending_handoff");
  }

  read(): { agent: string; reason: string } | null {
    return (
      this.sql
        .exec<{ agent: string; reason: string }>("SELECT agent, reason FROM pending_handoff")
        .toArray()[0] ?? null
    );
  }
}
