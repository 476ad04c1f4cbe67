/**
 * npm run soak [-- --sessions N --seed S --parallel P --quick]
 *
 * Many liveline sessions at once against the simulator, with faults chosen from a seed:
 * client sockets dropped and resumed at random points, upstream drops and goAway (knobs),
 * duplicate / late / unknown tool results, malformed and oversized frames, wrong tokens.
 * Then, per session: every durable frame received exactly once by the (resuming) client, no
 * reply said twice, validateHistory holds, every call answered or cancelled, no
 * unauthorised join. Prints counts and the seed of every failing session; exits 1 on any
 * violation. A session's seed is S + its index: `--sessions 1 --seed <that seed>` replays it.
 */
import { unansweredCalls, validateHistory } from "../src/history/validate.ts";
import {
  API_KEY,
  Client,
  createSession,
  flags,
  history,
  machine,
  numFlag,
  pool,
  prng,
  progress,
  sleep,
  startServer,
  table,
  writeJson,
} from "./lib/harness.mjs";

const MAX_FRAME_BYTES = 262_144;
const FAULTS = [
  "client_drop_resume",
  "upstream_drop",
  "upstream_go_away",
  "duplicate_result",
  "late_result",
  "unknown_result",
  "malformed_frame",
  "oversized_frame",
  "wrong_token",
  "object_restart",
  "broken_upstream",
  "deep_input",
  "audio_burst",
  "stale_socket",
];

/** A value nested `depth` levels deep (the limit for stored values is 64). */
function nested(depth) {
  const root = {};
  let at = root;
  for (let i = 1; i < depth; i++) at = at.a = {};
  return root;
}

async function timelineKinds(server, sessionId) {
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}/timeline`, {
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`timeline: ${res.status}`);
  return (await res.json()).rows.map((r) => r.kind);
}

async function restartObject(server, sessionId) {
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}/restart`, {
    method: "POST",
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`restart: ${res.status}`);
}

