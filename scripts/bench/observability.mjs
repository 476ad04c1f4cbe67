/**
 * What operating a session costs a frame's path (issue 32): the same round trips on two
 * servers started alike, one plain (no collector, no usage database) and one observed (every
 * turn traced to an OTLP receiver run here, each session's closing record written to D1), in
 * alternating blocks so that drift in the machine's load hits both alike. Tracing is batched
 * after the step and the usage row is written at a session's end, never on a frame's path:
 * the ratios say whether that holds.
 */

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import { API_KEY, createSession, join, progress, ROOT, sleep } from "../lib/harness.mjs";
import { startOtlpReceiver } from "../lib/otlp-receiver.mjs";

const AUDIO_IN = new Uint8Array(640); // 20 ms of 16 kHz PCM16 mono

/** The bench's config with the usage database bound (its migrations applied at start). */
function observedConfig() {
  const bench = readFileSync(joinPath(ROOT, "scripts/bench/wrangler.bench.toml"), "utf8");
  const dir = mkdtempSync(joinPath(tmpdir(), "liveline-observed-"));
  const path = joinPath(dir, "wrangler.toml");
  writeFileSync(
    path,
    `${bench.replace('main = "worker.ts"', `main = "${joinPath(ROOT, "scripts/bench/worker.ts")}"`)}
[[d1_databases]]
binding = "USAGE_DB"
database_name = "liveline-usage"
migrations_dir = "${joinPath(ROOT, "migrations")}"
`,
  );
  return path;
}

async function session(server) {
  const created = await createSession(server, { provider: "gemini" });
  const { client } = await join(created.wsUrl);
  client.send({ type: "text", text: "warm up" });
  for (;;) if ((await client.next(10_000)).type === "turn_complete") break;
  return { client, sessionId: created.sessionId };
}

async function textTurn(client, i) {
  const t0 = performance.now();
  client.send({ type: "text", text: `frame ${i}` });
  let first = 0;
  for (;;) {
    const f = await client.next(10_000);
    if (f.type === "text" && first === 0) first = performance.now() - t0;
    if (f.type === "turn_complete") return first;
  }
}

function audioTrip(client) {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const timer = setTimeout(() => fail(new Error("no audio back within 5 s")), 5000);
    client.onBinary = (_d, at) => {
      client.onBinary = null;
      clearTimeout(timer);
      ok(at - t0);
    };
    client.send(AUDIO_IN);
  });
}

/** A whole short session: created, one turn, ended; the end's own round trip. */
async function lifecycle(server) {
  const { client, sessionId } = await session(server);
  const t0 = performance.now();
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}`, {
    method: "DELETE",
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  const endMs = performance.now() - t0;
  if (!res.ok) throw new Error(`DELETE: ${res.status}`);
  client.close();
  return { sessionId, endMs };
}

async function described(server, sessionId) {
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}`, {
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  return res.json();
}

/**
 * `startBenchServer(vars, opts)`: the bench's own server start. `frames` round trips of each
 * kind and `sessions` whole sessions per arm.
 */
export async function observabilityCost(startBenchServer, { frames, sessions }) {
  const receiver = await startOtlpReceiver();
  // Both arms' gateways start side by side (nothing is measured until both are up): a start is
  // 15-25 s of a loaded machine.
  const starting = [
    startBenchServer(),
    startBenchServer(
      { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "liveline-bench" },
      { config: observedConfig(), main: joinPath(ROOT, "scripts/bench/worker.ts") },
    ),
  ];
  const [plainStart, observedStart] = await Promise.allSettled(starting);
  const plain = plainStart.status === "fulfilled" ? plainStart.value : undefined;
  const observed = observedStart.status === "fulfilled" ? observedStart.value : undefined;
  try {
    if (plainStart.status === "rejected") throw plainStart.reason;
    if (observedStart.status === "rejected") throw observedStart.reason;
    const arms = { plain, observed };
    const out = {
      text: { plain: [], observed: [] },
      audio: { plain: [], observed: [] },
      end: { plain: [], observed: [] },
    };
    const clients = {
      plain: (await session(plain)).client,
      observed: (await session(observed)).client,
    };
    const block = 50;
    const total = frames * 4;
    let done = 0;
    for (let i = 0; i < frames; i += block) {
      const n = Math.min(block, frames - i);
      for (const arm of ["plain", "observed"]) {
        for (let j = 0; j < n; j++) out.text[arm].push(await textTurn(clients[arm], i + j));
        for (let j = 0; j < n; j++) out.audio[arm].push(await audioTrip(clients[arm]));
        clients[arm].send({ type: "audio_end" });
        await sleep(100);
        while (await clients[arm].next(1).catch(() => null)) {}
        done += n * 2;
      }
      progress("tracing and usage on vs off", done, total);
    }
    const ended = [];
    for (let i = 0; i < sessions; i++)
      for (const arm of ["plain", "observed"]) {
        const { sessionId, endMs } = await lifecycle(arms[arm]);
        out.end[arm].push(endMs);
        if (arm === "observed") ended.push(sessionId);
      }
    for (const c of Object.values(clients)) c.close();
    // What the observed arm produced: spans received, usage rows written.
    await sleep(2500);
    let written = 0;
    for (const id of ended)
      if ((await described(observed, id)).closing?.copy === "written") written += 1;
    return {
      ...out,
      spans: receiver.spans.length,
      traces: new Set(receiver.spans.map((s) => s.traceId)).size,
      usageRows: { written, sessions: ended.length },
    };
  } finally {
    await observed?.stop();
    await plain?.stop();
    await receiver.stop();
  }
}
