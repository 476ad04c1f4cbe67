/**
 * How a session's object holds its sockets (src/session/session-sockets.ts): an app's socket
 * `streaming` (the Worker's default) or `hibernatable` (an agent's `sockets`), a call's media
 * stream always streaming. Either way a session plays the same: turns, the keepalive answered
 * byte for byte before the session sees it, a resume, the stale-socket rule. What tells them
 * apart is the runtime's own list of hibernatable sockets.
 */

import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  BASE,
  type Client,
  connect,
  createSession,
  type Frame,
  httpUrl,
  placeSimulatedCall,
  withKey,
} from "../support/gateway.js";
import { playTurn, turnEndsOf } from "../support/session-flow.js";

const KEEPALIVE = '{"type":"keepalive"}';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sockets the runtime holds for the session's object as hibernatable. */
async function hibernatableSockets(sessionId: string): Promise<number> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  return runInDurableObject(stub, (_o, state) => state.getWebSockets().length);
}

async function clientsOf(sessionId: string): Promise<number> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
    headers: withKey(),
  });
  return ((await res.json()) as { clients: number }).clients;
}

async function session(agent: string) {
  const created = await createSession({
    agent,
    provider: "simulator",
    metadata: { simulator: { timeScale: 0 } },
  });
  const join = async (resumeFrom?: number): Promise<{ client: Client; ready: Frame }> => {
    const query = resumeFrom === undefined ? "" : `&resumeFrom=${resumeFrom}`;
    const client = await connect(`${httpUrl(created.wsUrl)}${query}`);
    const ready = await client.next();
    expect(ready.type).toBe("ready");
    return { client, ready };
  };
  return { ...created, join };
}

describe.each([
  { agent: "greeter", holding: "streaming", listed: 0 },
  { agent: "chat", holding: "hibernatable", listed: 1 },
])("an app's socket held $holding ($agent)", ({ agent, holding, listed }) => {
  it("plays a turn, answers a keepalive before the session sees it, and resumes", async () => {
    const s = await session(agent);
    const { client } = await s.join();
    expect(await hibernatableSockets(s.sessionId)).toBe(listed);
    expect(await clientsOf(s.sessionId)).toBe(1);
    const turn = await playTurn(client, "hi", { answer: () => ({ shown: true }) });
    expect(turnEndsOf(turn)).toEqual([expect.objectContaining({ type: "turn_complete" })]);

    client.send(KEEPALIVE);
    const rawBefore = client.raw.length;
    // The session never saw it: no error, and the next frame after it is the pong.
    const frames = await client.pingThrough();
    expect(frames.map((f) => f.type)).toEqual(["keepalive", "pong"]);
    expect(client.raw[rawBefore]).toBe(KEEPALIVE);

    const lastSeq = Math.max(...turn.flatMap((f) => (typeof f.seq === "number" ? [f.seq] : [])));
    client.close();
    await client.closed;
    const again = await s.join(0);
    const replayed: Frame[] = [];
    for (;;) {
      const f = await again.client.next();
      replayed.push(f);
      if (f.seq === lastSeq) break;
    }
    expect(turnEndsOf(replayed)).toHaveLength(1);
    expect(`${holding}: ${await hibernatableSockets(s.sessionId)}`).toBe(`${holding}: ${listed}`);
    again.client.close();
  });

  it("in a full session closes the silent sockets and keeps the one sending keepalives", {
    timeout: 15_000,
  }, async () => {
    const s = await session(agent);
    const silent = [(await s.join()).client, (await s.join()).client];
    const pinging = (await s.join()).client; // the test deployment takes 3
    const pinger = setInterval(() => pinging.send(KEEPALIVE), 300);
    try {
      await sleep(2000); // past STALE_SOCKET_MS (1.5 s in the test deployment)
      const fourth = await s.join();
      for (const c of silent) expect((await c.closed).code).toBe(1001);
      expect(pinging.ws.readyState).toBe(WebSocket.OPEN);
      // Each silent socket left once: closed here, then its close event (found by the attack).
      await sleep(200);
      const res = await exports.default.fetch(`${BASE}/v1/sessions/${s.sessionId}/timeline`, {
        headers: withKey(),
      });
      const { rows } = (await res.json()) as {
        rows: { kind: string; detail?: { clientId?: string } }[];
      };
      const left = rows
        .filter((r) => r.kind === "CLIENT_DISCONNECT")
        .map((r) => r.detail?.clientId);
      expect(left).toHaveLength(2);
      expect(new Set(left).size).toBe(2);
      fourth.client.close();
    } finally {
      clearInterval(pinger);
      pinging.close();
    }
  });
});

describe("a call's media stream", () => {
  it("is held streaming: the call streams both ways for as long as it lasts", {
    timeout: 15_000,
  }, async () => {
    const { call, sessionId } = await placeSimulatedCall({ timeScale: "0", calls: "greeting:;*:" });
    await call.waitFor((c) => c.heardMs() >= 200, 10_000);
    expect(await clientsOf(sessionId)).toBe(1);
    expect(await hibernatableSockets(sessionId)).toBe(0);
    call.hangUp();
  });
});
