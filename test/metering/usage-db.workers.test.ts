/**
 * Usage across sessions in the usage database (D1, local in miniflare, its table from
 * migrations/): each session writes its closing record when it ends or idles, the object never
 * waits on the write, a failed write is retried from the session's own record (also after its
 * object restarted), and GET /v1/usage sums the rows.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ClosingRecord } from "../../src/metering/closing-record.js";
import { BASE, errorOf, withKey } from "../support/gateway.js";
import { playTurn, simulatorSession } from "../support/session-flow.js";

const db = env.USAGE_DB!;
const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(sessionId));

interface Described {
  connection: string;
  cost: { status: string; usd?: number };
  closing: { record: ClosingRecord; copy: string } | null;
}

async function describe_(sessionId: string): Promise<Described> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Described;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function usage(query: string): Promise<Response> {
  return exports.default.fetch(`${BASE}/v1/usage${query}`, { headers: withKey() });
}

async function del(sessionId: string): Promise<void> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
    method: "DELETE",
    headers: withKey(),
  });
  expect(res.status).toBe(200);
}

async function rowOf(sessionId: string) {
  return db.prepare("SELECT * FROM session_usage WHERE session_id = ?").bind(sessionId).first();
}

/** A session of the greeter on the simulator with two answered turns (one calls tools). */
async function usedSession(agentMetadata: Record<string, unknown> = {}) {
  const session = await simulatorSession({ calls: "1:suggest_topics;*:" }, agentMetadata);
  await playTurn(session.client, "hi");
  await playTurn(session.client, "and how are you?");
  return session;
}

