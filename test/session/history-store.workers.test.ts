import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { restoreSelection } from "../../src/core/restore.js";
import { utf8Bytes } from "../../src/json-limits.js";
import {
  HistoryStore,
  restoreQuery,
  SQL_VALUE_MAX_BYTES,
} from "../../src/session/history-store.js";
import type { HistoryEvent, HistoryEventBody } from "../../src/vocabulary/log-events.js";
import { call, result } from "../support/log-events.js";

/**
 * The log's own rules, in the object's real SQLite storage: an append is one statement, so it
 * is written whole or not at all, and the store refuses what would break the log.
 */
const at = (seq: number, body: HistoryEventBody): HistoryEvent =>
  ({ ...body, seq, at: 1000 + seq }) as HistoryEvent;
/** A typed line (`text`: a large one, in the tests of steps too big for one bound value). */
const user = (
  turnId: string,
  text = `line "${turnId}" with 'quotes', \\ and ünïcode`,
): HistoryEventBody => ({ kind: "user", turnId, text, source: "text" });

/** Runs `fn` with a fresh store in a fresh object's storage. */
async function withStore<T>(fn: (store: HistoryStore, sql: SqlStorage) => T): Promise<T> {
  const stub = env.SESSION.get(env.SESSION.newUniqueId());
  return await runInDurableObject(stub, (_o, state) =>
    fn(new HistoryStore(state.storage), state.storage.sql),
  );
}

