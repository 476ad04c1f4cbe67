/**
 * A session's turns as traces, end to end: `wrangler dev` with OTEL_EXPORTER_OTLP_ENDPOINT
 * pointing at a real OTLP/HTTP receiver started here (scripts/lib/otlp-receiver.mjs: it
 * decodes with OpenTelemetry's own generated protobuf code). Each turn arrives as one trace
 * — the turn, the model's work and each tool call under it — with the timings the session
 * itself reports. A collector that hangs or is down costs the session nothing: turns end
 * while its requests are held, and the dropped spans are counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, createSession, join, playTurn, startServer } from "../../scripts/lib/harness.mjs";
import { startOtlpReceiver } from "../../scripts/lib/otlp-receiver.mjs";

describe("traces over OTLP/HTTP to a real receiver (wrangler dev)", () => {
  let receiver;
  let server;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startServer({
      vars: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        // A collector's key, percent-encoded as the specification writes values.
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=test%20key,x-team=voice",
        OTEL_SERVICE_NAME: "liveline-test",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await receiver?.stop();
  });

  async function session() {
    const created = await createSession(server, {
      metadata: { simulator: { timeScale: 0, calls: "1:suggest_topics,set_preference;*:" } },
    });
    const { client } = await join(created.wsUrl);
    return { sessionId: created.sessionId, client };
  }

  async function described(sessionId) {
    const res = await fetch(`${server.base}/v1/sessions/${sessionId}`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    return res.json();
  }

  async function traceStats(sessionId) {
    const res = await fetch(`${server.base}/v1/sessions/${sessionId}/timeline`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    return (await res.json()).stats.traces;
  }

  const turnSpans = (sessionId, turnId) =>
    receiver.spans.filter((s) => {
      const root = receiver.spans.find(
        (r) =>
          r.traceId === s.traceId &&
          r.parentSpanId === "" &&
          r.attributes["gen_ai.conversation.id"] === sessionId,
      );
      return root?.attributes["liveline.turn.id"] === turnId;
    });

  it("each turn is one trace: the turn, the model's work and each tool call, with the session's own timings", async () => {
    const { sessionId, client } = await session();
    const first = await playTurn(client, "hi");
    expect(first.ended).toBe(true);
    await playTurn(client, "what are your opening hours?");
    await receiver.waitFor(
      () => turnSpans(sessionId, "t1").length >= 4 && turnSpans(sessionId, "t2").length >= 2,
    );
    const report = await described(sessionId);
    const t1 = turnSpans(sessionId, "t1");
    const root = t1.find((s) => s.parentSpanId === "");
    expect(root.name).toBe("invoke_agent greeter");
    expect(root.kind).toBe(1);
    expect(root.resource["service.name"]).toBe("liveline-test");
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "greeter",
      "gen_ai.conversation.id": sessionId,
      "gen_ai.provider.name": "liveline.simulator",
      "liveline.turn.id": "t1",
      "liveline.turn.source": "text",
      "liveline.turn.outcome": "complete",
    });
    // Every other span of the turn is the root's child, within its time.
    const children = t1.filter((s) => s !== root);
    expect(children.map((s) => s.name).sort()).toEqual(
      [`chat ${report.model}`, "execute_tool set_preference", "execute_tool suggest_topics"].sort(),
    );
    for (const child of children) {
      expect(child.parentSpanId).toBe(root.spanId);
      expect(child.startMs).toBeGreaterThanOrEqual(root.startMs);
      expect(child.startMs).toBeLessThanOrEqual(child.endMs);
    }
    // The timings are the session's own (GET /v1/sessions/:id's turns).
    const turn = report.turns.find((t) => t.turnId === "t1");
    expect(root.endMs - root.startMs).toBe(turn.turnMs);
    const chat = children.find((s) => s.name.startsWith("chat "));
    expect(chat.attributes["gen_ai.response.time_to_first_chunk"]).toBe(turn.firstByteMs / 1000);
    expect(chat.events.map((e) => e.name)).toEqual(["first_byte"]);
    for (const tool of turn.tools) {
      const span = children.find((s) => s.attributes["gen_ai.tool.call.id"] === tool.callId);
      expect(span.name).toBe(`execute_tool ${tool.name}`);
      expect(span.endMs - span.startMs).toBe(tool.ms);
      expect(span.attributes["liveline.tool.outcome"]).toBe(tool.outcome);
      expect(span.attributes["liveline.tool.follow_up"]).toBe("silent");
    }
    // The turn's usage and cost, as the session prices it.
    expect(root.attributes["gen_ai.usage.input_tokens"]).toBe(turn.usage.promptTokens);
    expect(root.attributes["liveline.cost.usd"]).toBe(turn.cost.usd);
    // The collector's headers were sent, decoded; nothing else of the secret shows.
    const request = receiver.requests.find((r) => r.path === "/v1/traces");
    expect(request.headers["x-collector-key"]).toBe("test key");
    expect(request.headers["x-team"]).toBe("voice");
    expect(await traceStats(sessionId)).toMatchObject({ dropped: 0 });
    client.close();
  }, 60_000);

  it("a collector that hangs or is down costs the session nothing: turns go on, drops are counted", async () => {
    const { sessionId, client } = await session();
    await playTurn(client, "hi");
    await receiver.waitFor(() => turnSpans(sessionId, "t1").length >= 4);
    const okTurns = [];
    for (let i = 0; i < 3; i++) okTurns.push(await playTurn(client, `question ${i}`));
    // Hanging: the export requests are held open while the next turns end.
    await receiver.setMode("hang");
    for (let i = 0; i < 3; i++) {
      const { ended } = await playTurn(client, `while hanging ${i}`);
      expect(ended).toBe(true);
    }
    await waitUntil(() => receiver.heldRequests > 0, 5_000);
    const { ended } = await playTurn(client, "a turn while an export is held");
    expect(ended).toBe(true);
    expect(receiver.heldRequests).toBeGreaterThan(0);
    // Down: the port is closed.
    await receiver.setMode("down");
    for (let i = 0; i < 3; i++) await playTurn(client, `while down ${i}`);
    await waitUntil(async () => (await traceStats(sessionId)).dropped > 0, 10_000);
    const stats = await traceStats(sessionId);
    expect(stats.dropped).toBeGreaterThan(0);
    await receiver.setMode("ok");
    // The turns' latencies, ok against held and down (printed: speed is the bench's to judge).
    const report = await described(sessionId);
    const turnMs = (from, to) =>
      report.turns
        .filter((t) => t.turnId !== null && +t.turnId.slice(1) >= from && +t.turnId.slice(1) <= to)
        .map((t) => t.turnMs);
    console.log(
      `tracing: turn ms with the collector ok ${turnMs(2, 4).join(", ")}; hanging ${turnMs(5, 8).join(", ")}; down ${turnMs(9, 11).join(", ")}; spans dropped ${stats.dropped}, sent ${stats.exported}`,
    );
    client.close();
  }, 90_000);
});

async function waitUntil(check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
