/**
 * One writer per session log, in the runtime (issue 50). A second instance of the object on the
 * same storage (local wrangler dev starts one on a reload while the old one still runs) writes
 * the log; the running one's next write is refused by the store's seq rule. It stands down: its
 * client is closed with 1012, the object is reset, and the client resumes on a new instance
 * with every durable frame once, the other's write included; the conversation goes on.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../src/session/history-store.js";
import { frameOf } from "../../src/vocabulary/frames.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import { BASE, connect, type Frame, httpUrl, withKey } from "../support/gateway.js";
import { playTurn, simulatorSession } from "../support/session-flow.js";

async function history(sessionId: string): Promise<HistoryEvent[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return ((await res.json()) as { events: HistoryEvent[] }).events;
}

describe("a session log another instance writes", () => {
  it("the running instance stands down (1012); its client resumes on the new one, every frame once", {
    timeout: 30_000,
  }, async () => {
    const { sessionId, wsUrl, client } = await simulatorSession({ calls: "*:" });
    const first = await playTurn(client, "hi");
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    // The other instance's write: the log's next event, as that instance would write it.
    await runInDurableObject(stub, (_instance: unknown, state: DurableObjectState) => {
      const store = new HistoryStore(state.storage);
      const event: HistoryEvent = {
        kind: "error",
        code: "written_elsewhere",
        message: "written by another instance",
        fatal: false,
        seq: store.lastSeq() + 1,
        at: Date.now(),
      };
      store.append([event], [JSON.stringify(frameOf(event))]);
    });
    // The running instance's next write (this line) is refused: it stands down.
    client.send({ type: "text", text: "are you there?" });
    const closed = await client.closed;
    expect(closed.code).toBe(1012);
    const seen: Frame[] = [...first];
    for (;;) {
      try {
        seen.push(await client.next(50));
      } catch {
        break;
      }
    }
    const last = Math.max(0, ...seen.flatMap((f) => (typeof f.seq === "number" ? [f.seq] : [])));
    // The client resumes from what it saw, on a new instance; it says its line again.
    const again = await connect(`${httpUrl(wsUrl)}&resumeFrom=${last}`);
    expect((await again.next(10_000)).type).toBe("ready");
    const answer = await playTurn(again, "are you there?");
    expect(answer.some((f) => f.type === "error" && f.code === "written_elsewhere")).toBe(true);
    expect(answer.filter((f) => f.type === "turn_complete")).toHaveLength(1);
    // Status frames are kept aside by the test client: counted with the rest.
    const all = [...seen, ...client.statuses, ...answer, ...again.statuses];
    const received = all
      .flatMap((f) => (typeof f.seq === "number" ? [f.seq] : []))
      .sort((a, b) => a - b);
    const logged = (await history(sessionId)).map((e) => e.seq);
    // Every durable frame once, in order, across both instances; nothing the log lacks.
    expect(received).toEqual(logged);
    expect([...seen, ...answer].some((f) => f.code === "log_write_failed")).toBe(false);
    again.close();
  });
});