describe("HistoryStore in the object's SQLite storage", () => {
  it("keeps a many-event append whole and in order, with each event's frame and columns", async () => {
    const rows = await withStore((store, sql) => {
      const events = [at(1, user("t1")), at(2, call("c1")), at(3, result("c1"))];
      store.append(events, ["f1", "f2", ""]);
      expect(store.readAfter(0)).toEqual(events);
      expect(store.lastSeq()).toBe(3);
      return sql
        .exec<{
          seq: number;
          kind: string;
          turn_id: string;
          call_id: string | null;
          at: number;
          frame: string | null;
        }>("SELECT seq, kind, turn_id, call_id, at, frame FROM events ORDER BY seq")
        .toArray();
    });
    expect(rows).toEqual([
      { seq: 1, kind: "user", turn_id: "t1", call_id: null, at: 1001, frame: "f1" },
      { seq: 2, kind: "tool_call", turn_id: "t1", call_id: "c1", at: 1002, frame: "f2" },
      { seq: 3, kind: "tool_result", turn_id: "t1", call_id: "c1", at: 1003, frame: null },
    ]);
  });

  it("refuses a second call with the same id, an outcome without its call, a second outcome, and a gap in seq — writing none of that append", async () => {
    const problems = await withStore((store) => {
      store.append([at(1, user("t1")), at(2, call("c1"))]);
      const tries: [string, HistoryEvent[]][] = [
        ["same call twice", [at(3, user("t2")), at(4, call("c1"))]],
        ["outcome without call", [at(3, user("t2")), at(4, result("c9"))]],
        ["gap in seq", [at(3, user("t2")), at(5, user("t3"))]],
      ];
      const refused = tries.map(([what, events]) => {
        try {
          store.append(events);
          return `${what}: written`;
        } catch {
          return `${what}: refused`;
        }
      });
      // None of the refused appends left its first (valid) event behind.
      expect(store.lastSeq()).toBe(2);
      store.append([at(3, result("c1"))]);
      try {
        store.append([at(4, result("c1"))]);
        refused.push("second outcome: written");
      } catch {
        refused.push("second outcome: refused");
      }
      expect(store.lastSeq()).toBe(3);
      return refused;
    });
    expect(problems).toEqual([
      "same call twice: refused",
      "outcome without call: refused",
      "gap in seq: refused",
      "second outcome: refused",
    ]);
  });

  it("finds a line by its client text id, and refuses a second line with that id", async () => {
    const found = await withStore((store) => {
      const line = (turnId: string, textId: string): HistoryEventBody => ({
        kind: "user",
        turnId,
        text: "book a table",
        source: "text",
        textId,
      });
      store.append([at(1, line("t1", "L1")), at(2, user("t2"))]);
      let refused = false;
      try {
        store.append([at(3, line("t3", "L1"))]);
      } catch {
        refused = true;
      }
      return {
        refused,
        lastSeq: store.lastSeq(),
        L1: store.hasTextId("L1"),
        L2: store.hasTextId("L2"),
        // A line's text that equals an id is no id.
        text: store.hasTextId(user("t2").kind),
      };
    });
    expect(found).toEqual({ refused: true, lastSeq: 2, L1: true, L2: false, text: false });
  });

  it("writes a step's timeline rows in one go, in order, details as JSON", async () => {
    const rows = await withStore((store) => {
      store.trace([
        { at: 5, kind: "USER", detail: { turnId: "t1", text: 'a "quoted" line' } },
        { at: 5, kind: "TURN_COMPLETE", detail: undefined },
      ]);
      store.trace([{ at: 7, kind: "MODEL_TEXT", detail: { n: 1 } }]);
      return store.timeline();
    });
    expect(rows).toEqual([
      { at: 5, kind: "USER", detail: { turnId: "t1", text: 'a "quoted" line' } },
      { at: 5, kind: "TURN_COMPLETE" },
      { at: 7, kind: "MODEL_TEXT", detail: { n: 1 } },
    ]);
  });

  it("writes a step's events and timeline rows in one statement, each table in order, however many of each", async () => {
    const trace = (at: number, kind: "USER" | "MODEL_TEXT", n: number) =>
      ({ at, kind, detail: { n } }) as const;
    const written = await withStore((store, sql) => {
      // As many events as rows, fewer, more, and past the one-statement limit (8).
      store.append([at(1, user("t1"))], ["f1"], [trace(1, "USER", 1)]);
      store.append([at(2, call("c1")), at(3, result("c1"))], ["f2", "f3"], [trace(2, "USER", 2)]);
      store.append([at(4, user("t2"))], ["f4"], [trace(4, "USER", 3), trace(4, "MODEL_TEXT", 4)]);
      const many = Array.from({ length: 10 }, (_, i) => at(5 + i, user(`t${3 + i}`)));
      store.append(
        many,
        [],
        Array.from({ length: 9 }, (_, i) => trace(5, "MODEL_TEXT", 5 + i)),
      );
      return {
        seqs: store.readAfter(0).map((e) => e.seq),
        frames: sql
          .exec<{ frame: string | null }>("SELECT frame FROM events WHERE seq <= 4 ORDER BY seq")
          .toArray()
          .map((r) => r.frame),
        trace: store.timeline().map((r) => (r.detail as { n: number }).n),
      };
    });
    expect(written).toEqual({
      seqs: Array.from({ length: 14 }, (_, i) => i + 1),
      frames: ["f1", "f2", "f3", "f4"],
      trace: Array.from({ length: 13 }, (_, i) => i + 1),
    });
  });

  it("writes a step of many large lines whole (lines held through speech and joined: found by the attack)", async () => {
    const written = await withStore((store) => {
      // 22 lines of 260,000 characters, each with its frame: ~11 MB in one step, more than
      // SQLite takes in one bound value (it refused the step's one JSON batch: SQLITE_TOOBIG).
      const text = "x".repeat(260_000);
      const lines = Array.from({ length: 22 }, (_, i) => at(i + 1, user(`t${i + 1}`, text)));
      const frames = lines.map((e) => JSON.stringify({ type: "user", seq: e.seq, text }));
      store.append(lines, frames, [{ at: 1, kind: "LINES_JOINED", detail: { lines: 22 } }]);
      return {
        lastSeq: store.lastSeq(),
        texts: store.readAfter(0).every((e) => e.kind === "user" && e.text.length === 260_000),
        frames: store.framesAfter(20).map((f) => f.length),
        trace: store.timeline().map((r) => r.kind),
      };
    });
    expect(written).toEqual({
      lastSeq: 22,
      texts: true,
      frames: [expect.any(Number), expect.any(Number)],
      trace: ["LINES_JOINED"],
    });
  });

  it("refuses a large step whole, as a small one (its first events are not left behind)", async () => {
    const left = await withStore((store) => {
      store.append([at(1, user("t1")), at(2, call("c1"))]);
      const text = "x".repeat(260_000);
      const big = Array.from({ length: 22 }, (_, i) => at(i + 3, user(`t${i + 2}`, text)));
      let refused = false;
      try {
        // The last event breaks a rule (a second call c1): none of the 23 may stay.
        store.append([...big, at(25, call("c1"))], [], []);
      } catch {
        refused = true;
      }
      return { refused, lastSeq: store.lastSeq() };
    });
    expect(left).toEqual({ refused: true, lastSeq: 2 });
  });

  it("refuses a step's timeline rows with its events (the interpreter then writes them by themselves)", async () => {
    const left = await withStore((store) => {
      store.append(
        [at(1, user("t1")), at(2, call("c1"))],
        [],
        [{ at: 1, kind: "USER", detail: undefined }],
      );
      let refused = false;
      try {
        store.append([at(3, call("c1"))], [], [{ at: 3, kind: "TOOL_CALL", detail: undefined }]);
      } catch {
        refused = true;
      }
      return { refused, lastSeq: store.lastSeq(), kinds: store.timeline().map((r) => r.kind) };
    });
    expect(left).toEqual({ refused: true, lastSeq: 2, kinds: ["USER"] });
  });

  it("writes a step's rows through the naive relay's unchecked log too, and counts them against the cap", async () => {
    const kept = await runInDurableObject(
      env.SESSION.get(env.SESSION.newUniqueId()),
      (_o, state) => {
        const store = new HistoryStore(state.storage, false, 3);
        for (let seq = 1; seq <= 4; seq++)
          store.append(
            [at(seq, user(`t${seq}`))],
            [],
            [
              { at: seq, kind: "USER", detail: undefined },
              { at: seq, kind: "MODEL_TEXT", detail: undefined },
            ],
          );
        return {
          unchecked: state.storage.sql
            .exec<{ n: number }>("SELECT COUNT(*) AS n FROM events_unchecked")
            .one().n,
          rows: store.timeline().map((r) => `${r.at}${r.kind}`),
          dropped: store.timelineDropped(),
        };
      },
    );
    expect(kept).toEqual({
      unchecked: 4,
      rows: ["3MODEL_TEXT", "4USER", "4MODEL_TEXT"],
      dropped: 5,
    });
  });

  it("keeps the timeline's newest rows within its cap, and says how many went", async () => {
    const kept = await runInDurableObject(
      env.SESSION.get(env.SESSION.newUniqueId()),
      (_o, state) => {
        const store = new HistoryStore(state.storage, true, 5);
        const before = store.timelineDropped();
        // A flood of bad frames, a step's rows at a time.
        for (let at = 1; at <= 12; at += 3)
          store.trace([0, 1, 2].map((i) => ({ at: at + i, kind: "BAD_FRAME", detail: undefined })));
        return {
          before,
          rows: store.timeline().map((r) => r.at),
          dropped: store.timelineDropped(),
        };
      },
    );
    expect(kept).toEqual({ before: 0, rows: [8, 9, 10, 11, 12], dropped: 7 });
  });

  it("trims the stored rows a slack at a time (a sixteenth of the cap), reads within the cap exactly", async () => {
    const kept = await runInDurableObject(
      env.SESSION.get(env.SESSION.newUniqueId()),
      (_o, state) => {
        const store = new HistoryStore(state.storage, true, 48);
        const stored = () =>
          state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM timeline").one().n;
        let most = 0;
        for (let at = 1; at <= 60; at++) {
          store.trace([{ at, kind: "MODEL_TEXT", detail: undefined }]);
          most = Math.max(most, stored());
        }
        const rows = store.timeline().map((r) => r.at);
        return { first: rows[0], count: rows.length, dropped: store.timelineDropped(), most };
      },
    );
    expect(kept).toEqual({ first: 13, count: 48, dropped: 12, most: 50 });
  });
});

