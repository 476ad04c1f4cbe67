import { beforeAll, describe, expect, it } from "vitest";
import { createSession, join } from "../../scripts/lib/harness.mjs";
import { sharedGateway } from "../support/shared-gateway.mjs";

/**
 * Lines that arrive faster than the model's responses start, on the OpenAI wire, under
 * `wrangler dev` (real sockets and timing; the workerd test pool delivers these bursts in an
 * order that never showed the race). Found by the black-box attack: a second
 * `response.create` before the first was created was refused, or responses were coalesced,
 * so the last line's turn stayed open and its answer was dropped. On the scripts
 * project's shared `wrangler dev` (test/support/scripts-gateway-setup.mjs: MAX_FRAMES_PER_SECOND 1000).
 */
describe("bursts of input on the OpenAI wire (wrangler dev)", () => {
  let server;
  beforeAll(async () => {
    server = await sharedGateway();
  }, 160_000);

  async function session() {
    const created = await createSession(server, {
      metadata: { simulator: { wire: "openai", timeScale: 0.2 } },
    });
    const { client } = await join(created.wsUrl);
    return client;
  }

  /** Frames until `turnId` ends (client tool calls answered at once). */
  async function until(client, turnId) {
    const frames = [];
    for (;;) {
      const f = await client.next(20_000);
      frames.push(f);
      if (f.type === "tool_call" && f.runOn === "client")
        client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
      if ((f.type === "turn_complete" || f.type === "interrupted") && f.turnId === turnId)
        return frames;
    }
  }

  it("lines sent in one instant: every turn ends once, the last one answered itself", async () => {
    for (const n of [2, 3, 4]) {
      const client = await session();
      client.send({ type: "text", text: "hi" });
      await until(client, "t1");
      const lines = Array.from({ length: n }, (_, i) => `line number ${i} please`);
      for (const line of lines) client.send({ type: "text", text: line });
      const last = `t${n + 1}`;
      const frames = await until(client, last);
      const ends = frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");
      expect(ends.at(-1), `${n} lines`).toMatchObject({ type: "turn_complete", turnId: last });
      const said = frames.filter((f) => f.type === "text" && f.turnId === last).map((f) => f.text);
      expect(said.join(""), `${n} lines`).toContain(lines.at(-1));
      client.close();
    }
  }, 120_000);

  // Timing-dependent here (the attack's server showed it 15 of 15; this machine's wrangler
  // dev rarely does): the adapter's unit test holds the exact sequence.
  it("a spoken client result and a line in the same instant: the line answered itself", async () => {
    const client = await session();
    client.send({ type: "text", text: "hi" });
    await until(client, "t1");
    client.send({ type: "text", text: "what is my profile" });
    for (;;) {
      const f = await client.next(20_000);
      if (f.type === "tool_call" && f.name === "get_user_profile") {
        await new Promise((r) => setTimeout(r, 30));
        client.send({ type: "tool_result", callId: f.callId, result: { name: "Ada" } });
        client.send({ type: "text", text: "and what about refunds" });
        break;
      }
    }
    const frames = await until(client, "t3");
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t3" });
    const said = frames.filter((f) => f.type === "text" && f.turnId === "t3").map((f) => f.text);
    // Its own answer: the refunds entry the lookup found (or the line echoed).
    expect(said.join("")).toMatch(/refunds/i);
    client.close();
  }, 60_000);
});
