/**
 * Cloudflare's limits that local workerd does not enforce (issue 53), each held by liveline
 * and shown here against real sockets (test/support/limits-global-setup.ts starts them):
 * - six connections waiting for headers per invocation: a model endpoint that takes the
 *   connection and never answers, under a stand-in of that limit (connection-gate.ts);
 * - workerd #6774 (an outbound WebSocket reported closed 1–2 s after a concurrent streaming
 *   fetch body completes): an MCP call whose answer streams, beside a live model socket;
 * - subrequests per invocation: a session counts them, and near its budget sheds what can wait;
 * - Workers Logs (256 KB an invocation, a socket's logs held until it closes): a voice turn's
 *   audio path logs nothing.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import type { SubrequestStats } from "../src/contracts/session-api.js";
import { McpServerConnection } from "../src/mcp/server-connection.js";
import type { ClosingRecord } from "../src/metering/closing-record.js";
import { emptyUsage } from "../src/metering/cost.js";
import { openWebSocket } from "../src/providers/websocket.js";
import { ClosingRecordStore } from "../src/session/closing-record-store.js";
import { SessionAlarm } from "../src/session/session-alarm.js";
import { OtlpExporter } from "../src/telemetry/exporter.js";
import type { Span } from "../src/telemetry/spans.js";
import { ConnectionGate } from "./connection-gate.js";
import {
  BASE,
  type Client,
  connect,
  createSession,
  type Frame,
  httpUrl,
  withKey,
} from "./support/gateway.js";
import {
  framesUntilTurnEnds,
  inLiveSession,
  simulatorSession,
  switchOffGuard,
} from "./support/session-flow.js";

const servers = inject("limitsServers");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 8_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

const record = (sessionId: string): ClosingRecord => ({
  sessionId,
  agent: "greeter",
  provider: "simulator",
  model: "gemini-2.5-flash-live-preview",
  state: "ended",
  endedBy: "deleted",
  limit: null,
  createdAt: new Date(0).toISOString(),
  closedAt: new Date().toISOString(),
  durationMs: 1_000,
  modelLiveMs: 900,
  usage: emptyUsage(),
  cost: { status: "unpriced", unpriced: ["gemini-2.5-flash-live-preview"] },
  turns: 1,
  toolCalls: 0,
  version: 1,
});

const span: Span = {
  traceId: "0123456789abcdef0123456789abcdef",
  spanId: "0011223344556677",
  parentSpanId: null,
  name: "invoke_agent greeter",
  kind: "internal",
  startMs: Date.now() - 1_000,
  endMs: Date.now(),
  attributes: { "gen_ai.operation.name": "invoke_agent" },
  events: [],
  status: { code: "unset" },
};

const mcpServer = { name: "desk", url: servers.mcp };

/**
 * In a session object's invocation, under the six-connection stand-in: six model connection
 * attempts to an endpoint that never answers (what a session whose model hangs had made after
 * the core's six tries, every 15 s), then a usage write, a trace batch and an MCP call. What
 * went through by `lookMs`, and what the hung endpoint still holds.
 */