/** A window around now that holds every session of this test. */
const WINDOW = () =>
  `?from=${new Date(Date.now() - 60_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;

describe("the usage database", { timeout: 20_000 }, () => {
  it("an ended session's closing record is its row: agent, model, durations, tokens, cost, turns, calls, how it ended", async () => {
    const { sessionId } = await usedSession();
    await del(sessionId);
    const { closing, cost } = await until(
      "the record's copy",
      () => describe_(sessionId),
      (d) => d.closing?.copy === "written",
    );
    const record = closing!.record;
    expect(record).toMatchObject({
      sessionId,
      agent: "greeter",
      provider: "simulator",
      state: "ended",
      endedBy: "deleted",
      turns: 2,
      toolCalls: 1,
    });
    expect(record.usage.totalTokens).toBeGreaterThan(0);
    expect(record.durationMs).toBeGreaterThan(0);
    expect(record.modelLiveMs).toBeGreaterThan(0);
    expect(record.modelLiveMs).toBeLessThanOrEqual(record.durationMs);
    // The closing record's cost is the session's (the simulator's model is priced).
    expect(record.cost).toEqual(cost);
    const row = await rowOf(sessionId);
    expect(row).toMatchObject({
      agent: "greeter",
      model: record.model,
      state: "ended",
      ended_by: "deleted",
      total_tokens: record.usage.totalTokens,
      prompt_tokens: record.usage.promptTokens,
      cost_status: "priced",
      turns: 2,
      tool_calls: 1,
      duration_ms: record.durationMs,
      version: record.version,
    });
    expect(row!.cost_usd).toBeCloseTo((cost as { usd: number }).usd, 10);
  });

  it("an idle session writes its row (idle), replaced by its end's", async () => {
    const { sessionId } = await usedSession();
    await runInDurableObject(stubOf(sessionId), (instance: unknown) => {
      const live = (instance as { running: { live: { interpreter: IdleDriver } } }).running.live;
      // Nothing used for the idle time (as after IDLE_TIMEOUT_MS).
      live.interpreter.state.lastActivityAt = 0;
      live.interpreter.handleInput({ type: "timer_fired", timer: "idle" });
    });
    const idle = await until(
      "the idle row",
      () => rowOf(sessionId),
      (r) => r !== null,
    );
    expect(idle).toMatchObject({ state: "idle", ended_by: null, turns: 2 });
    await del(sessionId);
    const ended = await until(
      "the ended row",
      () => rowOf(sessionId),
      (r) => r?.state === "ended",
    );
    expect(ended!.version).toBeGreaterThan(idle!.version as number);
  });

  it("a write that failed is retried from the session's record, after its object restarted", async () => {
    const { sessionId } = await usedSession();
    // The database refuses this session's row (as a database that is down would).
    await db.exec(
      `CREATE TRIGGER refuse_${sessionId.replaceAll("-", "_")} BEFORE INSERT ON session_usage WHEN NEW.session_id = '${sessionId}' BEGIN SELECT RAISE(ABORT, 'usage database down'); END`,
    );
    await del(sessionId);
    const pending = await until(
      "the failed copy",
      () => describe_(sessionId),
      (d) => d.closing !== null,
    );
    expect(pending.closing!.copy).toBe("pending");
    expect(await rowOf(sessionId)).toBeNull();
    // The object dies before it wrote the row; the database is back.
    await expect(
      runInDurableObject(stubOf(sessionId), (_o, state) => state.abort("simulated crash")),
    ).rejects.toThrow();
    await db.exec(`DROP TRIGGER refuse_${sessionId.replaceAll("-", "_")}`);
    // The alarm set with the record fires (here, at once) in a new instance of the object.
    expect(await runDurableObjectAlarm(stubOf(sessionId))).toBe(true);
    const row = await until(
      "the retried row",
      () => rowOf(sessionId),
      (r) => r !== null,
    );
    expect(row).toMatchObject({ state: "ended", ended_by: "deleted", turns: 2 });
    expect((await describe_(sessionId)).closing!.copy).toBe("written");
  });

  it("a record the object did not live to copy is copied at its next start", async () => {
    const { sessionId } = await usedSession();
    const trigger = `refuse_${sessionId.replaceAll("-", "_")}`;
    await db.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON session_usage WHEN NEW.session_id = '${sessionId}' BEGIN SELECT RAISE(ABORT, 'usage database down'); END`,
    );
    await del(sessionId);
    await until(
      "the failed copy",
      () => describe_(sessionId),
      (d) => d.closing?.copy === "pending",
    );
    await expect(
      runInDurableObject(stubOf(sessionId), (_o, state) => state.abort("simulated crash")),
    ).rejects.toThrow();
    await db.exec(`DROP TRIGGER ${trigger}`);
    // No alarm runs here: any request that starts the object again copies the record.
    await describe_(sessionId);
    const row = await until(
      "the row written at the next start",
      () => rowOf(sessionId),
      (r) => r !== null,
    );
    expect(row).toMatchObject({ state: "ended", ended_by: "deleted", turns: 2 });
  });

  it("GET /v1/usage sums the sessions of a window, by agent, with how each ended", async () => {
    const agent = `usage-${crypto.randomUUID().slice(0, 8)}`;
    const before = (await (await usage(WINDOW())).json()) as { sessions: number };
    const a = await usedSession();
    const b = await usedSession();
    await del(a.sessionId);
    await del(b.sessionId);
    for (const { sessionId } of [a, b])
      await until(
        "written",
        () => describe_(sessionId),
        (d) => d.closing?.copy === "written",
      );
    const records = await Promise.all(
      [a, b].map(async ({ sessionId }) => (await describe_(sessionId)).closing!.record),
    );
    const res = await usage(WINDOW());
    expect(res.status).toBe(200);
    const sums = (await res.json()) as {
      sessions: number;
      ended: number;
      turns: number;
      toolCalls: number;
      tokens: { total: number };
      cost: { usd: number; pricedSessions: number; unpricedSessions: number };
      endedBy: Record<string, number>;
    };
    expect(sums.sessions).toBeGreaterThanOrEqual(before.sessions + 2);
    expect(sums.endedBy.deleted).toBeGreaterThanOrEqual(2);
    // Another agent's window: none of these sessions (the greeter's).
    const other = await (await usage(`${WINDOW()}&agent=${agent}`)).json();
    expect(other).toMatchObject({ sessions: 0, agent, cost: { usd: 0 } });
    // The greeter's sums are its rows of the window, exactly. The workers tests share one
    // runtime, so other files' sessions may write rows meanwhile: the rows are read on both
    // sides of the sums, until nothing was written between.
    const from = new Date(Date.now() - 60_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const rowsOfWindow = async () =>
      (
        await db
          .prepare(
            "SELECT * FROM session_usage WHERE agent = 'greeter' AND created_at >= ?1 AND created_at < ?2 ORDER BY session_id",
          )
          .bind(from, to)
          .all<{ total_tokens: number; turns: number; cost_usd: number }>()
      ).results;
    const { greeter, rows } = await until(
      "the window's rows unchanged while it was summed",
      async () => {
        const first = await rowsOfWindow();
        const summed = (await (
          await usage(`?from=${from}&to=${to}&agent=greeter`)
        ).json()) as typeof sums;
        const after = await rowsOfWindow();
        return {
          greeter: summed,
          rows: first,
          still: JSON.stringify(first) === JSON.stringify(after),
        };
      },
      (v) => v.still,
    );
    expect(greeter.tokens.total).toBe(rows.reduce((n, r) => n + r.total_tokens, 0));
    expect(greeter.turns).toBe(rows.reduce((n, r) => n + r.turns, 0));
    expect(greeter.cost.usd).toBeCloseTo(
      rows.reduce((n, r) => n + r.cost_usd, 0),
      8,
    );
    for (const record of records)
      expect(rows.some((r) => r.total_tokens === record.usage.totalTokens)).toBe(true);
  });

  it("a window of unpriced sessions says unpriced, never $0 (found by the attack)", async () => {
    // The simulator as Gemini 3.1: a model the shipped table does not price.
    const { sessionId, client } = await simulatorSession({ syncOnly: true, calls: "" });
    await playTurn(client, "hi");
    await del(sessionId);
    const { closing } = await until(
      "written",
      () => describe_(sessionId),
      (d) => d.closing?.copy === "written",
    );
    expect(closing!.record.cost).toEqual({ status: "unpriced", unpriced: ["model"] });
    const created = Date.parse(closing!.record.createdAt);
    const window = `?from=${new Date(created).toISOString()}&to=${new Date(created + 1).toISOString()}`;
    const sums = (await (await usage(window)).json()) as { cost: Record<string, unknown> };
    expect(sums.cost).toMatchObject({ status: "unpriced", unpricedSessions: 1 });
    expect(sums.cost.usd).toBeUndefined();
  });

  it("refuses a bad window or an unknown parameter with a 400 naming it; needs the API key", async () => {
    for (const [query, named] of [
      ["?from=yesterday", "from"],
      ["?from=2026-11-02&to=2026-11-01", "from"],
      ["?to=2026-13-45", "to"],
      ["?from=2026-02-30", "from"],
      ["?agnet=greeter", "agnet"],
    ] as const) {
      const res = await usage(query);
      expect(res.status, query).toBe(400);
      expect((await errorOf(res)).message).toContain(named);
    }
    const res = await exports.default.fetch(`${BASE}/v1/usage`);
    expect(res.status).toBe(401);
  });
});

interface IdleDriver {
  state: { lastActivityAt: number };
  handleInput(input: { type: "timer_fired"; timer: "idle" }): void;
}