async function soakSession(server, seed) {
  const rnd = prng(seed);
  const faults = {};
  const count = (f) => {
    faults[f] = (faults[f] ?? 0) + 1;
  };
  const violations = [];
  const knobs = { seed, timeScale: 0.02, race: 0.5 };
  const upstream = rnd();
  if (upstream < 0.08) {
    // The model accepts every connection and closes it right after setup.
    knobs.dropAfterMs = 1;
    count("broken_upstream");
  } else if (upstream < 0.3) {
    knobs.dropAfterMs = 150 + Math.floor(rnd() * 600);
    count("upstream_drop");
  } else if (upstream < 0.6) {
    knobs.goAwayAfterTurns = 1 + Math.floor(rnd() * 2);
    knobs.goAwayMs = 300;
    count("upstream_go_away");
  }
  const created = await createSession(server, {
    provider: "simulator",
    metadata: { simulator: knobs },
  });

  // Wrong tokens: another string, and a token for another session. Neither may join.
  if (rnd() < 0.5) {
    count("wrong_token");
    const other = await createSession(server, { provider: "simulator" });
    for (const token of ["not-a-token", other.token]) {
      const url = created.wsUrl.replace(/token=[^&]+/, `token=${encodeURIComponent(token)}`);
      const c = new Client(url, true);
      const joined = await c.opened.then(
        () => true,
        () => false,
      );
      if (joined) {
        violations.push(
          `unauthorised join with ${token === other.token ? "another session's token" : "a bad token"}`,
        );
        c.close();
      }
    }
  }

  const seen = new Map();
  const byTurn = new Map();
  let lastSeq = 0;
  const track = (client) => {
    client.onFrame = (f) => {
      if (typeof f.seq !== "number") return;
      seen.set(f.seq, (seen.get(f.seq) ?? 0) + 1);
      lastSeq = Math.max(lastSeq, f.seq);
      if (f.type === "text" && typeof f.turnId === "string") {
        const list = byTurn.get(f.turnId) ?? [];
        list.push(String(f.text));
        byTurn.set(f.turnId, list);
      }
    };
  };
  // Tracking starts before the socket opens: a replay can arrive in one burst with `ready`,
  // and frames handled before `track` was set would be missed by the count.
  const joinTracked = async (url) => {
    const c = new Client(url, false);
    track(c);
    await c.opened;
    const ready = await c.next(10_000);
    if (ready.type !== "ready") throw new Error(`expected ready, got ${JSON.stringify(ready)}`);
    return c;
  };
  let client = await joinTracked(created.wsUrl);
  const calls = [];
  const burstBefore = new Set();
  // Sockets left behind (a phone that changed networks): they never send, not even a ping.
  const stale = [];
  if (rnd() < 0.15) {
    count("stale_socket");
    for (let i = 0; i < 3; i++) {
      const c = new Client(created.wsUrl, false);
      await c.opened.catch(() => {});
      stale.push(c);
    }
  }

  const turns = 3;
  for (let t = 0; t < turns; t++) {
    client.send({ type: "text", text: t === 1 ? "what are your hours?" : `turn ${t}` });
    const dropAfter = rnd() < 0.4 ? 1 + Math.floor(rnd() * 6) : -1;
    let frames = 0;
    const deadline = Date.now() + 6000;
    while (Date.now() < deadline) {
      let f;
      try {
        f = await client.next(Math.max(1, deadline - Date.now()));
      } catch {
        if (client.closedWith === null) break; // the turn went quiet: on to the next
        // The socket was closed under us (the object restarted): resume where we were.
        client = await joinTracked(`${created.wsUrl}&resumeFrom=${lastSeq}`);
        continue;
      }
      frames++;
      if (f.type === "tool_call" && f.runOn === "client") {
        calls.push(f);
        if (rnd() < 0.1) {
          // Refused (bad_frame naming the limit); the call stays open for the real answer.
          count("deep_input");
          client.send({ type: "tool_result", callId: f.callId, result: nested(500) });
        }
        const burst = rnd() < 0.15;
        if (burst) {
          // Two seconds of audio after a network stall, just before the answer.
          count("audio_burst");
          for (let i = 0; i < 100; i++) client.send(new ArrayBuffer(640));
        }
        const r = rnd();
        // Checked only for an answer sent at once (a late one may go to a socket since closed).
        if (burst && (r < 0.2 || r >= 0.35)) burstBefore.add(f.callId);
        if (r < 0.2) {
          count("duplicate_result");
          client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
          client.send({ type: "tool_result", callId: f.callId, result: { shown: "again" } });
        } else if (r < 0.35) {
          count("late_result");
          const c = client;
          setTimeout(
            () => c.send({ type: "tool_result", callId: f.callId, result: { late: true } }),
            300,
          );
        } else {
          client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
        }
      }
      if (rnd() < 0.05) {
        count("unknown_result");
        client.send({ type: "tool_result", callId: `nope-${seed}-${frames}`, result: {} });
      }
      if (rnd() < 0.05) {
        count("malformed_frame");
        client.send(rnd() < 0.5 ? "{not json" : JSON.stringify({ type: "text", text: 42 }));
      }
      if (rnd() < 0.03) {
        count("oversized_frame");
        client.send(JSON.stringify({ type: "text", text: "x".repeat(MAX_FRAME_BYTES) }));
      }
      if (rnd() < 0.02) {
        // The session's object dies as in a crash (FAULT_INJECTION=on) and restarts.
        count("object_restart");
        await restartObject(server, created.sessionId);
      }
      if (frames === dropAfter) {
        // Drop the socket mid-turn and come back with resumeFrom = the last seq seen.
        count("client_drop_resume");
        client.close(4000);
        await client.closed;
        await sleep(Math.floor(rnd() * 200));
        client = await joinTracked(`${created.wsUrl}&resumeFrom=${lastSeq}`);
        continue;
      }
      if (f.type === "turn_complete" || f.type === "interrupted") break;
      if (f.type === "error" && f.fatal === true) break;
    }
  }

  // Let tools, timeouts and reconnects settle, then compare what the client got with the log.
  let events = [];
  for (let i = 0; i < 40; i++) {
    await sleep(150);
    // An object restart late in the last turn closes the socket after the loop above left
    // it: come back as a client would, from the last seq seen.
    if (client.closedWith !== null)
      client = await joinTracked(`${created.wsUrl}&resumeFrom=${lastSeq}`);
    events = await history(server, created.sessionId);
    const last = events.at(-1)?.seq ?? 0;
    if (unansweredCalls(events).length === 0 && lastSeq >= last) break;
  }
  client.close();
  for (const c of stale) c.close();

  // A tool result sent right after an audio burst was taken, not dropped (then timed out).
  for (const e of events) {
    if (e.kind === "tool_result" && burstBefore.has(e.callId) && /timed out/.test(e.error ?? ""))
      violations.push(`tool result after an audio burst was lost: ${e.callId} timed out`);
  }
  // Reconnects are bounded: a few per client input at most, never a loop.
  const connects = (await timelineKinds(server, created.sessionId)).filter(
    (k) => k === "UPSTREAM_CONNECT",
  ).length;
  if (connects > 12 * (turns + 1))
    violations.push(`${connects} model connections for ${turns} turns: a reconnect loop`);

  for (const v of validateHistory(events))
    violations.push(`history: ${v.rule} at seq ${v.seq}: ${v.message}`);
  const open = unansweredCalls(events);
  if (open.length > 0) violations.push(`calls neither answered nor cancelled: ${open.join(", ")}`);
  const last = events.at(-1)?.seq ?? 0;
  for (let s = 1; s <= last; s++) {
    const n = seen.get(s) ?? 0;
    if (n !== 1) violations.push(`durable frame ${s} received ${n} times`);
  }
  // Every simulator answer ends with a tag [#rN]: the same answer (its words and its tag)
  // shown twice is a reply said twice. Comparing text pieces would flag an honest reply that
  // says "is a " twice; comparing tags alone would flag a new connection's own [#r1].
  const replies = new Map();
  for (const [turnId, texts] of byTurn) {
    for (const reply of texts.join("").match(/[^\]]*?\[#r\d+\]/g) ?? []) {
      replies.set(reply, [...(replies.get(reply) ?? []), turnId]);
    }
  }
  for (const [reply, turnIds] of replies) {
    if (turnIds.length > 1) {
      violations.push(
        `reply said ${turnIds.length} times (turns ${turnIds.join(", ")}): ${reply.slice(-80)}`,
      );
    }
  }

  return { seed, faults, violations: violations.slice(0, 10) };
}

async function main() {
  const f = flags();
  const quick = f.has("quick");
  const sessions = numFlag(f, "sessions", quick ? 12 : 200);
  const seed = numFlag(f, "seed", 1);
  const parallel = numFlag(f, "parallel", quick ? 6 : 24);
  process.stderr.write(
    `soak: ${sessions} sessions, ${parallel} at once, seed ${seed}; starting wrangler dev…\n`,
  );
  const server = await startServer({
    vars: {
      TOOL_TIMEOUT_MS: "2000",
      MAX_FRAMES_PER_SECOND: "1000",
      FAULT_INJECTION: "on",
      // Few slots, reaped quickly: stale sockets must not lock a resuming client out.
      MAX_CLIENTS_PER_SESSION: "4",
      STALE_SOCKET_MS: "1000",
    },
  });
  const started = Date.now();
  let reports = [];
  try {
    let done = 0;
    reports = await pool(
      Array.from({ length: sessions }, (_, i) => seed + i),
      parallel,
      async (s) => {
        let r;
        try {
          r = await soakSession(server, s);
        } catch (err) {
          r = { seed: s, faults: {}, violations: [`the run failed: ${err.message}`] };
        }
        progress("soak sessions", ++done, sessions);
        return r;
      },
    );
  } finally {
    await server.stop();
  }
  const faults = Object.fromEntries(
    FAULTS.map((k) => [k, reports.reduce((a, r) => a + (r.faults[k] ?? 0), 0)]),
  );
  const failing = reports.filter((r) => r.violations.length > 0);
  const violations = failing.reduce((a, r) => a + r.violations.length, 0);
  console.log(
    `\nliveline soak — ${sessions} sessions (${parallel} at once), seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(
    table(
      ["count", "value"],
      [
        ["sessions", String(sessions)],
        ...FAULTS.map((k) => [`fault: ${k.replaceAll("_", " ")}`, String(faults[k])]),
        ["violations", String(violations)],
        ["sessions with a violation", String(failing.length)],
      ],
    ),
  );
  for (const r of failing.slice(0, 20)) {
    console.log(`\nFAILED seed ${r.seed} (replay: npm run soak -- --sessions 1 --seed ${r.seed})`);
    for (const v of r.violations) console.log(`  ${v}`);
  }
  console.log(
    `\nJSON: ${writeJson("soak.json", { sessions, seed, parallel, machine: await machine(), faults, violations, failing }, { quick })}`,
  );
  process.exit(violations > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
