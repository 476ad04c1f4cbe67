/**
 * What an idle session costs (issue 12, part 5), on a server of its own whose IDLE_TIMEOUT_MS
 * is `idleMs`. A Durable Object is billed for wall time while it is in memory; the runtime
 * takes an object out of memory (hibernation) about 10 s after its last event, but only when
 * nothing pins it — an outbound WebSocket (the model connection) or a pending timer does.
 *
 * Whether an object left memory is read from outside: `stats.objectStartedAt` of
 * GET /timeline is when the object's current instance was constructed, so a later value than
 * before means it was rebuilt. A probe wakes the object, so each session is probed once: a
 * grid of sessions, each probed a different time after it went idle, says when the object
 * left memory (to within one grid step).
 */

import { createSession, join, percentile, progress, sleep, timelineBody } from "../lib/harness.mjs";

const KEEPALIVE = '{"type":"keepalive"}';

async function objectStartedAt(server, sessionId) {
  return (await timelineBody(server, sessionId)).stats.objectStartedAt;
}

/** Plays one text turn; resolves with ms to the first reply text and to turn_complete. */
async function timedTurn(client, text) {
  const t0 = performance.now();
  client.send({ type: "text", text });
  let first = Number.NaN;
  for (;;) {
    const f = await client.next(20_000);
    if (f.type === "text" && Number.isNaN(first)) first = performance.now() - t0;
    if (f.type === "turn_complete") return { first, done: performance.now() - t0 };
  }
}

/** Waits for the `status` frame with this state (the client keeps status frames in `frames`). */
async function statusSeen(client, state, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (client.frames.some((f) => f.type === "status" && f.state === state)) return;
    await sleep(50);
  }
  throw new Error(`no status ${state} within ${ms} ms`);
}

/**
 * One session of an arm: a turn, then idle. `arm`:
 * - "held": the model connection is still open (probed before the idle close);
 * - "client": idle closed, a client attached and sending keepalives (hibernatable sockets);
 * - "clientStreaming": the same with streaming sockets, the default (an open one keeps the
 *   object in memory);
 * - "none": idle closed, the client gone.
 * Resolves with whether the object had left memory `delayMs` after the arm's idle moment.
 */
async function probeOne(server, arm, delayMs, idleMs) {
  const created = await createSession(server, { provider: "gemini" });
  const { client } = await join(created.wsUrl, true);
  await timedTurn(client, "hello");
  const before = await objectStartedAt(server, created.sessionId);
  // The probe above is the session's last event before the idle moment of "held".
  let idleAt = performance.now();
  if (arm !== "held") {
    await statusSeen(client, "idle", idleMs + 10_000);
    idleAt = performance.now();
  }
  let keepalive = null;
  // Answered by the runtime (hibernatable), or by the object before its session sees it.
  if (arm === "client" || arm === "clientStreaming")
    keepalive = setInterval(() => client.ws.send(KEEPALIVE), 3000);
  if (arm === "none") client.close();
  await sleep(Math.max(0, delayMs - (performance.now() - idleAt)));
  const after = await objectStartedAt(server, created.sessionId);
  if (keepalive) clearInterval(keepalive);
  client.close();
  return after > before;
}

/**
 * The next turn after an idle close, once the object left memory: text → first reply text
 * (the object wakes, reopens the model, answers), against a warm turn on the same session.
 * With `reconnect`, the client had left: the figure starts at its new socket.
 */
async function nextTurn(server, idleMs, waitMs, reconnect) {
  const created = await createSession(server, { provider: "gemini" });
  let { client } = await join(created.wsUrl, true);
  await timedTurn(client, "hello");
  await statusSeen(client, "idle", idleMs + 10_000);
  if (reconnect) client.close();
  await sleep(waitMs);
  const seen = client.frames.length;
  const t0 = performance.now();
  let readyMs = 0;
  if (reconnect) {
    ({ client } = await join(created.wsUrl, true));
    readyMs = performance.now() - t0;
  }
  const cold = await timedTurn(client, "are you there");
  // The model connection was opened again (a `live` after the idle one).
  const live = client.frames
    .slice(reconnect ? 0 : seen)
    .some((f) => f.type === "status" && f.state === "live");
  const warm = await timedTurn(client, "and again");
  client.close();
  return { readyMs, coldFirst: cold.first + readyMs, warmFirst: warm.first, live };
}

