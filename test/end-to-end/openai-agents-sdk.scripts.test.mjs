import {
  OpenAIRealtimeWebSocket,
  RealtimeAgent,
  RealtimeSession,
  tool,
} from "@openai/agents-realtime";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedGateway } from "../support/shared-gateway.mjs";

/**
 * The official @openai/agents-realtime RealtimeSession (its WebSocket transport, pointed at
 * the simulator's OpenAI face by `url`) runs tool turns unchanged: a client nobody here wrote
 * judges whether the face speaks the service's wire (it parses every event with its own
 * schemas). Against the scripts project's shared `wrangler dev` (test/support/scripts-gateway-setup.mjs).
 */

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

describe("@openai/agents-realtime against the simulator's OpenAI face", () => {
  let server;
  beforeAll(async () => {
    server = await sharedGateway();
  }, 160_000);

  /** A RealtimeSession on the face with these knobs; every server event it parsed is kept. */
  async function session(knobs, tools) {
    const url = `${server.base.replace(/^http/, "ws")}/simulator/openai?${knobs}`;
    const agent = new RealtimeAgent({ name: "assistant", instructions: "Be brief.", tools });
    const transport = new OpenAIRealtimeWebSocket({ url, useInsecureApiKey: true });
    const s = new RealtimeSession(agent, {
      transport,
      model: "gpt-realtime",
      config: { outputModalities: ["text"] },
    });
    const events = [];
    const errors = [];
    s.on("transport_event", (e) => events.push(e));
    s.on("error", (e) => errors.push(e));
    await s.connect({ apiKey: "sk-simulator-ignored" });
    return { s, events, errors };
  }

  const waitFor = async (pred, ms = 10_000) => {
    const until = Date.now() + ms;
    while (!pred() && Date.now() < until) await sleep(20);
  };
  const doneCount = (events) => events.filter((e) => e.type === "response.done").length;
  const text = (events) =>
    events
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join("");

  it("a speak tool turn: the SDK runs the tool once, the face speaks its result, no error", async () => {
    let runs = 0;
    const lookup = tool({
      name: "lookup_faq",
      description: "Look an answer up in the FAQ.",
      parameters: z.object({ question: z.string() }),
      execute: async () => {
        runs++;
        return { answer: "nine to five" };
      },
    });
    const { s, events, errors } = await session("seed=7&timeScale=0&calls=greeting:lookup_faq", [
      lookup,
    ]);
    s.sendMessage("hi");
    await waitFor(() => doneCount(events) >= 2);
    await sleep(200);
    expect(runs).toBe(1);
    expect(text(events)).toContain("lookup_faq found: nine to five.");
    expect(doneCount(events)).toBe(2);
    expect(errors).toEqual([]);
    s.close();
  }, 30_000);

  it("the SDK's own race: it asks for a response after a side-effect result too, so the model answers again", async () => {
    const chips = tool({
      name: "suggest_topics",
      description: "Show topic chips (a side effect).",
      parameters: z.object({ question: z.string() }),
      execute: async () => ({ shown: true }),
    });
    const { s, events, errors } = await session(
      "seed=7&timeScale=0&calls=greeting:suggest_topics",
      [chips],
    );
    s.sendMessage("hi");
    await waitFor(() => doneCount(events) >= 2, 3000);
    await sleep(200);
    // One user message, two responses: what liveline's silent policy (no response.create)
    // prevents (see the contract suite, test/providers/contract-suite.ts).
    expect(doneCount(events)).toBe(2);
    expect(errors).toEqual([]);
    s.close();
  }, 30_000);
});
