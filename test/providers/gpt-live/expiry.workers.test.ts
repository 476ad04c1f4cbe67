/**
 * A GPT-Live service session that expires (two hours on the service; `expireAfterMs` on the
 * face) while nobody speaks is not replaced until someone does (a new one bills by the
 * minute), and the next line is answered once, in a new service session seeded with the
 * earlier conversation — over the real socket, the link and the object. The control (the
 * expiry not told: a reconnect at once and after each expiry) is in
 * test/providers/gpt-live/one-chain.test.ts, on the wired face.
 */
import { describe, expect, it } from "vitest";
import { playTurn, simulatorSession, turnEndsOf } from "../../support/session-flow.js";

describe("a GPT-Live session whose service session expires", () => {
  it("idles while nobody speaks; the next line opens a new one, seeded, and is answered once", async () => {
    const { client } = await simulatorSession(
      { wire: "gpt-live", modality: "AUDIO", calls: "greeting:;*:", expireAfterMs: 1_000 },
      {},
    );
    const first = await playTurn(client, "hello there", { settleMs: 100 });
    expect(turnEndsOf(first)).toHaveLength(1);
    const answer = first
      .filter((f) => f.type === "transcript")
      .map((f) => f.text as string)
      .join("");
    // Past the expiry, nobody speaking: the connection is idle, and no new one opens.
    await new Promise((r) => setTimeout(r, 1_800));
    const states = client.statuses.map((f) => f.state);
    expect(states.at(-1)).toBe("idle");
    const opens = states.filter((s) => s === "connecting").length;
    await new Promise((r) => setTimeout(r, 800));
    expect(client.statuses.map((f) => f.state).filter((s) => s === "connecting")).toHaveLength(
      opens,
    );
    // The next line: a new service session, seeded with what was said ("I said: …").
    const next = await playTurn(client, "what did you say?", { settleMs: 200 });
    expect(turnEndsOf(next).map((f) => f.type)).toEqual(["turn_complete"]);
    const said = next
      .filter((f) => f.type === "transcript")
      .map((f) => f.text as string)
      .join("");
    expect(said).toContain(`I said: ${answer.trim().slice(0, 30)}`);
    expect(next.filter((f) => f.type === "error")).toEqual([]);
    client.close();
  }, 30_000);
});
