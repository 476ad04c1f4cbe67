/**
 * Versioned schema migrations for a Durable Object's SQLite storage.
 *
 * Each component that owns tables (the session shell's `meta`, the history's event log, …)
 * keeps its own ordered list and its own row in `schema_version`, so components migrate
 * independently. A migration runs once, in a transaction together with its version bump.
 */
export interface Migration {
  /** 1, 2, 3, … without gaps, in order. */
  version: number;
  description: string;
  up(sql: SqlStorage): void;
}

const CREATE_SCHEMA_VERSION = `CREATE TABLE IF NOT EXISTS schema_version (
  component TEXT PRIMARY KEY,
  version INTEGER NOT NULL
)`;

/** True when any component has ever migrated this storage (it is not a fresh object). */
export function hasSchema(sql: SqlStorage): boolean {
  return (
    sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
      .toArray().length > 0
  );
}

/** The component's current schema version; 0 when it never migrated. */
function schemaVersion(sql: SqlStorage, component: string): number {
  if (!hasSchema(sql)) return 0;
  const rows = sql
    .exec<{ version: number }>("SELECT version FROM schema_version WHERE component = ?", component)
    .toArray();
  return rows[0]?.version ?? 0;
}

/** Brings `component` up to its latest version; returns that version. */
export function migrate(
  storage: DurableObjectStorage,
  component: string,
  migrations: readonly Migration[],
): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`${component}: migration ${i} has version ${m.version}, expected ${i + 1}`);
    }
  });
  const sql = storage.sql;
  sql.exec(CREATE_SCHEMA_VERSION);
  let current = schemaVersion(sql, component);
  if (current > migrations.length) {
    throw new Error(
      `${component}: storage is at version ${current}, code knows ${migrations.length}`,
    );
  }
  for (const m of migrations.slice(current)) {
    storage.transactionSync(() => {
      m.up(sql);
      sql.exec(
        `INSERT INTO schema_version (component, version) VALUES (?, ?)
         ON CONFLICT (component) DO UPDATE SET version = excluded.version`,
        component,
        m.version,
      );
    });
    current = m.version;
  }
  return current;
}