async function besideSixHungAttempts(deadlineMs: number, lookMs: number, waitForAll: boolean) {
  const stub = env.SESSION.get(env.SESSION.newUniqueId());
  return runInDurableObject(stub, async (_object, state) => {
    const gate = new ConnectionGate(6);
    const hung = async () =>
      (await (await gate.bypass(`${servers.control}/hung`)).json()) as {
        open: number;
        accepted: number;
      };
    const before = await hung();
    const uninstall = gate.install();
    const mcp = new McpServerConnection(
      mcpServer,
      { listChanged() {} },
      { headersDeadlineMs: 20_000 },
    );
    try {
      const attempts = Array.from({ length: 6 }, () =>
        openWebSocket(servers.hung, {}, deadlineMs).then(
          () => "open",
          (err: Error) => err.name,
        ),
      );
      await until(hung, (h) => h.accepted >= before.accepted + 6, "the six attempts connected");
      const went = { usage: false, traces: false, mcp: false };
      const sessionId = crypto.randomUUID();
      const closings = new ClosingRecordStore(
        state.storage,
        new SessionAlarm(state.storage),
        gate.d1(env.USAGE_DB!),
        () => {},
      );
      closings.keep(record(sessionId));
      const usage = closings.copy().then(() => {
        went.usage = closings.read()?.copy === "written";
      });
      const exporter = new OtlpExporter(
        {
          url: `${servers.otlp}/v1/traces`,
          headers: {},
          scope: {
            resource: { "service.name": "liveline-test" },
            scope: { name: "t", version: "0" },
          },
        },
        () => {},
      );
      exporter.add([span]);
      const traces = exporter.flush().then(() => {
        went.traces = exporter.counts.exported === 1;
      });
      const call = mcp
        .callTool(
          "lookup_order",
          { order: "42" },
          {
            idempotencyKey: "k",
            signal: new AbortController().signal,
            timeoutMs: 8_000,
            onprogress() {},
          },
        )
        .then((result) => {
          went.mcp =
            JSON.stringify(result.structuredContent) === '{"order":"42","status":"shipped"}';
        });
      if (waitForAll)
        await until(
          async () => went,
          (w) => w.usage && w.traces && w.mcp,
          "the write, the batch and the call",
          lookMs,
        ).catch(() => undefined);
      else await sleep(lookMs);
      const seen = {
        went: { ...went },
        queued: gate.queued,
        held: (await hung()).open - before.open,
      };
      // Whatever the arm, the six go now (the endpoint lets them go), and the rest after them.
      await gate.bypass(`${servers.control}/hung/release`, { method: "POST" });
      const outcomes = await Promise.all(attempts);
      await Promise.all([usage, traces, call]);
      return { seen, after: went, outcomes, mostWaiting: gate.mostWaiting };
    } finally {
      mcp.close();
      uninstall();
    }
  });
}

describe("a model endpoint that takes the connection and never answers", () => {
  it("each attempt is aborted at its deadline: with six under way, the next D1 write, trace batch and MCP call go through", {
    timeout: 30_000,
  }, async () => {
    // 1.5 s here for the test's sake; a session's is CONNECT_DEADLINE_MS (10 s, under the
    // core's 15 s connect timer: test/providers/websocket-deadline.test.ts).
    const { seen, after, outcomes, mostWaiting } = await besideSixHungAttempts(1_500, 10_000, true);
    expect(outcomes).toEqual(Array(6).fill("TimeoutError"));
    expect(seen).toEqual({ went: { usage: true, traces: true, mcp: true }, queued: 0, held: 0 });
    expect(after).toEqual({ usage: true, traces: true, mcp: true });
    expect(mostWaiting).toBe(6);
  });

  it("control: without the deadline the six hold every connection, and the three wait behind them until the endpoint lets go", {
    timeout: 30_000,
  }, async () => {
    // Twice the deadline of the other arm: by then it had them all through.
    const { seen, after, outcomes } = await besideSixHungAttempts(
      Number.POSITIVE_INFINITY,
      3_000,
      false,
    );
    expect(seen.went).toEqual({ usage: false, traces: false, mcp: false });
    expect(seen.queued).toBeGreaterThanOrEqual(3);
    expect(seen.held).toBe(6);
    // Only the endpoint's answer at last (a 503) freed them.
    expect(outcomes).toEqual(Array(6).fill("Error"));
    expect(after).toEqual({ usage: true, traces: true, mcp: true });
  });
});

