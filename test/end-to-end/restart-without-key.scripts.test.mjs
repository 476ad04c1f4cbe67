import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  API_KEY,
  createSession,
  history,
  sleep,
  startServer,
  upgradeAnswer,
} from "../../scripts/lib/harness.mjs";

/**
 * A gateway started on state whose sessions were created with a provider it no longer has
 * (issue 50: ~680 `Uncaught Error: the gemini provider needs the GEMINI_API_KEY secret` at
 * start, each object retried instead of settling). Such a session says why once, answers
 * `model_unavailable`, keeps its record readable, and nothing wakes it in a loop.
 */
describe("a gateway started on sessions whose provider key is gone", () => {
  const state = mkdtempSync(join(tmpdir(), "liveline-nokey-"));
  let server;

  afterAll(async () => {
    await server?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it("logs each session's error once, answers model_unavailable, stays quiet, its record readable", async () => {
    const before = await startServer({
      state,
      vars: { GEMINI_API_KEY: "test-gemini-key", PROVIDER: "gemini" },
    });
    // Two open Gemini sessions, and one whose duration cap is up by the restart: its alarm
    // (what retried a crashing object, with backoff) fires on the gateway without the key.
    const open = [await createSession(before, {}), await createSession(before, {})];
    const capped = await createSession(before, { limits: { maxDurationSeconds: 2 } });
    await before.stop();
    // The same Worker on the same state, as a deploy restarts it: its bundle and migrated
    // database are the stopped gateway's (nothing bundled or migrated again), without the key.
    server = await startServer({ restartOf: before });
    const auth = { Authorization: `Bearer ${API_KEY}` };
    const at = (id, path = "") => `${server.base}/v1/sessions/${id}${path}`;
    for (const { sessionId, wsUrl } of open) {
      // Asked again and again, as a reconnecting client asks.
      for (let i = 0; i < 3; i++) {
        const upgrade = await upgradeAnswer(wsUrl.replace(/^ws:\/\/[^/]+/, server.base));
        expect(upgrade.status).toBe(503);
        expect(JSON.parse(upgrade.body).error).toMatchObject({
          code: "model_unavailable",
          message: expect.stringMatching(/GEMINI_API_KEY/),
        });
      }
      expect((await fetch(at(sessionId, "/history"), { headers: auth })).status).toBe(200);
      expect((await fetch(at(sessionId), { headers: auth })).status).toBe(200);
    }
    // The capped one ended at its cap, once: no one to hear a goodbye, no model asked.
    await sleep(2_500);
    const events = await history(server, capped.sessionId);
    expect(events.map((e) => e.kind)).toEqual(["session_limit", "status"]);
    // Quiet: time for any retry (2 s, then 4 s) to show.
    await sleep(6_500);
    const log = readFileSync(server.log, "utf8");
    for (const { sessionId } of open) {
      const said = log.split("\n").filter((l) => l.includes(`session ${sessionId} cannot reach`));
      expect(said, log).toHaveLength(1);
    }
    expect(log.split("\n").filter((l) => l.includes(`session ${capped.sessionId}`)).length).toBe(1);
    expect(log).not.toMatch(/Uncaught|inputGateBroken/);
    // The key itself is never in the log.
    expect(log).not.toContain("test-gemini-key");
    // Deleting still works.
    expect((await fetch(at(open[0].sessionId), { method: "DELETE", headers: auth })).status).toBe(
      200,
    );
  });
});
