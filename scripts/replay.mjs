/**
 * npm run replay -- <recording.jsonl> [--speed N] [--naive] [--base URL]
 *
 * Plays a recorded model wire (GET /v1/sessions/:id/recording?kind=wire) back against the
 * gateway: the model side scripted from the recording, the client side from its recorded
 * client frames, with the recorded timing (`--speed 4`: gaps four times shorter). Then checks
 * the guarantees on what the gateway recorded — one reply per turn, every result once, no
 * split pair, the same durable frames as the recording's — prints them, and exits 1 if one
 * broke. `--naive`: against the naive relay (liveline with every protection off; a
 * simulator session's measurement arm), the control. Without `--base`, a `wrangler dev` of
 * the measurement worker is started (and stopped). A recording of a real service's session
 * replays through that service's own adapter: the gateway's provider URL must then point at
 * the scripted model (`--model-port`; the started server does that itself).
 * Details: docs/RECORDINGS.md.
 */
import { readFileSync } from "node:fs";
import { flags, MEASUREMENT_WORKER, numFlag, startServer, table } from "./lib/harness.mjs";
import { checkRows, readWireRecording, replay } from "./lib/replay.mjs";

const f = flags();
const file = process.argv.slice(2).find((a) => !a.startsWith("--") && a.endsWith(".jsonl"));
if (file === undefined) {
  console.error("usage: npm run replay -- <recording.jsonl> [--speed N] [--naive] [--base URL]");
  process.exit(2);
}
const recording = readWireRecording(readFileSync(file, "utf8"));
const speed = numFlag(f, "speed", 1);
const naive = f.get("naive") === true;
const { header } = recording;
console.log(
  `replaying ${file}: session ${header.sessionId} (${header.provider}, ${header.model}, agent ${header.agent}), ${recording.entries.length} entries, speed ${speed}${naive ? ", against the naive relay" : ""}`,
);
const base = f.get("base");
const server =
  typeof base === "string"
    ? { base, ws: base.replace(/^http/, "ws"), stop: async () => {} }
    : await startServer({ main: MEASUREMENT_WORKER });
try {
  const result = await replay(server, recording, { speed, naive });
  console.log(table(["guarantee", "replay", "detail"], checkRows(result.checks)));
  console.log(
    `model: ${result.model.connections} connection(s), ${result.model.sent} frames sent, ${result.model.untriggered} without the gateway's frame they followed in the recording`,
  );
  process.exitCode = result.checks.every((c) => c.held) ? 0 : 1;
} finally {
  await server.stop();
}
