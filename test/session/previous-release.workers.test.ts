/**
 * Version skew across a deploy. A deferred deploy keeps each live session's object on the
 * previous release's code until it is reset (at most `max_delay`), and the Worker of the new
 * release talks to it meanwhile; then the object starts again on the new code, with the
 * record the old code wrote. The fixture is such a record: the previous release (main, as
 * test/fixtures/previous-release/session-object.json says) ran under wrangler dev and was
 * killed with a turn's answer not begun and a client's call unanswered; its object's SQLite
 * tables were read as they were. This release restores it, carries the turn, and leaves
 * every table of the previous release's components at the version that release knows — a
 * rollback's old code still opens it (its migrations refuse a component at a newer version).
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { validateHistory } from "../../src/history/validate.js";
import { migrate } from "../../src/session/migrations.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import fixture from "../fixtures/previous-release/session-object.json";
import { BASE, connect, type Frame, withKey } from "../support/gateway.js";

type Row = Record<string, string | number | null>;

/** The fixture's tables into a fresh object's storage, as the previous release left them. */
async function plantRecord(sessionId: string): Promise<void> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (_object, state) => {
    const sql = state.storage.sql;
    for (const statement of fixture.schema) sql.exec(statement);
    for (const [table, rows] of Object.entries(fixture.tables as Record<string, Row[]>))
      for (const row of rows) {
        // Only the simulator's pace differs from the record: its replies come at once.
        const values = Object.values(
          table === "meta" ? { ...row, metadata: fasterSimulator(String(row.metadata)) } : row,
        );
        const columns = Object.keys(row).map((c) => `"${c}"`);
        sql.exec(
          `INSERT INTO "${table}" (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
          ...values,
        );
      }
  });
  // The reset: the object starts again, on this release's code.
  await runInDurableObject(stub, (_object, state) => state.abort("the deploy's reset")).catch(
    () => undefined,
  );
}

function fasterSimulator(metadata: string): string {
  const parsed = JSON.parse(metadata) as { simulator: Record<string, unknown> };
  return JSON.stringify({ ...parsed, simulator: { ...parsed.simulator, timeScale: 0 } });
}

async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: HistoryEvent[] }).events;
}

async function schemaVersions(sessionId: string): Promise<Record<string, number>> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  return runInDurableObject(stub, (_object, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ component: string; version: number }>(
          "SELECT component, version FROM schema_version",
        )
        .toArray()
        .map((r) => [r.component, r.version]),
    ),
  );
}

describe("a session the previous release left mid-turn, restored by this one", () => {
  it("reads the record, carries the turn in flight and the client's open call, and answers the turn once", {
    timeout: 20_000,
  }, async () => {
    const sessionId = fixture.sessionId;
    const before = fixture.tables.events.length;
    await plantRecord(sessionId);
    const events = await historyOf(sessionId);
    // Nothing was closed: the turn and the client's call go on.
    expect(events).toHaveLength(before);
    expect(validateHistory(events)).toEqual([]);
    const call = events.find((e) => e.kind === "tool_call");
    expect(call).toMatchObject({ runOn: "client", name: "suggest_topics" });

    // The app's client comes back (its token from this release's Worker), answers its call.
    const token = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(),
    });
    const { wsUrl } = (await token.json()) as { wsUrl: string };
    const client = await connect(`${wsUrl.replace(/^ws/, "http")}&resumeFrom=${before}`);
    expect(await client.next()).toMatchObject({ type: "ready", lastSeq: before });
    client.send({
      type: "tool_result",
      callId: call!.kind === "tool_call" ? call!.callId : "",
      result: { shown: true },
    });
    const frames: Frame[] = [];
    for (;;) {
      const frame = await client.next(10_000);
      frames.push(frame);
      if (frame.type === "turn_complete" || frame.type === "interrupted") break;
    }
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t2" });
    expect(frames.filter((f) => f.type === "text").length).toBeGreaterThan(0);
    client.close();
    const after = await historyOf(sessionId);
    expect(validateHistory(after)).toEqual([]);
    expect(after.filter((e) => e.kind === "interrupted")).toEqual([]);

    // Every component the previous release knew is where it left it; this release's own
    // tables are components of their own.
    const versions = await schemaVersions(sessionId);
    const old = Object.fromEntries(
      (fixture.tables.schema_version as { component: string; version: number }[]).map((r) => [
        r.component,
        r.version,
      ]),
    );
    for (const [component, version] of Object.entries(old))
      expect(versions[component], component).toBe(version);
    expect(
      Object.keys(versions)
        .filter((c) => !(c in old))
        .sort(),
    ).toEqual(["restart_carry", "session_recording"]);

    // Control: what a rollback's code would do, had this release moved one of those
    // components on — a release knowing one version fewer refuses the storage.
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    const refused = await runInDurableObject(stub, (_object, state) => {
      const fewer = Array.from({ length: (versions.history ?? 1) - 1 }, (_, i) => ({
        version: i + 1,
        description: "",
        up: () => {},
      }));
      try {
        migrate(state.storage, "history", fewer);
        return null;
      } catch (err) {
        return String(err);
      }
    });
    expect(refused).toMatch(/storage is at version \d+, code knows \d+/);
  });
});
