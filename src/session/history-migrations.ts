import type { Migration } from "./migrations.js";

/** What the store says when a write's first seq is not the log's next (seq_contiguous). */
export const SEQ_TAKEN = "seq is not the next one";

/**
 * The log's schema, migration by migration (events, timeline and their indexes): applied in
 * order by HistoryStore when its object starts. Append only: a released migration never changes.
 */
export const HISTORY_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "events: the ordered log; timeline: the debug trace; kv: small session state",
    up(sql) {
      sql.exec(`CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        turn_id TEXT,
        call_id TEXT,
        at INTEGER NOT NULL,
        body TEXT NOT NULL
      )`);
      // At most one call and one outcome per call id, enforced by the store itself.
      sql.exec("CREATE UNIQUE INDEX one_call_per_id ON events (call_id) WHERE kind = 'tool_call'");
      sql.exec(
        "CREATE UNIQUE INDEX one_outcome_per_call ON events (call_id) WHERE kind IN ('tool_result', 'tool_cancelled')",
      );
      // An outcome only after its call; seqs without gaps.
      sql.exec(`CREATE TRIGGER outcome_after_call BEFORE INSERT ON events
        WHEN NEW.kind IN ('tool_result', 'tool_cancelled')
          AND NOT EXISTS (SELECT 1 FROM events WHERE kind = 'tool_call' AND call_id = NEW.call_id)
        BEGIN SELECT RAISE(ABORT, 'tool outcome without its call'); END`);
      sql.exec(`CREATE TRIGGER seq_contiguous BEFORE INSERT ON events
        WHEN NEW.seq <> (SELECT COALESCE(MAX(seq), 0) + 1 FROM events)
        BEGIN SELECT RAISE(ABORT, '${SEQ_TAKEN}'); END`);
      sql.exec(`CREATE TABLE timeline (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT
      )`);
      sql.exec("CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    },
  },
  {
    version: 2,
    description: "events_unchecked: the naive relay's log, with none of the store's rules",
    up(sql) {
      sql.exec(`CREATE TABLE events_unchecked (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        turn_id TEXT,
        call_id TEXT,
        at INTEGER NOT NULL,
        body TEXT NOT NULL
      )`);
    },
  },
  {
    version: 3,
    description: "kv: never read or written; dropped",
    up(sql) {
      sql.exec("DROP TABLE IF EXISTS kv");
    },
  },
  {
    version: 4,
    description: "frame: each event's client frame, encoded once when written (replays send it)",
    up(sql) {
      sql.exec("ALTER TABLE events ADD COLUMN frame TEXT");
      sql.exec("ALTER TABLE events_unchecked ADD COLUMN frame TEXT");
    },
  },
  {
    version: 5,
    description: "calls, outcomes, status and handoff rows indexed: a restore reads no other rows",
    up(sql) {
      // Partial indexes: a row of another kind is not indexed, so its insert pays nothing.
      for (const table of ["events", "events_unchecked"]) {
        for (const [name, where] of [
          ["call_rows", "kind = 'tool_call'"],
          ["outcome_rows", "kind IN ('tool_result', 'tool_cancelled')"],
          ["status_rows", "kind = 'status'"],
          ["handoff_rows", "kind = 'handoff'"],
        ]) {
          sql.exec(`CREATE INDEX ${table}_${name} ON ${table} (seq) WHERE ${where}`);
        }
      }
    },
  },
  {
    version: 6,
    description: "one user line per client text id (text.textId), looked up by that id",
    up(sql) {
      // Unique in the checked log: a line sent again is taken once, and the store refuses a
      // second. The naive relay's log keeps whatever it is given, but is looked up the same way.
      sql.exec(`CREATE UNIQUE INDEX one_line_per_text_id ON events (body ->> '$.textId')
        WHERE kind = 'user' AND body ->> '$.textId' IS NOT NULL`);
      sql.exec(`CREATE INDEX events_unchecked_text_ids ON events_unchecked (body ->> '$.textId')
        WHERE kind = 'user' AND body ->> '$.textId' IS NOT NULL`);
    },
  },
  {
    version: 7,
    description: "a step's events and its timeline rows in one statement, through a view",
    up(sql) {
      // Inserting into the view writes each row's event (if any) and timeline row (if any):
      // one statement for a step's whole write, where two cost twice (see `append`). The
      // event goes through its table's own rules, which refuse the statement as a whole.
      for (const table of ["events", "events_unchecked"]) {
        sql.exec(`CREATE VIEW ${table}_step AS
          SELECT seq, kind, turn_id, call_id, at, body, frame,
            NULL AS trace_at, NULL AS trace_kind, NULL AS trace_detail
          FROM ${table} WHERE 0`);
        sql.exec(`CREATE TRIGGER ${table}_step_write INSTEAD OF INSERT ON ${table}_step BEGIN
          INSERT INTO ${table} (seq, kind, turn_id, call_id, at, body, frame)
            SELECT NEW.seq, NEW.kind, NEW.turn_id, NEW.call_id, NEW.at, NEW.body, NEW.frame
            WHERE NEW.seq IS NOT NULL;
          INSERT INTO timeline (at, kind, detail)
            SELECT NEW.trace_at, NEW.trace_kind, NEW.trace_detail WHERE NEW.trace_kind IS NOT NULL;
        END`);
      }
    },
  },
];