describe("workerd #6774: an MCP call whose answer streams, beside a live model socket", () => {
  it("repeated: the model socket stays open and answering, through and past each streamed body", {
    timeout: 30_000,
  }, async () => {
    const stub = env.SESSION.get(env.SESSION.newUniqueId());
    const seen = await runInDurableObject(stub, async () => {
      const ws = await openWebSocket(servers.echo);
      const closes: number[] = [];
      let echoes = 0;
      ws.addEventListener("close", (e) => {
        closes.push(e.code);
      });
      ws.addEventListener("message", () => {
        echoes += 1;
      });
      const mcp = new McpServerConnection(
        mcpServer,
        { listChanged() {} },
        { headersDeadlineMs: 20_000 },
      );
      const progress: number[] = [];
      let sent = 0;
      // The socket is used all along, every 250 ms: through each streamed body, and for 2 s
      // past the last (the close was reported 1–2 s after a body completed).
      let pinging = true;
      const pings = (async () => {
        while (pinging) {
          ws.send(`ping ${sent}`);
          sent += 1;
          await sleep(250);
        }
      })();
      try {
        for (let i = 0; i < 3; i++) {
          let reports = 0;
          // slow_report answers as a stream (Streamable HTTP's SSE) of progress for 600 ms.
          await mcp.callTool(
            "slow_report",
            { topic: `t${i}` },
            {
              idempotencyKey: `k${i}`,
              signal: new AbortController().signal,
              timeoutMs: 5_000,
              onprogress: () => {
                reports += 1;
              },
            },
          );
          progress.push(reports);
        }
        await sleep(2_000);
        pinging = false;
        await pings;
        await until(
          async () => echoes,
          (n) => n === sent,
          "every ping echoed",
        );
        return { closes, progress, readyState: ws.readyState, echoes, sent };
      } finally {
        pinging = false;
        mcp.close();
        ws.close(1000, "done");
      }
    });
    // Each body streamed (progress came), and the socket never closed.
    expect(seen.progress.every((n) => n > 0)).toBe(true);
    expect(seen.closes).toEqual([]);
    expect(seen.readyState).toBe(WebSocket.OPEN);
    expect(seen.echoes).toBe(seen.sent);
  });

  /**
   * A quick desk session's turn whose call's stream completes, and the runtime reporting the
   * model's socket closed (1005) right then, as #6774 does; `carry: false` switches off the
   * protection that carries a turn across a lost connection (the control).
   */
  async function closedAsTheStreamCompletes(carry: boolean) {
    // The answer to the result comes 500 ms after it (the model's latency): the close lands
    // while the turn still owes it.
    const { sessionId, client } = await quickDeskSession({
      timeScale: 1,
      latencyMs: 500,
      msPerWord: 5,
    });
    if (!carry) await switchOffGuard(sessionId, "carryTurns");
    client.send({ type: "text", text: "build the report" });
    const frames: Frame[] = [];
    let closedAt = -1;
    for (;;) {
      const frame = await client.next(8_000);
      frames.push(frame);
      if (frame.type === "tool_result" && closedAt < 0) {
        closedAt = frames.length;
        await inLiveSession<{ link: { ws: WebSocket | null } }>(sessionId, (live) => {
          live.link.ws?.dispatchEvent(new CloseEvent("close", { code: 1005, reason: "" }));
        });
      }
      if (frame.type === "turn_complete" || frame.type === "interrupted") break;
    }
    const rows = await timelineRows(sessionId);
    client.close();
    return { frames, after: frames.slice(closedAt), rows };
  }

  it("were the runtime to report the model's socket closed (1005) as a streamed body completes, the turn is carried to a new connection: one call, one result, its answer, one end", {
    timeout: 30_000,
  }, async () => {
    const { frames, after, rows } = await closedAsTheStreamCompletes(true);
    expect(frames.filter((f) => f.type === "tool_call")).toHaveLength(1);
    expect(frames.filter((f) => f.type === "tool_result")).toHaveLength(1);
    // The result's answer came after the close, on the next connection, and the turn ended.
    expect(after.filter((f) => f.type === "text").length).toBeGreaterThan(0);
    expect(after.at(-1)).toMatchObject({ type: "turn_complete" });
    expect(rows.find((r) => r.kind === "UPSTREAM_CLOSED")?.detail).toMatchObject({ code: 1005 });
    expect(rows.filter((r) => r.kind === "UPSTREAM_CONNECT").length).toBeGreaterThanOrEqual(2);
    expect(rows.filter((r) => r.kind === "TURN_COMPLETE")).toHaveLength(1);
  });

  it("control: without carrying turns, the same close ends the turn unanswered", {
    timeout: 30_000,
  }, async () => {
    const { after } = await closedAsTheStreamCompletes(false);
    expect(after.filter((f) => f.type === "text")).toEqual([]);
    expect(after.at(-1)?.type).not.toBe("turn_complete");
  });
});

