/**
 * GET /history and /timeline read a page of rows at a time (issue 53): objects may share a
 * 128 MB isolate, and the whole log of a long session, joined into one string beside its
 * parsed rows, would take a large share of it. An unpaged read is the same JSON as before,
 * streamed; a paged one (`limit`, `cursor`) answers a page and the next page's cursor.
 * Memory is measured as the rows any one statement hands the object (the session's SQLite
 * calls are counted while the reads run).
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STREAM_ROWS } from "../../src/session/history-reads.js";
import { HistoryStore } from "../../src/session/history-store.js";
import type { HistoryEvent, HistoryEventBody } from "../../src/vocabulary/log-events.js";
import { BASE, createSession, withKey } from "../support/gateway.js";
import { playTurn, simulatorSession } from "../support/session-flow.js";

const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(sessionId));

async function read(path: string): Promise<Response> {
  return exports.default.fetch(`${BASE}${path}`, { headers: withKey() });
}

/**
 * GET /history as it was built before pages (the reference, and the control): every row of
 * the log in one statement, joined.
 */
function wholeLogJson(sql: SqlStorage, firstAgent: string): { json: string; rows: number } {
  const rows = sql
    .exec<{ body: string; kind: string; turn_id: string | null }>(
      "SELECT body, kind, turn_id FROM events ORDER BY seq",
    )
    .toArray();
  const turns = new Map<string, string[]>();
  let agent = firstAgent;
  for (const { body, kind, turn_id: turnId } of rows) {
    if (kind === "handoff") agent = (JSON.parse(body) as { to: string }).to;
    else if (turnId === null) continue;
    else if (kind === "user") turns.set(turnId, [agent]);
    else if (kind === "model_text" || kind === "transcript" || kind === "tool_call") {
      const agents = turns.get(turnId);
      if (agents !== undefined && agents.at(-1) !== agent) agents.push(agent);
    }
  }
  const summary = [...turns].map(([turnId, agents]) => ({ turnId, agents }));
  return {
    json: `{"events":[${rows.map((r) => r.body).join(",")}],"turns":${JSON.stringify(summary)}}`,
    rows: rows.length,
  };
}

/**
 * Counts the rows each of the object's SQL statements hands back while `reads` run (its
 * storage's `exec`, wrapped for the time): the most any one statement gave.
 */
async function mostRowsAtOnce(sessionId: string, reads: () => Promise<void>): Promise<number> {
  const stub = stubOf(sessionId);
  let most = 0;
  let restore = () => {};
  await runInDurableObject(stub, (_o, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    const counted = (...args: Parameters<SqlStorage["exec"]>) => {
      const cursor = exec(...args);
      const toArray = cursor.toArray.bind(cursor);
      const next = cursor.next.bind(cursor);
      let rows = 0;
      const note = (n: number) => {
        rows += n;
        most = Math.max(most, rows);
      };
      return Object.assign(cursor, {
        toArray: () => {
          const all = toArray();
          note(all.length);
          return all;
        },
        next: () => {
          const step = next();
          if (step.done !== true) note(1);
          return step;
        },
        [Symbol.iterator]() {
          return this;
        },
      });
    };
    Object.defineProperty(sql, "exec", { value: counted, configurable: true, writable: true });
    restore = () => {
      Object.defineProperty(sql, "exec", { value: exec, configurable: true, writable: true });
    };
  });
  try {
    await reads();
  } finally {
    await runInDurableObject(stub, () => restore());
  }
  return most;
}

/** A session whose log holds `turns` typed turns (3 events each), with a handoff after the first third. */
async function longSession(turns: number): Promise<{ sessionId: string; events: number }> {
  const { sessionId } = await createSession();
  const events = await runInDurableObject(stubOf(sessionId), (_o, state) => {
    const store = new HistoryStore(state.storage);
    let seq = store.lastSeq();
    const at = (body: HistoryEventBody): HistoryEvent =>
      ({ ...body, seq: ++seq, at: 1_000 + seq }) as HistoryEvent;
    let batch: HistoryEvent[] = [];
    for (let t = 1; t <= turns; t++) {
      const turnId = `t${t}`;
      batch.push(at({ kind: "user", turnId, text: `line ${t}`, source: "text" }));
      if (t === Math.floor(turns / 3))
        batch.push(
          at({ kind: "handoff", turnId, from: "greeter", to: "billing", reason: "bills" }),
        );
      batch.push(at({ kind: "model_text", turnId, text: `answer ${t}` }));
      batch.push(at({ kind: "turn_complete", turnId }));
      if (batch.length >= 900) {
        store.append(batch);
        batch = [];
      }
    }
    store.append(batch);
    return store.lastSeq();
  });
  return { sessionId, events };
}

