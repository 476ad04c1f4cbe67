import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SessionResource } from "../../src/contracts/session-api.js";
import { priceFor } from "../../src/metering/prices.js";
import { BASE, withKey } from "../support/gateway.js";
import { playTurn, simulatorSession } from "../support/session-flow.js";

type SessionReport = SessionResource;

/** Token usage: per turn in the timeline, summed on the session resource. */
async function get<T>(path: string, headers: Record<string, string> = withKey()): Promise<T> {
  const res = await exports.default.fetch(`${BASE}${path}`, { headers });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

type Row = { kind: string; detail?: Record<string, number | string | null> };

describe("GET /v1/sessions/:id", () => {
  it("says the session's state, and its usage is the sum of every turn's USAGE row", async () => {
    const { sessionId, token, client } = await simulatorSession({
      calls: "1:;2:lookup_faq;*:",
    });
    await playTurn(client, "hi");
    await playTurn(client, "please look up the faq", { settleMs: 200 });
    await playTurn(client, "thanks");

    const { rows } = await get<{ rows: Row[] }>(`/v1/sessions/${sessionId}/timeline`);
    const usageRows = rows.filter((r) => r.kind === "USAGE").map((r) => r.detail!);
    // One per model response: greeting, the tool turn's speech and its spoken result, thanks.
    expect(usageRows.length).toBe(4);
    const sum = (k: string) => usageRows.reduce((n, d) => n + Number(d[k]), 0);

    const session = await get<Record<string, unknown>>(`/v1/sessions/${sessionId}`);
    expect(session).toMatchObject({
      sessionId,
      provider: "simulator",
      model: "gemini-2.5-flash-live-preview",
      connection: "live",
      clients: 1,
    });
    expect(session.lastSeq).toBeGreaterThan(5);
    const usage = session.usage as Record<string, unknown>;
    expect(usage).toMatchObject({
      responses: 4,
      turns: 3,
      promptTokens: sum("promptTokens"),
      responseTokens: sum("responseTokens"),
      totalTokens: sum("totalTokens"),
    });
    expect(usage.promptTokens).toBeGreaterThan(0);
    expect(usage.responseTokens).toBeGreaterThan(0);
    // The simulator reports per modality; TEXT replies here.
    expect((usage.responseByModality as Record<string, number>).TEXT).toBe(usage.responseTokens);
    // Per turn: the tool turn's two responses are one turn's sums.
    const byTurn = new Map<string, number>();
    for (const d of usageRows)
      byTurn.set(String(d.turnId), (byTurn.get(String(d.turnId)) ?? 0) + 1);
    expect([...byTurn.values()].sort()).toEqual([1, 1, 2]);

    // A client of the session may read it with its token; anyone else may not.
    await get(`/v1/sessions/${sessionId}?token=${token}`, {});
    const anonymous = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`);
    expect(anonymous.status).toBe(401);
    client.close();
  });

  it("GPT-Live, billed by the active second: the seconds the service metered, per turn and summed, and its backend's tokens", async () => {
    const { sessionId, client } = await simulatorSession({
      wire: "gpt-live",
      modality: "AUDIO",
      calls: "greeting:;*:",
    });
    await playTurn(client, "hi");
    await playTurn(client, "what are your opening hours?");
    const { rows } = await get<{ rows: Row[] }>(`/v1/sessions/${sessionId}/timeline`);
    const seconds = rows
      .filter((r) => r.kind === "USAGE" && r.detail?.seconds !== undefined)
      .map((r) => Number(r.detail!.seconds));
    expect(seconds.length).toBeGreaterThanOrEqual(2);
    const session = await get<{ usage: Record<string, number> }>(`/v1/sessions/${sessionId}`);
    // Each USAGE row is what the running total grew by (the adapter's unit test holds that
    // rule); the session's seconds are their sum, kept in its storage.
    expect(session.usage.seconds).toBeCloseTo(
      seconds.reduce((a, b) => a + b, 0),
      6,
    );
    expect(session.usage.seconds).toBeGreaterThan(0);
    // The backend's tokens, from the end of each of its responses.
    expect(session.usage.responses).toBeGreaterThan(0);
    expect(session.usage.totalTokens).toBeGreaterThan(0);
    client.close();
  });

  it("prices each turn's recorded usage by the price table, and the session is their sum", async () => {
    const { sessionId, client } = await simulatorSession({ calls: "1:;2:lookup_faq;*:" });
    await playTurn(client, "hi");
    await playTurn(client, "please look up the faq", { settleMs: 200 });
    const session = await get<SessionReport>(`/v1/sessions/${sessionId}`);
    // The simulator serves gemini-2.5-flash-live-preview: TEXT in at $0.50, TEXT out at $2 per 1M.
    const price = priceFor(session.model);
    expect(price?.input?.TEXT).toBe(0.5);
    const turns = session.turns.filter((t) => t.usage !== null);
    expect(turns.length).toBe(2);
    let total = 0;
    for (const turn of turns) {
      const u = turn.usage!;
      // Every token the simulator reports is TEXT: the cost by hand from the row.
      const expected = (u.promptTokens * 0.5 + u.responseTokens * 2) / 1e6;
      expect(turn.cost.status).toBe("priced");
      expect(turn.cost.status === "priced" && turn.cost.usd).toBeCloseTo(expected, 8);
      total += expected;
    }
    expect(session.cost.status).toBe("priced");
    expect(session.cost.status === "priced" && session.cost.usd).toBeCloseTo(total, 8);
    expect(session.cost.status === "priced" && session.cost.usd).toBeGreaterThan(0);
    // Latency: each typed line's first byte and end, the tool's run; p50/p95 over them.
    for (const turn of turns) {
      expect(turn.firstByteMs).toBeGreaterThanOrEqual(0);
      expect(turn.turnMs).toBeGreaterThanOrEqual(turn.firstByteMs!);
    }
    expect(turns[1]!.tools.map((t) => [t.name, t.outcome])).toEqual([["lookup_faq", "result"]]);
    expect(session.latency.turnMs.count).toBe(2);
    expect(session.latency.toolMs.count).toBe(1);
    client.close();
  });

  it("a model with no known price says unpriced, never 0", async () => {
    // syncOnly: the simulator serves the 3.1 family, which the shipped table does not price.
    const { sessionId, client } = await simulatorSession({ syncOnly: 1 });
    await playTurn(client, "hi");
    const session = await get<SessionReport>(`/v1/sessions/${sessionId}`);
    expect(session.model).toMatch(/^gemini-3\.1/);
    expect(session.usage.responses).toBeGreaterThan(0);
    expect(session.cost).toEqual({ status: "unpriced", unpriced: ["model"] });
    for (const turn of session.turns) expect(turn.cost.status).toBe("unpriced");
    client.close();
  });

  it("404 for an unknown session; 405 with Allow for other methods", async () => {
    const unknown = await exports.default.fetch(`${BASE}/v1/sessions/${crypto.randomUUID()}`, {
      headers: withKey(),
    });
    expect(unknown.status).toBe(404);
    const { sessionId, client } = await simulatorSession({});
    const put = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      method: "PUT",
      headers: withKey(),
    });
    expect(put.status).toBe(405);
    expect(put.headers.get("Allow")).toBe("GET, DELETE");
    client.close();
  });
});
