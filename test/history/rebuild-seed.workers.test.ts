import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { validateHistory } from "../../src/history/validate.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import { BASE, type Client, type Frame, withKey } from "../support/gateway.js";
import {
  inLiveSession,
  playTurn,
  simulatorSession,
  textsOf,
  turnEndsOf,
} from "../support/session-flow.js";

/**
 * The path the product exists to protect, against the strict simulator: a reconnect whose
 * resumption handle is refused (expired, another region, a server restart) rebuilds the
 * conversation from the log on a new connection. The simulator refuses tool parts in
 * clientContent as the service does, so the seed must be text.
 */
async function json<T>(path: string): Promise<T> {
  const res = await exports.default.fetch(`${BASE}${path}`, { headers: withKey() });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

async function waitForLive(client: Client, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (client.statuses.at(-1)?.state === "live" && client.statuses.length > 1) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no live after the reconnect: ${JSON.stringify(client.statuses)}`);
}

const tags = (frames: Frame[]) =>
  textsOf(frames)
    .join("")
    .match(/\[#r\d+\]/g) ?? [];

describe("reconnect with the resumption handle refused", () => {
  it("rebuilds from a text seed: accepted, the next turn answered once, the call and its outcome remembered", async () => {
    const { sessionId, client } = await simulatorSession({
      // Every handle is refused; the connection goes away after its third generation (the
      // greeting, the tool turn's speech with its call, the spoken result).
      handleTtlMs: 0,
      goAwayAfterTurns: 3,
      goAwayMs: 200,
      calls: "1:;2:lookup_faq;*:",
    });
    client.statuses.length = 0;
    await playTurn(client, "hi");
    const toolTurn = await playTurn(client, "please look up the faq", { settleMs: 300 });
    expect(toolTurn.some((f) => f.type === "tool_call" && f.name === "lookup_faq")).toBe(true);
    expect(toolTurn.some((f) => f.type === "tool_result" && f.name === "lookup_faq")).toBe(true);
    await waitForLive(client);

    const after = await playTurn(client, "what do you remember", { settleMs: 300 });
    expect(turnEndsOf(after)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(tags(after)).toHaveLength(1);
    const said = textsOf(after).join("");
    expect(said).toContain("[called lookup_faq");
    expect(said).toContain("[lookup_faq returned");

    const { rows } = await json<{
      rows: Array<{ kind: string; detail?: Record<string, unknown> }>;
    }>(`/v1/sessions/${sessionId}/timeline`);
    const closes = rows.filter((r) => r.kind === "UPSTREAM_CLOSED");
    expect(
      closes.some(
        (r) => r.detail?.code === 1007 && /resumption handle/.test(String(r.detail?.reason)),
      ),
    ).toBe(true);
    // Refused handle, then a seeded connection that was accepted: no other close.
    expect(closes.filter((r) => r.detail?.code === 1007)).toHaveLength(1);
    expect(rows.filter((r) => r.kind === "UPSTREAM_CONNECT").map((r) => r.detail?.mode)).toContain(
      "rebuild",
    );

    const { events } = await json<{ events: HistoryEvent[] }>(`/v1/sessions/${sessionId}/history`);
    expect(validateHistory(events)).toEqual([]);
    expect(events.filter((e) => e.kind === "error")).toEqual([]);
    client.close();
  });

  // Found by the attack of 2026-11-29 (44 of 92 sessions with a rebuild): the greeting's
  // chips (suggest_topics, a silent client tool) answered after the greeting ended stood after
  // the model's last words in the seed, and the next reply spoke them.
  async function afterLateChips(silentPlaced: boolean): Promise<string> {
    const { sessionId, client } = await simulatorSession({
      handleTtlMs: 0,
      goAwayAfterTurns: 1,
      goAwayMs: 2000,
      calls: "greeting:suggest_topics;*:",
    });
    if (!silentPlaced)
      await inLiveSession<{ isSilentTool: (name: string) => boolean }>(sessionId, (live) => {
        live.isSilentTool = () => false;
      });
    client.statuses.length = 0;
    const greeting = await playTurn(client, "hi", { answer: () => null });
    const chips = greeting.find((f) => f.type === "tool_call" && f.name === "suggest_topics");
    expect(chips).toBeDefined();
    // Late: the greeting's turn is over. The move (its goAway came with the turn's end)
    // waits for it, then rebuilds (every handle is refused).
    client.send({ type: "tool_result", callId: chips?.callId, result: { chips: ["pricing"] } });
    // A planned move writes no status: the timeline shows the second connection.
    let lives = 0;
    for (let i = 0; i < 200 && lives < 2; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const { rows } = await json<{ rows: Array<{ kind: string }> }>(
        `/v1/sessions/${sessionId}/timeline`,
      );
      lives = rows.filter((r) => r.kind === "UPSTREAM_LIVE").length;
    }
    expect(lives).toBe(2);
    const after = await playTurn(client, "what do you remember", { settleMs: 300 });
    expect(turnEndsOf(after)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    client.close();
    return textsOf(after).join("");
  }

  it("a silent tool's result that came after the model's words is not spoken after the rebuild", {
    timeout: 20_000,
  }, async () => {
    expect(await afterLateChips(true)).not.toContain("Here is what suggest_topics found");
  });

  it("control: with the result where it came in the log, the next reply speaks it", {
    timeout: 20_000,
  }, async () => {
    expect(await afterLateChips(false)).toContain("Here is what suggest_topics found");
  });

  it("after a crash, the rebuilt connection is accepted and the next question is answered", async () => {
    const { sessionId, token, client } = await simulatorSession({ calls: "1:;2:lookup_faq;*:" });
    await playTurn(client, "hi");
    await playTurn(client, "please look up the faq", { settleMs: 200 });
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
      headers: withKey(),
    });
    expect(res.status).toBe(200);
    await client.closed.catch(() => undefined);
    const { connect, httpUrl } = await import("../support/gateway.js");
    const again = await connect(
      httpUrl(`ws://liveline.test/v1/sessions/${sessionId}/ws?token=${token}`),
    );
    expect((await again.next()).type).toBe("ready");
    const after = await playTurn(again, "what do you remember", { settleMs: 300 });
    expect(turnEndsOf(after)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(textsOf(after).join("")).toContain("[called lookup_faq");
    again.close();
  });

  it("Gemini 3.1 (text as realtimeInput, clientContent only as the seed): turns and a refused-handle rebuild", async () => {
    const { sessionId, client } = await simulatorSession({
      syncOnly: 1,
      handleTtlMs: 0,
      goAwayAfterTurns: 2,
      goAwayMs: 200,
      calls: "1:;2:lookup_faq;*:",
    });
    client.statuses.length = 0;
    const first = await playTurn(client, "hi");
    expect(turnEndsOf(first)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    const toolTurn = await playTurn(client, "please look up the faq", { settleMs: 200 });
    expect(turnEndsOf(toolTurn)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    await waitForLive(client);
    const after = await playTurn(client, "what do you remember", { settleMs: 300 });
    expect(turnEndsOf(after)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
    expect(tags(after)).toHaveLength(1);
    expect(textsOf(after).join("")).toContain("[called lookup_faq");
    const session = await json<{ model: string }>(`/v1/sessions/${sessionId}`);
    expect(session.model).toBe("gemini-3.1-flash-live-preview");
    const { events } = await json<{ events: HistoryEvent[] }>(`/v1/sessions/${sessionId}/history`);
    // Nothing refused: no error, and the only 1007 was the refused handle.
    expect(events.filter((e) => e.kind === "error")).toEqual([]);
    client.close();
  });
});
