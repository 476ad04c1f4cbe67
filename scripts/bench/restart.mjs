/**
 * The restart gap (issue 51): what a deploy costs a conversation in silence. A gateway of its
 * own (the measurement worker on the simulator, behind the edge stand-in that holds
 * connections while it restarts: scripts/lib/edge.mjs) has a phone call (through the carrier
 * stand-in, which follows `<Connect action>`) and a browser session (liveline/client), each
 * with a question just asked and its answer not begun; the gateway is killed and started again
 * on its state. For each: the silence between the last audio before the kill and the first
 * after it (the carried question's answer), and from the kill to that first audio — beside the
 * time `wrangler dev` takes to start, which a deploy on Cloudflare does not pay (its Worker
 * answers throughout; only the object restarts).
 */
import { startEdge } from "../lib/edge.mjs";
import {
  API_KEY,
  createSession,
  history,
  MEASUREMENT_WORKER,
  sleep,
  startServer,
  timeline,
} from "../lib/harness.mjs";

const AUTH_TOKEN = "bench-restart-auth-token";
/** The model's answer begins this long after the question (the simulator's latencyMs). */
const LATENCY_MS = 2_000;

async function until(read, check, what, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** Samples `level()` every 10 ms: when it last grew before `mark()`, and first grew after. */
function audioClock(level) {
  let last = level();
  let lastGrowth = performance.now();
  let markedAt = null;
  let lastBefore = null;
  let firstAfter = null;
  const timer = setInterval(() => {
    const now = performance.now();
    const value = level();
    if (value > last) {
      if (markedAt === null) lastGrowth = now;
      else if (firstAfter === null) firstAfter = now;
    }
    last = value;
  }, 10);
  return {
    mark() {
      markedAt = performance.now();
      lastBefore = lastGrowth;
    },
    done: () => firstAfter !== null,
    result() {
      clearInterval(timer);
      return { lastBefore, markedAt, firstAfter };
    },
  };
}

/** A tone loud enough for the simulator's energy VAD, as μ-law 8 kHz. */
async function tone(ms) {
  const { pcm16ToMulaw } = await import("../../src/audio/g711.ts");
  const pcm = new Int16Array(ms * 8);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return pcm16ToMulaw(pcm);
}

/** One trial: a call and a browser session across one kill. */
async function trial(stateRoot) {
  const { TwilioCallStandIn, webTransport } = await import("../../src/simulator/twilio/index.ts");
  const { connect } = await import("../../src/client/index.ts");
  const vars = { TWILIO_AUTH_TOKEN: AUTH_TOKEN };
  let server = await startServer({ main: MEASUREMENT_WORKER, vars, stateRoot });
  const edge = await startEdge({ holdMs: 90_000 });
  edge.route(server.port);
  const gateway = { base: edge.base, ws: edge.ws };
  let client = null;
  let call = null;
  try {
    const knobs = { timeScale: "1", latencyMs: String(LATENCY_MS), msPerWord: "60" };
    call = new TwilioCallStandIn({
      transport: webTransport(),
      allowInsecureStream: true,
      // The local restart of the whole gateway is not Cloudflare's (see the header).
      actionTimeoutMs: 90_000,
    });
    const query = encodeURIComponent(new URLSearchParams(knobs).toString());
    const placed = await call.placeCall({
      baseUrl: gateway.base,
      voiceUrl: `${gateway.base}/v1/telephony/twilio/voice?simulator=${query}`,
      authToken: AUTH_TOKEN,
      from: "+15550001111",
      to: "+15550002222",
    });
    const callSession = placed.streamUrl.split("/").at(-1);
    const created = await createSession(gateway, {
      metadata: { simulator: { ...knobs, modality: "AUDIO" } },
    });
    const heard = { browser: 0 };
    const events = [];
    client = connect({
      baseUrl: gateway.base,
      sessionId: created.sessionId,
      getToken: async () => {
        const res = await fetch(`${gateway.base}/v1/sessions/${created.sessionId}/token`, {
          method: "POST",
          headers: { Authorization: `Bearer ${API_KEY}` },
        });
        return res.status === 410 ? null : (await res.json()).token;
      },
      backoff: { baseMs: 50, maxMs: 200 },
      onEvent: (e) => events.push(e),
      onAudio: (pcm) => {
        heard.browser += pcm.byteLength;
      },
    });
    // Each spoke last a moment ago: the call's greeting, the browser's first answer.
    await until(
      () => history(gateway, callSession),
      (e) => e.some((x) => x.kind === "turn_complete"),
      "the greeting",
    );
    await call.waitFor((c) => c.heardMs() > 0 && c.queuedMs() === 0, 30_000);
    client.sendText("hello");
    await until(
      async () => events,
      (e) => e.some((f) => f.type === "turn_complete"),
      "the browser's first answer",
    );
    const clocks = {
      call: audioClock(() => call.heardMs()),
      browser: audioClock(() => heard.browser),
    };
    // The questions: the call's heard and kept, the browser's line recorded.
    await call.sendAudio(await tone(300), { realTime: true });
    await call.sendAudio(new Uint8Array(700 * 8).fill(0xff), { realTime: true });
    client.sendText("what are your opening hours?");
    await Promise.all([
      until(
        () => timeline(gateway, callSession),
        (rows) => rows.some((r) => r.kind === "SPEECH_KEPT"),
        "the call's question kept",
      ),
      until(
        async () => events,
        (e) => e.filter((f) => f.type === "user").length === 2,
        "the browser's line recorded",
      ),
    ]);
    clocks.call.mark();
    clocks.browser.mark();
    edge.route(null);
    await server.kill();
    server = await startServer({ restartOf: server, main: MEASUREMENT_WORKER, vars, stateRoot });
    edge.route(server.port);
    await until(
      async () => clocks.call.done() && clocks.browser.done(),
      Boolean,
      "the answers after the restart",
      90_000,
    );
    const gap = (c) => {
      const { lastBefore, markedAt, firstAfter } = c.result();
      return { silenceMs: firstAfter - lastBefore, afterKillMs: firstAfter - markedAt };
    };
    return {
      call: gap(clocks.call),
      browser: gap(clocks.browser),
      startMs: server.startMs,
      violations: call.violations.length,
      streams: call.streams.length,
    };
  } finally {
    client?.close();
    call?.hangUp();
    await edge.close();
    await server.stop();
  }
}

/** `trials` kills, one gateway each; the gap per kill, for a call and a browser session. */
export async function restartGap({ trials, stateRoot }) {
  const runs = [];
  for (let i = 0; i < trials; i++) runs.push(await trial(stateRoot));
  return { trials: runs, latencyMs: LATENCY_MS };
}
