// The ten lines docs/TESTING.md shows for liveline/testing, run as they are written (an app
// would import "liveline/testing"; here the repository's own source stands in for it).
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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

/**
 * A gateway keeps its storage apart from the app's `.wrangler/state`: `npm run dev` in the
 * same app keeps its SQLite files there, and two workerd processes on one file fail to start
 * (SQLITE_BUSY, seen in CI when the starter's test and its dev started together). Control: the
 * gateway without its own storage writes the session's object into the app's directory.
 */
it("keeps its storage out of the app's .wrangler/state, where npm run dev keeps its own", async () => {
  const app = await mkdtemp(join(tmpdir(), "liveline-app-"));
  const worker = resolve("examples/greeter/src/worker.ts");
  await writeFile(
    join(app, "wrangler.toml"),
    [
      'name = "apart"',
      `main = ${JSON.stringify(worker)}`,
      'compatibility_date = "2026-11-01"',
      'compatibility_flags = ["nodejs_compat"]',
      "[[durable_objects.bindings]]",
      'name = "SESSION"',
      'class_name = "SessionObject"',
      "[[durable_objects.bindings]]",
      'name = "GEMINI_SIMULATOR"',
      'class_name = "GeminiSimulatorObject"',
      "[[migrations]]",
      'tag = "v1"',
      'new_sqlite_classes = ["SessionObject", "GeminiSimulatorObject"]',
    ].join("\n"),
  );
  const apart = await startGateway({ config: join(app, "wrangler.toml") });
  try {
    const session = await apart.session({ calls: { "*": [] } });
    const turn = await session.say("hello");
    expect(turn.end).toBe("turn_complete");
    session.close();
  } finally {
    await apart.stop();
  }
  expect(existsSync(join(app, ".wrangler", "state"))).toBe(false);
  await rm(app, { recursive: true, force: true });
}, 60_000);