/**
 * `servers`: `streaming` (the default CLIENT_SOCKETS) and `hibernatable` (CLIENT_SOCKETS set
 * so), both with the idle timeout `idleMs`.
 */
export async function idleCost(servers, { idleMs, stepMs, steps, nextTurns }) {
  const serverOf = (arm) => (arm === "client" ? servers.hibernatable : servers.streaming);
  const delays = Array.from({ length: steps }, (_, i) => (i + 1) * stepMs);
  // "held" is probed while the connection is still open: delays below the idle timeout.
  const heldDelays = delays.filter((d) => d < idleMs - 1000);
  const jobs = [
    ...heldDelays.map((d) => ({ arm: "held", d })),
    ...delays.map((d) => ({ arm: "client", d })),
    ...delays.map((d) => ({ arm: "clientStreaming", d })),
    ...delays.map((d) => ({ arm: "none", d })),
  ];
  let done = 0;
  const total = jobs.length + 2 * nextTurns;
  const tick = () => progress("idle cost (sessions)", ++done, total);
  // Every session at once: each waits on its own clock, so the figures do not add up in time.
  const wait = delays.at(-1) + stepMs;
  const [grid, turns] = await Promise.all([
    Promise.all(
      jobs.map(async (j) => {
        const left = await probeOne(serverOf(j.arm), j.arm, j.d, idleMs);
        tick();
        return { ...j, left };
      }),
    ),
    Promise.all(
      [
        ...Array.from({ length: nextTurns }, () => false),
        ...Array.from({ length: nextTurns }, () => true),
      ].map(async (reconnect) => {
        // Attached through the idle close: only a hibernatable socket lets the object leave.
        const r = await nextTurn(
          reconnect ? servers.streaming : servers.hibernatable,
          idleMs,
          wait,
          reconnect,
        );
        tick();
        return { reconnect, ...r };
      }),
    ),
  ]);
  const arms = {};
  for (const arm of ["held", "client", "clientStreaming", "none"]) {
    const rows = grid.filter((g) => g.arm === arm).sort((a, b) => a.d - b.d);
    const firstLeft = rows.find((r) => r.left)?.d ?? null;
    const lastStayed = rows.filter((r) => !r.left).at(-1)?.d ?? 0;
    arms[arm] = {
      probes: rows.map((r) => [r.d, r.left]),
      // Left memory between lastStayed and firstLeft ms after the arm's idle moment.
      leftAfterMs: firstLeft === null ? null : { from: lastStayed, to: firstLeft },
      // Probes that broke the pattern (in memory after a later one had left): noise to report.
      outOfOrder: rows.filter((r) => !r.left && firstLeft !== null && r.d > firstLeft).length,
      longestProbedMs: rows.at(-1)?.d ?? 0,
    };
  }
  const med = (xs) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const of = (reconnect) => turns.filter((t) => t.reconnect === reconnect);
  return {
    idleMs,
    stepMs,
    arms,
    nextTurn: {
      attached: {
        n: of(false).length,
        coldFirstMs: med(of(false).map((t) => t.coldFirst)),
        warmFirstMs: med(of(false).map((t) => t.warmFirst)),
        reopened: of(false).every((t) => t.live),
      },
      reconnected: {
        n: of(true).length,
        readyMs: med(of(true).map((t) => t.readyMs)),
        coldFirstMs: med(of(true).map((t) => t.coldFirst)),
        warmFirstMs: med(of(true).map((t) => t.warmFirst)),
        reopened: of(true).every((t) => t.live),
      },
      afterIdleMs: wait,
    },
  };
}