/**
 * `storage` with every string bound to a statement measured: the largest, in UTF-8 bytes
 * (what Cloudflare's SQLite limits, at 2 MB in production and 4 MiB in local workerd).
 */
function measured(storage: DurableObjectStorage): {
  storage: DurableObjectStorage;
  largest: () => number;
} {
  let largest = 0;
  const sql = new Proxy(storage.sql, {
    get(target, name) {
      if (name !== "exec") return Reflect.get(target, name, target);
      return (query: string, ...bindings: unknown[]) => {
        for (const value of bindings)
          if (typeof value === "string") largest = Math.max(largest, utf8Bytes(value));
        return target.exec(query, ...bindings);
      };
    },
  });
  const wrapped = new Proxy(storage, {
    get(target, name) {
      if (name === "sql") return sql;
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage: wrapped, largest: () => largest };
}

describe("a step's write, measured against production's 2 MB value", () => {
  it("writes large multi-byte lines whole without binding a value over 2 MB: under the old 1,000,000-character cap, the same step was one 2.6 MB value that local workerd takes and Cloudflare refuses (the control)", async () => {
    const seen = await runInDurableObject(
      env.SESSION.get(env.SESSION.newUniqueId()),
      (_o, state) => {
        const { storage, largest } = measured(state.storage);
        const store = new HistoryStore(storage);
        // 4 lines of 110,000 CJK characters, each with its frame: 880,000 characters (under the
        // character cap), 3 bytes each in UTF-8: ~2.64 MB as one JSON value.
        const text = "語".repeat(110_000);
        const lines = Array.from({ length: 4 }, (_, i) => at(i + 1, user(`t${i + 1}`, text)));
        const frames = lines.map((e) => JSON.stringify({ type: "user", seq: e.seq, text }));
        store.append(lines, frames);
        const written = store.readAfter(0).map((e) => (e.kind === "user" ? e.text.length : 0));
        // The control: the step as the character cap batched it, one JSON value.
        const rows = lines.map((e, i) => [
          e.seq,
          e.kind,
          `t${i + 1}`,
          null,
          e.at,
          JSON.stringify(e),
          frames[i],
        ]);
        const asOneValue = JSON.stringify(rows);
        const scratch = state.storage.sql;
        scratch.exec("CREATE TABLE IF NOT EXISTS scratch_value (v TEXT)");
        scratch.exec("INSERT INTO scratch_value (v) VALUES (?)", asOneValue);
        return {
          largest: largest(),
          written,
          oldChars: rows.reduce((n, r) => n + String(r[5]).length + String(r[6]).length, 0),
          oldBytes: utf8Bytes(asOneValue),
          localTookIt: scratch.exec("SELECT COUNT(*) AS n FROM scratch_value").one().n,
        };
      },
    );
    expect(seen.written).toEqual([110_000, 110_000, 110_000, 110_000]);
    expect(seen.largest).toBeLessThanOrEqual(SQL_VALUE_MAX_BYTES);
    expect(seen.largest).toBeGreaterThan(300_000); // a line and its frame: measured indeed
    // The control: under 1,000,000 characters, over 2 MB — and local workerd took it.
    expect(seen.oldChars).toBeLessThan(1_000_000);
    expect(seen.oldBytes).toBeGreaterThan(SQL_VALUE_MAX_BYTES);
    expect(seen.localTookIt).toBe(1);
  });

  it("refuses an event whose row is over 2 MB here as Cloudflare would, though local workerd would take it, and writes none of its step", async () => {
    const left = await withStore((store) => {
      store.append([at(1, user("t1"))]);
      // 700,000 CJK characters: 2.1 MB of body alone.
      const big = at(3, user("t3", "語".repeat(700_000)));
      let refused = "";
      try {
        store.append([at(2, user("t2")), big]);
      } catch (err) {
        refused = (err as Error).message;
      }
      return { refused, lastSeq: store.lastSeq() };
    });
    expect(left.refused).toMatch(/over the 2000000 a stored row may hold on Cloudflare/);
    expect(left.lastSeq).toBe(1);
  });
});

describe("a restore's read", () => {
  it("reads what restoreSelection selects, through indexes, not by scanning the log", async () => {
    const { selected, expected, plan } = await withStore((store, sql) => {
      const bodies: HistoryEventBody[] = [];
      for (let t = 1; t <= 60; t++) {
        bodies.push(user(`t${t}`), { kind: "model_text", turnId: `t${t}`, text: "words" });
        if (t % 3 === 0) bodies.push(call(`c${t}`, `t${t}`));
        if (t % 3 === 0 && t < 60) bodies.push(result(`c${t}`, `t${t}`));
        if (t % 20 === 0) bodies.push({ kind: "status", state: "live" });
        if (t === 30) bodies.push({ kind: "handoff", from: "front", to: "desk", reason: "x" });
        if (t < 60) bodies.push({ kind: "turn_complete", turnId: `t${t}` });
      }
      store.append(bodies.map((b, i) => at(i + 1, b)));
      const rows = sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${restoreQuery("events")}`)
        .toArray()
        .map((r) => r.detail);
      return {
        selected: store.readForRestore(),
        expected: restoreSelection(store.readAfter(0)),
        plan: rows,
      };
    });
    expect(selected).toEqual(expected);
    expect(selected.length).toBeLessThan(60);
    // No full scan: each kind through its index, the last turn from the log's end (the one
    // SCAN without an index stops at the first user row from the end: ORDER BY seq DESC LIMIT 1).
    const scans = plan.filter((p) => /^SCAN events$/.test(p));
    expect(scans.length, plan.join("\n")).toBe(1);
    for (const kind of ["call_rows", "outcome_rows", "status_rows", "handoff_rows"])
      expect(
        plan.some((p) => p.includes(`USING INDEX events_${kind}`)),
        plan.join("\n"),
      ).toBe(true);
  });
});
