// The ten lines docs/TESTING.md shows for liveline/testing, run as they are written (an app
// would import "liveline/testing"; here the repository's own source stands in for it).
import { afterAll, expect, it } from "vitest";
import { startGateway } from "../../src/testing/index.js";

const gateway = await startGateway(); // your wrangler.toml, the simulator as the model
afterAll(() => gateway.stop());

it("billing looks the invoice up", async () => {
  const session = await gateway.session({ agent: "billing", calls: { 1: ["lookup_invoice"] } });
  const turn = await session.say("what is on my invoice?");
  expect(turn.toolCalls.map((c) => c.name)).toEqual(["lookup_invoice"]);
  expect(turn.end).toBe("turn_complete");
});

// Beyond the ten lines: a client tool answered by the test, and a control that fails.
it("the greeter's chips are answered by the test's own client tool", async () => {
  const shown: unknown[] = [];
  const session = await gateway.session({
    calls: { 1: ["suggest_topics"], "*": [] },
    tools: {
      suggest_topics: (args) => {
        shown.push(args.topics);
        return { shown: true };
      },
    },
  });
  const turn = await session.say("hello");
  expect(turn.toolCalls).toEqual([
    expect.objectContaining({ name: "suggest_topics", runOn: "client" }),
  ]);
  expect(shown).toHaveLength(1);
  const second = await session.say("thanks");
  expect(second.toolCalls).toEqual([]);
  expect((await session.history()).events.filter((e) => e.kind === "tool_result")).toHaveLength(1);
  session.close();
});

it("control: a script naming a tool the agent lacks calls nothing (the test would catch a wrong agent)", async () => {
  const session = await gateway.session({ agent: "billing", calls: { 1: ["lookup_faq"] } });
  const turn = await session.say("what is on my invoice?");
  expect(turn.toolCalls).toEqual([]);
  session.close();
});
