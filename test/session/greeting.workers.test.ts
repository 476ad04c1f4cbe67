import { describe, expect, it } from "vitest";
import {
  duplicated,
  playTurn,
  simulatorSession,
  textsOf,
  turnEndsOf,
} from "../support/session-flow.js";

const TRIALS = Number(process.env.GREETING_TRIALS ?? 200);

/**
 * The field case: a greeting whose side-effect tool calls come after the speech, with
 * turnComplete in the same instant (ADK issue 4902: 95–100 % duplicated greetings).
 */
describe("the greeting with fire-and-forget tool calls, end to end", () => {
  it(`gives 0 duplicate replies and one turn_complete per turn over ${TRIALS} seeded sessions`, {
    timeout: 300_000,
  }, async () => {
    let duplicates = 0;
    for (let seed = 1; seed <= TRIALS; seed++) {
      const { client } = await simulatorSession({ race: 1, seed });
      const frames = await playTurn(client, "hi", { settleMs: 100 });
      if (duplicated(frames)) duplicates++;
      expect(textsOf(frames).length).toBeGreaterThan(0);
      client.close();
    }
    console.log(`liveline, greeting race=1: ${duplicates}/${TRIALS} duplicated`);
    expect(duplicates).toBe(0);
  });

  it("control: the naive relay (protections off) shows the duplicates", {
    timeout: 120_000,
  }, async () => {
    const trials = 20;
    let duplicates = 0;
    for (let seed = 1; seed <= trials; seed++) {
      const { client } = await simulatorSession({ race: 1, seed }, { naive: true });
      const frames = await playTurn(client, "hi", { settleMs: 100 });
      if (duplicated(frames)) duplicates++;
      client.close();
    }
    console.log(`naive relay, greeting race=1: ${duplicates}/${trials} duplicated`);
    expect(duplicates).toBeGreaterThan(trials * 0.9);
  });
});

describe("a speak result after the model ended its turn", () => {
  it("is spoken, once, in the same turn", async () => {
    const { client } = await simulatorSession({ race: 1, calls: "greeting:lookup_faq" });
    const frames = await playTurn(client, "hi", { settleMs: 150 });
    const result = frames.find((f) => f.type === "tool_result");
    expect(result).toMatchObject({ name: "lookup_faq" });
    const after = frames.slice(frames.indexOf(result!) + 1);
    const spoken = textsOf(after);
    expect(spoken.length).toBeGreaterThan(0);
    expect(after.filter((f) => f.type === "text").every((f) => f.turnId === result!.turnId)).toBe(
      true,
    );
    expect(turnEndsOf(frames)).toEqual([
      expect.objectContaining({ type: "turn_complete", turnId: result!.turnId }),
    ]);
    expect(turnEndsOf(frames)[0]!.seq).toBeGreaterThan(result!.seq as number);
    expect(duplicated(frames)).toBe(false);
  });
});
