/**
 * Records the wire fixtures that `npm test` replays (test/fixtures/recordings/): a few
 * sessions against the simulator, each with `recording: {wire: true}`, saved as the gateway
 * serves them (GET …/recording?kind=wire). Run it again when the wire changes on purpose:
 *
 *   node --import ./scripts/lib/ts-resolve.mjs --experimental-strip-types scripts/lib/record-fixtures.mjs
 *
 * A recording of a real service's session (npm run check:live -- --out DIR) is kept the same
 * way; this file only makes the simulator's.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  API_KEY,
  createSession,
  join as joinSession,
  MEASUREMENT_WORKER,
  ROOT,
  startServer,
} from "./harness.mjs";

const OUT = join(ROOT, "test/fixtures/recordings");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Plays one typed turn: answers the app's tool calls, waits for the turn's end. */
async function turn(client, text) {
  client.send({ type: "text", text });
  for (;;) {
    const f = await client.next(15_000);
    if (f.type === "tool_call" && f.runOn === "client")
      client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
    if (f.type === "turn_complete" || f.type === "interrupted") return;
  }
}

const SCENARIOS = [
  {
    name: "gemini-greeting-tools",
    about:
      "Gemini wire: a greeting whose fire-and-forget calls (suggest_topics on the app, set_preference on the server) race its end, then a spoken lookup",
    knobs: {
      wire: "gemini",
      seed: 7,
      timeScale: 0.05,
      calls: "greeting:suggest_topics,set_preference;2:lookup_faq",
    },
    lines: ["hi", "what are your hours?"],
  },
  {
    name: "gpt-live-call-delivered-twice",
    about:
      "GPT-Live wire: the backend's function call delivered twice (the same call id in two response events); run once",
    knobs: {
      wire: "gpt-live",
      seed: 3,
      timeScale: 0.05,
      msPerWord: 20,
      duplicateDelivery: 1,
      calls: "1:lookup_faq;*:",
    },
    lines: ["what are your hours?"],
  },
];

const server = await startServer({ main: MEASUREMENT_WORKER });
try {
  for (const scenario of SCENARIOS) {
    const created = await createSession(server, {
      provider: "simulator",
      metadata: { simulator: scenario.knobs },
      recording: { wire: true },
    });
    const { client } = await joinSession(created.wsUrl);
    for (const line of scenario.lines) await turn(client, line);
    await sleep(500);
    client.close();
    await sleep(300);
    await fetch(`${server.base}/v1/sessions/${created.sessionId}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    await sleep(500);
    const res = await fetch(`${server.base}/v1/sessions/${created.sessionId}/recording?kind=wire`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    if (!res.ok) throw new Error(`${scenario.name}: ${res.status} ${await res.text()}`);
    const path = join(OUT, `${scenario.name}.wire.jsonl`);
    writeFileSync(path, await res.text());
    console.log(`${path}: ${scenario.about}`);
  }
} finally {
  await server.stop();
}
