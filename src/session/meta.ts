import type { SessionLimitOptions, SessionOptions } from "../agents/define.js";
import type { SessionInit, SessionRecording } from "../contracts/session-api.js";
import type { EndReason } from "../metering/closing-record.js";
import type { ProviderName } from "../provider-registry.js";
import { hasSchema, type Migration, migrate } from "./migrations.js";

/** What the session shell keeps about its session, in the `meta` table (one row). */
export interface SessionMeta {
  sessionId: string;
  agent: string;
  provider: ProviderName;
  metadata: Record<string, unknown>;
  /** The per-session options its creator set (instructions, voice, model, language). */
  options: SessionOptions;
  /** The caps its creator asked for (the agent's apply beside them: sessionLimits). */
  limits: SessionLimitOptions;
  createdAt: string;
  endedAt: string | null;
  /** How it ended (null while open, or for a session ended before this was kept). */
  endedBy: EndReason | null;
  /** What its creator asked to record (empty: what its agent says). */
  recording: SessionRecording;
}

const META_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "meta: one row describing the session",
    up(sql) {
      sql.exec(`CREATE TABLE meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        session_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        provider TEXT NOT NULL,
        metadata TEXT NOT NULL,
        created_at TEXT NOT NULL,
        ended_at TEXT
      )`);
    },
  },
  {
    version: 2,
    description: "meta: the session's options (instructions, voice, model, language)",
    up(sql) {
      sql.exec("ALTER TABLE meta ADD COLUMN options TEXT NOT NULL DEFAULT '{}'");
    },
  },
  {
    version: 3,
    description: "meta: the caps the session's creator asked for",
    up(sql) {
      sql.exec("ALTER TABLE meta ADD COLUMN limits TEXT NOT NULL DEFAULT '{}'");
    },
  },
  {
    version: 4,
    description: "meta: how the session ended (its closing record says it)",
    up(sql) {
      sql.exec("ALTER TABLE meta ADD COLUMN ended_by TEXT");
    },
  },
];

/**
 * What the session's creator asked to record: a component of its own (not a `meta` column),
 * so that `session` stays at the version the previous release knows and a rollback during a
 * deferred deploy still opens the storage (docs/OPERATING.md, "Deploys"; the previous
 * release never reads this table).
 */
const RECORDING_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "session_recording: what the session's creator asked to record (one row)",
    up(sql) {
      sql.exec(`CREATE TABLE session_recording (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        recording TEXT NOT NULL
      )`);
    },
  },
];

type MetaRow = {
  session_id: string;
  agent: string;
  provider: string;
  metadata: string;
  options: string;
  limits: string;
  created_at: string;
  ended_at: string | null;
  ended_by: string | null;
};

/**
 * The `meta` table. Nothing is written to a fresh object's storage before `init`, so
 * probing an id that was never created leaves no trace.
 */
export class MetaStore {
  constructor(private readonly storage: DurableObjectStorage) {
    // An object that already has a schema is brought up to date at once.
    if (hasSchema(storage.sql)) this.migrate();
  }

  private migrate(): void {
    migrate(this.storage, "session", META_MIGRATIONS);
    migrate(this.storage, "session_recording", RECORDING_MIGRATIONS);
  }

  /** Records the session; a second init of the same session is a no-op. */
  init(opts: SessionInit): void {
    this.migrate();
    const existing = this.read();
    if (existing) {
      if (existing.sessionId !== opts.sessionId) {
        throw new Error("this object already holds another session");
      }
      return;
    }
    // Both in one synchronous step: the object's implicit transaction writes them together.
    this.storage.sql.exec(
      `INSERT INTO meta (id, session_id, agent, provider, metadata, options, limits, created_at)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?)`,
      opts.sessionId,
      opts.agent,
      opts.provider,
      JSON.stringify(opts.metadata),
      JSON.stringify(opts.options),
      JSON.stringify(opts.limits ?? {}),
      opts.createdAt,
    );
    this.storage.sql.exec(
      "INSERT INTO session_recording (id, recording) VALUES (1, ?)",
      JSON.stringify(opts.recording ?? {}),
    );
  }

  read(): SessionMeta | null {
    if (!hasSchema(this.storage.sql)) return null;
    const row = this.storage.sql
      .exec<MetaRow>(
        "SELECT session_id, agent, provider, metadata, options, limits, created_at, ended_at, ended_by FROM meta WHERE id = 1",
      )
      .toArray()[0];
    if (!row) return null;
    return {
      sessionId: row.session_id,
      agent: row.agent,
      provider: row.provider as ProviderName,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      options: JSON.parse(row.options) as SessionOptions,
      limits: JSON.parse(row.limits) as SessionLimitOptions,
      createdAt: row.created_at,
      endedAt: row.ended_at,
      endedBy: row.ended_by as EndReason | null,
      recording: this.recording(),
    };
  }

  /** What the creator asked to record ({} for a session the previous release created). */
  private recording(): SessionRecording {
    const tables = this.storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session_recording'")
      .toArray();
    if (tables.length === 0) return {};
    const row = this.storage.sql
      .exec<{ recording: string }>("SELECT recording FROM session_recording WHERE id = 1")
      .toArray()[0];
    return row === undefined ? {} : (JSON.parse(row.recording) as SessionRecording);
  }

  /** The first end stands: a later one (a hang-up after a DELETE) changes nothing. */
  markEnded(at: string, by: EndReason): void {
    this.storage.sql.exec(
      "UPDATE meta SET ended_at = ?, ended_by = ? WHERE id = 1 AND ended_at IS NULL",
      at,
      by,
    );
  }
}

/**
 * Whether a session asks to run as the naive relay (a measurement arm, src/measurement): only
 * simulator sessions may, with `metadata.naive: true`, on a Worker that has the arm.
 */
export function asksForNaiveRelay(meta: Pick<SessionMeta, "provider" | "metadata">): boolean {
  return meta.provider === "simulator" && meta.metadata.naive === true;
}