async function quickDeskSession(
  knobs: Record<string, number> = {},
): Promise<{ sessionId: string; client: Client }> {
  const created = await createSession({
    agent: "quick_desk",
    provider: "simulator",
    metadata: { simulator: { timeScale: 0, calls: "*:desk__slow_report", ...knobs } },
  });
  const client = await connect(httpUrl(created.wsUrl));
  expect((await client.next()).type).toBe("ready");
  return { sessionId: created.sessionId, client };
}

async function timeline(sessionId: string): Promise<{
  rows: { kind: string; detail?: Record<string, unknown> }[];
  stats: { subrequests: SubrequestStats };
}> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    rows: { kind: string; detail?: Record<string, unknown> }[];
    stats: { subrequests: SubrequestStats };
  };
}
const timelineRows = async (sessionId: string) => (await timeline(sessionId)).rows;

describe("a session's subrequests", () => {
  it("are counted (stats.subrequests); near SUBREQUEST_BUDGET a row says so and progress reports are shed, never the model, the tool or the record", {
    timeout: 30_000,
  }, async () => {
    const { sessionId, client } = await quickDeskSession();
    // The control first: far from its budget, the call's progress reaches the client.
    client.send({ type: "text", text: "the first report" });
    const first = await framesUntilTurnEnds(client, "t1");
    expect(first.filter((f) => f.type === "tool_progress").length).toBeGreaterThan(0);
    let stats = (await timeline(sessionId)).stats.subrequests;
    expect(stats.budget).toBe(10_000);
    expect(stats.byKind.model).toBeGreaterThanOrEqual(1);
    expect(stats.byKind.mcp).toBeGreaterThanOrEqual(2); // its listing, the call
    expect(stats.shed).toEqual({ traces: 0, progress: 0 });
    expect(stats.waiting).toBe(0);

    // Now two requests from its budget: the next is past 80 % of it.
    await inLiveSession<{ subrequests: { budget: number; stats(): SubrequestStats } }>(
      sessionId,
      (live) => {
        live.subrequests.budget = live.subrequests.stats().total + 2;
      },
    );
    client.send({ type: "text", text: "the second report" });
    const second = await framesUntilTurnEnds(client, "t2");
    expect(second.filter((f) => f.type === "tool_progress")).toEqual([]);
    expect(second.filter((f) => f.type === "tool_result")).toHaveLength(1);
    expect(second.filter((f) => f.type === "text").length).toBeGreaterThan(0);
    expect(second.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t2" });
    const after = await timeline(sessionId);
    stats = after.stats.subrequests;
    expect(stats.shed.progress).toBeGreaterThan(0);
    expect(after.rows.find((r) => r.kind === "SUBREQUESTS_NEAR")?.detail).toMatchObject({
      budget: stats.budget,
    });
    client.close();
  });
});

describe("Workers Logs (256 KB an invocation; a socket's logs held until it closes)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a voice turn's audio path logs nothing: no line per chunk, either way", {
    timeout: 20_000,
  }, async () => {
    const { client } = await simulatorSession({ seed: 8, modality: "AUDIO", calls: "" });
    const lines = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level),
    );
    let audioOut = 0;
    client.ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") audioOut += 1;
    });
    // 2 s of 16 kHz PCM16 in 20 ms chunks, then its end: the model answers with audio.
    for (let i = 0; i < 100; i++) client.send(new Uint8Array(640).fill(i % 7).buffer);
    client.send({ type: "audio_end" });
    await framesUntilTurnEnds(client, "t1");
    expect(audioOut).toBeGreaterThan(0);
    expect(lines.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0, 0, 0]);
    client.close();
  });
});
