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
  {
    version: 2,
    description: "direct_call.agent: the agent the call's service session is set up as",
    up(sql) {
      sql.exec("ALTER TABLE direct_call ADD COLUMN agent TEXT");
    },
  },
];

/** The direct call, and the agent its service session is set up as (null: from before v2). */
export interface StoredCall {
  serviceSessionId: string;
  agent: string | null;
}

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

  set(serviceSessionId: string, agent: string): void {
    this.sql.exec(
      "INSERT INTO direct_call (id, service_session_id, agent) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET service_session_id = excluded.service_session_id, agent = excluded.agent",
      serviceSessionId,
      agent,
    );
  }

  /** The call's service session now speaks as `agent` (a handoff reached it). */
  setAgent(serviceSessionId: string, agent: string): void {
    this.sql.exec(
      "UPDATE direct_call SET agent = ? WHERE service_session_id = ?",
      agent,
      serviceSessionId,
    );
  }

  clear(): void {
    this.sql.exec("DELETE FROM direct_call");
  }

  read(): StoredCall | null {
    const row = this.sql
      .exec<{ service_session_id: string; agent: string | null }>(
        "SELECT service_session_id, agent FROM direct_call",
      )
      .toArray()[0];
    return row === undefined
      ? null
      : { serviceSessionId: row.service_session_id, agent: row.agent };
  }
}
