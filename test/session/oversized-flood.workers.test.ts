/**
 * A client that keeps sending messages over MAX_FRAME_BYTES (issue 53). The runtime takes an
 * incoming WebSocket message of up to 32 MiB whole before liveline sees its size, in an isolate
 * of 128 MB that other sessions' objects may share: each such message still gets its
 * `frame_too_large` and changes nothing, but a socket that keeps at it is closed (1009), and
 * its session — its other clients, its model — goes on. Local workerd has no 128 MB isolate:
 * what this shows is the bound (the flooding socket closed, the neighbours answering
 * throughout), not an out-of-memory.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  CLOSE_MESSAGE_TOO_BIG,
  OVERSIZED_CLOSE_REASON,
  OVERSIZED_FRAMES_ALLOWED,
} from "../../src/session/oversized-frames.js";
import { type Client, connect, httpUrl } from "../support/gateway.js";
import { framesUntilTurnEnds, simulatorSession } from "../support/session-flow.js";

const MiB = 1024 * 1024;
/** 8 MiB of text (a JSON text frame) and 30 MiB of binary (just under the runtime's 32 MiB). */
const BIG_TEXT = JSON.stringify({ type: "text", text: "x".repeat(8 * MiB) });
const BIG_BINARY = new Uint8Array(30 * MiB).buffer;

/** Sends big messages on a socket until it is closed, or `max` of them went; what each got. */
async function flood(client: Client, max: number): Promise<{ errors: string[]; closed: boolean }> {
  const errors: string[] = [];
  let closed = false;
  const gone = client.closed.then(() => {
    closed = true;
    return null;
  });
  for (let i = 0; i < max && !closed; i++) {
    try {
      client.send(i % 2 === 0 ? BIG_TEXT : BIG_BINARY);
    } catch {
      break; // closed under it
    }
    // Its answer, or the socket's end.
    const frame = await Promise.race([client.next(10_000).catch(() => null), gone]);
    if (frame === null) break;
    errors.push(String(frame.code));
  }
  return { errors, closed };
}

/** A neighbouring session's turns, one after another, until `stop()`: how many were answered. */
function neighbourTurns(client: Client): { stop: () => Promise<number> } {
  let going = true;
  let answered = 0;
  const run = (async () => {
    for (let t = 1; going; t++) {
      client.send({ type: "text", text: `line ${t}` });
      const frames = await framesUntilTurnEnds(client, `t${t}`);
      if (frames.at(-1)?.type === "turn_complete") answered += 1;
      // A user's pace (back to back, at the simulator's timeScale 0, the turns would leave the
      // isolate no idle moment for the test's own timers).
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      going = false;
      await run;
      return answered;
    },
  };
}

describe("a client sending 8 MiB and 30 MiB messages in a loop", () => {
  it("gets frame_too_large for each, until its socket is closed (1009, named); reconnected it is closed again; its session and a neighbouring one answer throughout", {
    timeout: 60_000,
  }, async () => {
    const flooded = await simulatorSession({ calls: "" });
    const neighbour = await simulatorSession({ calls: "" });
    const turns = neighbourTurns(neighbour.client);
    const rounds: { errors: string[]; close: { code: number; reason: string } }[] = [];
    for (let round = 0; round < 3; round++) {
      // The flooder comes back each time with its token (a new socket of the same session).
      const socket = round === 0 ? flooded.client : await connect(httpUrl(flooded.wsUrl));
      if (round > 0) expect((await socket.next()).type).toBe("ready");
      const { errors } = await flood(socket, OVERSIZED_FRAMES_ALLOWED + 3);
      rounds.push({ errors, close: await socket.closed });
    }
    const answered = await turns.stop();
    for (const { errors, close } of rounds) {
      // Every message the session took was answered with the typed error, the last one too.
      expect(errors).toEqual(Array(OVERSIZED_FRAMES_ALLOWED + 1).fill("frame_too_large"));
      expect(close).toEqual({ code: CLOSE_MESSAGE_TOO_BIG, reason: OVERSIZED_CLOSE_REASON });
    }
    // Answered while the flood went on (a turn takes the simulator a moment; the flood, ~2 s).
    expect(answered).toBeGreaterThanOrEqual(1);
    // The flooded session itself goes on: a client of it is answered.
    const back = await connect(httpUrl(flooded.wsUrl));
    expect((await back.next()).type).toBe("ready");
    back.send({ type: "text", text: "still there?" });
    const frames = await framesUntilTurnEnds(back, "t1");
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
    back.close();
    neighbour.client.close();
  });

  it("control: with the bound off, the same socket takes every one of them and stays open", {
    timeout: 60_000,
  }, async () => {
    const flooded = await simulatorSession({ calls: "" });
    const stub = env.SESSION.get(env.SESSION.idFromName(flooded.sessionId));
    await runInDurableObject(stub, (instance: unknown) => {
      (instance as { gate: { oversized: { allowed: number } } }).gate.oversized.allowed =
        Number.POSITIVE_INFINITY;
    });
    const sent = OVERSIZED_FRAMES_ALLOWED + 3;
    const { errors, closed } = await flood(flooded.client, sent);
    expect(errors).toEqual(Array(sent).fill("frame_too_large"));
    expect(closed).toBe(false);
    expect(await flooded.client.pingThrough()).toEqual([{ type: "pong" }]);
    flooded.client.close();
  });
});
