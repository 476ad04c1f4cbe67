import { describe, expect, it } from "vitest";
import { type Client, connect, createSession, type Frame, httpUrl } from "../support/gateway.js";

const SESSIONS = 20;
const LINES = ["one", "two", "three", "four"];

/**
 * Issue 8, as a new user met it: the greeter on the built-in simulator with its default
 * pacing; "hi", then a line 250 ms after each turn's end, the greeting's client tool call
 * answered as `npm run try` does. The simulator's honest answers all open alike ("Sure. You
 * said: …"); the regeneration defence used to take them for repeats, drop them and leave
 * the turn open for good.
 */
async function quickLines(
  client: Client,
): Promise<{ turns: Map<string, Frame[]>; order: string[] }> {
  const turns = new Map<string, Frame[]>();
  const order: string[] = [];
  const lines = ["hi", ...LINES];
  for (const [i, line] of lines.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, 250));
    client.send({ type: "text", text: line });
    let turnId: string | null = null;
    for (;;) {
      const frame = await client.next(20_000).catch(() => {
        throw new Error(`turn "${line}" did not end within 20 s`);
      });
      if (frame.type === "tool_call" && frame.runOn === "client")
        client.send({ type: "tool_result", callId: frame.callId, result: { shown: true } });
      const id = typeof frame.turnId === "string" ? frame.turnId : null;
      if (frame.type === "user" && frame.text === line) turnId = id;
      if (id !== null) {
        if (!turns.has(id)) {
          turns.set(id, []);
          order.push(id);
        }
        turns.get(id)!.push(frame);
      }
      if ((frame.type === "turn_complete" || frame.type === "interrupted") && id === turnId) break;
    }
  }
  return { turns, order };
}

describe("honest answers that open alike, lines 250 ms apart", () => {
  it(`every turn ends once, with its own answer, in ${SESSIONS} sessions`, {
    timeout: 120_000,
  }, async () => {
    const runs = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, n) => {
        const created = await createSession({
          agent: "greeter",
          provider: "simulator",
          metadata: { simulator: { seed: n + 1 } },
        });
        const client = await connect(httpUrl(created.wsUrl));
        expect((await client.next()).type).toBe("ready");
        const run = await quickLines(client);
        // Anything after the last turn's end (a late turn end, a stray reply) shows here.
        await new Promise((r) => setTimeout(r, 300));
        const late: Frame[] = [];
        for (;;) {
          const f = await client.next(50).catch(() => null);
          if (!f) break;
          late.push(f);
        }
        client.close();
        return { ...run, late };
      }),
    );
    let answered = 0;
    for (const { turns, order, late } of runs) {
      expect(order).toHaveLength(1 + LINES.length);
      expect(late.filter((f) => f.type !== "pong")).toEqual([]);
      for (const [i, turnId] of order.entries()) {
        const frames = turns.get(turnId)!;
        const ends = frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");
        expect(ends.map((f) => f.type)).toEqual(["turn_complete"]);
        expect(frames.filter((f) => f.type === "error")).toEqual([]);
        if (i === 0) continue;
        const text = frames
          .filter((f) => f.type === "text" || f.type === "transcript")
          .map((f) => f.text)
          .join("");
        expect(text).toContain(`“${LINES[i - 1]}”`);
        answered++;
      }
    }
    console.log(`quick lines: ${answered}/${SESSIONS * LINES.length} answered in their own turn`);
  });
});