describe("GET /history, unpaged", () => {
  it("answers a small session (with a handoff) byte for byte as the whole log joined did", {
    timeout: 30_000,
  }, async () => {
    const { sessionId, client } = await simulatorSession({ calls: "" });
    await playTurn(client, "hello");
    const handoff = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/handoff`, {
      method: "POST",
      headers: { ...withKey(), "Content-Type": "application/json" },
      body: JSON.stringify({ agent: "billing", reason: "a bill" }),
    });
    expect(handoff.status).toBe(202);
    await playTurn(client, "what do I owe?");
    await playTurn(client, "thanks");
    client.close();
    const res = await read(`/v1/sessions/${sessionId}/history`);
    expect(res.headers.get("Content-Type")).toMatch(/application\/json/);
    const body = await res.text();
    const reference = await runInDurableObject(
      stubOf(sessionId),
      (_o, state) => wholeLogJson(state.storage.sql, "greeter").json,
    );
    expect(body).toBe(reference);
    const parsed = JSON.parse(body) as { events: { kind: string }[]; turns: unknown[] };
    expect(parsed.events.some((e) => e.kind === "handoff")).toBe(true);
    expect(parsed.turns.length).toBe(3);
  });
});

describe("a 20,000-event session's history", () => {
  it("is read whole, and in pages of at most `limit`, never more than a page of rows at once; the control (the whole log in one statement) takes all 20,000", {
    timeout: 60_000,
  }, async () => {
    const { sessionId, events } = await longSession(6_667);
    expect(events).toBeGreaterThanOrEqual(20_000);

    let whole = "";
    const streamed = await mostRowsAtOnce(sessionId, async () => {
      whole = await (await read(`/v1/sessions/${sessionId}/history`)).text();
    });
    const parsed = JSON.parse(whole) as {
      events: { seq: number }[];
      turns: { turnId: string; agents: string[] }[];
    };
    expect(parsed.events.map((e) => e.seq)).toEqual(
      Array.from({ length: events }, (_, i) => i + 1),
    );
    // A page of rows at a time (the counter saw them: a whole page at least).
    expect(streamed).toBe(STREAM_ROWS);

    const pages: { events: { seq: number }[]; turns: unknown[]; next?: string }[] = [];
    const paged = await mostRowsAtOnce(sessionId, async () => {
      let cursor: string | undefined;
      do {
        const query = `limit=1000${cursor === undefined ? "" : `&cursor=${cursor}`}`;
        const res = await read(`/v1/sessions/${sessionId}/history?${query}`);
        expect(res.status).toBe(200);
        const page = (await res.json()) as (typeof pages)[number];
        pages.push(page);
        cursor = page.next;
      } while (cursor !== undefined);
    });
    expect(pages.length).toBe(Math.ceil(events / 1000));
    expect(pages.every((p) => p.events.length <= 1000)).toBe(true);
    expect(pages.flatMap((p) => p.events)).toEqual(parsed.events);
    // Each turn summed up once, in the page of its user line, as the whole read says it
    // (the turn of the handoff: greeter, then billing).
    expect(pages.flatMap((p) => p.turns)).toEqual(parsed.turns);
    expect(parsed.turns.find((t) => t.turnId === "t2222")?.agents).toEqual(["greeter", "billing"]);
    expect(paged).toBeGreaterThanOrEqual(1000);
    expect(paged).toBeLessThanOrEqual(1001);

    // The control: the log as it was read before, in one statement.
    const control = await runInDurableObject(stubOf(sessionId), (_o, state) =>
      wholeLogJson(state.storage.sql, "greeter"),
    );
    expect(control.rows).toBe(events);
    expect(control.json).toBe(whole);
  });
});

describe("GET /timeline", () => {
  it("pages with `limit` and `cursor` (each page at most `limit`, `next` until the last), the same rows as unpaged; a bad limit or cursor is a 400 naming it", {
    timeout: 30_000,
  }, async () => {
    const { sessionId, client } = await simulatorSession({ calls: "" });
    for (const line of ["one", "two", "three"]) await playTurn(client, line);
    client.close();
    const whole = (await (await read(`/v1/sessions/${sessionId}/timeline`)).json()) as {
      sessionId: string;
      rows: unknown[];
      stats: unknown;
      next?: string;
    };
    expect(whole.next).toBeUndefined();
    expect(whole.rows.length).toBeGreaterThan(10);
    const rows: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = `limit=4${cursor === undefined ? "" : `&cursor=${cursor}`}`;
      const page = (await (await read(`/v1/sessions/${sessionId}/timeline?${query}`)).json()) as {
        sessionId: string;
        rows: unknown[];
        stats: unknown;
        next?: string;
      };
      expect(page.sessionId).toBe(sessionId);
      expect(page.rows.length).toBeLessThanOrEqual(4);
      expect(page.stats).toBeTruthy();
      rows.push(...page.rows);
      cursor = page.next;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(Math.ceil(whole.rows.length / 4));
    expect(rows).toEqual(whole.rows);
    // The unpaged answer, streamed, is the object's answer as a Worker on older code has it.
    const objectAnswer = await stubOf(sessionId).timeline();
    const { stats: _a, ...fromObject } = JSON.parse(JSON.stringify(objectAnswer));
    const { stats: _b, ...fromRoute } = whole;
    expect(fromRoute).toEqual(fromObject);

    for (const bad of ["limit=0", "limit=1001", "limit=x", "cursor=-1", "cursor=abc"]) {
      const res = await read(`/v1/sessions/${sessionId}/timeline?${bad}`);
      expect(res.status, bad).toBe(400);
      const history = await read(`/v1/sessions/${sessionId}/history?${bad}`);
      expect(history.status, bad).toBe(400);
    }
  });
});
