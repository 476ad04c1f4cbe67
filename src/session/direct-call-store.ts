import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "direct_call: the service session of the device's direct call (one row)",
    up(sql) {
      sql.exec(`CREATE TABLE direct_call (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        service_session_id TEXT NOT NULL
      )`);
    },
  },
];

/**
 * The direct call (a device's WebRTC call with the service) whose sideband the session's
 * model connection is: kept in storage while the call lasts, so that an object that
 * restarts attaches to the same call again instead of leaving its tools unanswered.
 */
export class DirectCallStore {
  private readonly sql: SqlStorage;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    migrate(storage, "direct_call", MIGRATIONS);
  }

  set(serviceSessionId: string): void {
    this.sql.exec(
      "INSERT INTO direct_call (id, service_session_id) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET service_session_id = excluded.service_session_id",
      serviceSessionId,
    );
  }

  clear(): void {
    this.sql.exec("DELETE FROM direct_call");
  }

  read(): string | null {
    return (
      this.sql
        .exec<{ service_session_id: string }>("SELECT service_session_id FROM direct_call")
        .toArray()[0]?.service_session_id ?? null
    );
  }
}
