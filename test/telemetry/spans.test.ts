/** A turn's timeline rows as a trace: its structure, timings and GenAI attributes. */
import { describe, expect, it } from "vitest";
import type { TraceRowAt } from "../../src/metering/latency.js";
import { type Span, type TurnTrace, turnSpans } from "../../src/telemetry/spans.js";

let n = 0;
const ids = {
  traceId: () => "ab".repeat(16),
  spanId: () => (++n).toString(16).padStart(16, "0"),
};

const T0 = 1_764_345_600_000;
const row = (at: number, kind: string, detail?: Record<string, unknown>): TraceRowAt => ({
  ms: T0 + at,
  kind,
  detail,
});

function trace(rows: TraceRowAt[], more: Partial<TurnTrace> = {}): TurnTrace {
  return {
    sessionId: "s-1",
    agent: "greeter",
    provider: "gemini",
    model: "gemini-2.5-flash-native-audio",
    turnId: "t1",
    rows,
    usage: null,
    cost: null,
    policies: {
      lookup_faq: { name: "lookup_faq", runOn: "server", followUp: "speak", timeoutMs: 15000 },
      suggest_topics: {
        name: "suggest_topics",
        runOn: "client",
        followUp: "silent",
        timeoutMs: 15000,
      },
    },
    ...more,
  };
}

const TYPED_TURN_WITH_TOOLS = [
  row(0, "USER", { turnId: "t1", source: "text" }),
  row(120, "MODEL_TEXT", { turnId: "t1" }),
  row(300, "TOOL_CALL", { turnId: "t1", callId: "c1", name: "lookup_faq", runOn: "server" }),
  row(301, "TOOL_CALL", { turnId: "t1", callId: "c2", name: "suggest_topics", runOn: "client" }),
  row(340, "TOOL_RESPONSE", { callId: "c1", name: "lookup_faq", error: false, followUp: "speak" }),
  row(900, "TURN_COMPLETE", { turnId: "t1" }),
  // A silent result after the turn's end: its call's span still ends at its outcome.
  row(950, "TOOL_RESPONSE", {
    callId: "c2",
    name: "suggest_topics",
    error: true,
    followUp: "silent",
  }),
];

const byName = (spans: Span[], name: string) => spans.find((s) => s.name === name)!;

describe("a turn's spans", () => {
  it("one trace: the turn at its root, the model's work and each call under it", () => {
    const spans = turnSpans(trace(TYPED_TURN_WITH_TOOLS), ids);
    expect(spans.map((s) => s.name)).toEqual([
      "invoke_agent greeter",
      "chat gemini-2.5-flash-native-audio",
      "execute_tool lookup_faq",
      "execute_tool suggest_topics",
    ]);
    const [root, ...children] = spans as [Span, ...Span[]];
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(root.parentSpanId).toBeNull();
    for (const child of children) expect(child.parentSpanId).toBe(root.spanId);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length);
  });

  it("timings: the input to the turn's end, the first byte, each call to its outcome", () => {
    const spans = turnSpans(trace(TYPED_TURN_WITH_TOOLS), ids);
    const root = byName(spans, "invoke_agent greeter");
    expect([root.startMs - T0, root.endMs - T0]).toEqual([0, 900]);
    const chat = byName(spans, "chat gemini-2.5-flash-native-audio");
    expect(chat.attributes["gen_ai.response.time_to_first_chunk"]).toBe(0.12);
    expect(chat.events).toEqual([{ name: "first_byte", atMs: T0 + 120 }]);
    const faq = byName(spans, "execute_tool lookup_faq");
    expect([faq.startMs - T0, faq.endMs - T0]).toEqual([300, 340]);
    const topics = byName(spans, "execute_tool suggest_topics");
    expect([topics.startMs - T0, topics.endMs - T0]).toEqual([301, 950]);
  });

  it("the GenAI conventions' attribute names, a call's policy and outcome", () => {
    const spans = turnSpans(
      trace(TYPED_TURN_WITH_TOOLS, {
        usage: {
          responses: 2,
          promptTokens: 400,
          responseTokens: 50,
          totalTokens: 450,
          cachedTokens: 0,
          thoughtsTokens: 0,
          toolUsePromptTokens: 0,
          promptByModality: {},
          responseByModality: {},
          cachedByModality: {},
          seconds: 0,
        },
        cost: { status: "priced", usd: 0.0003 },
      }),
      ids,
    );
    expect(byName(spans, "invoke_agent greeter").attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "greeter",
      "gen_ai.conversation.id": "s-1",
      "gen_ai.provider.name": "gcp.gemini",
      "gen_ai.request.model": "gemini-2.5-flash-native-audio",
      "gen_ai.usage.input_tokens": 400,
      "gen_ai.usage.output_tokens": 50,
      "liveline.turn.id": "t1",
      "liveline.turn.source": "text",
      "liveline.turn.outcome": "complete",
      "liveline.cost.usd": 0.0003,
    });
    expect(byName(spans, "execute_tool lookup_faq").attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup_faq",
      "gen_ai.tool.call.id": "c1",
      "liveline.tool.run_on": "server",
      "liveline.tool.follow_up": "speak",
      "liveline.tool.timeout_ms": 15000,
      "liveline.tool.outcome": "result",
    });
    const failed = byName(spans, "execute_tool suggest_topics");
    expect(failed.attributes).toMatchObject({
      "liveline.tool.outcome": "error",
      "error.type": "error",
    });
    expect(failed.status).toEqual({ code: "error", message: "error" });
  });

  it("a spoken turn has no first byte; a turn that timed out is an error", () => {
    const spans = turnSpans(
      trace([
        row(0, "USER", { turnId: "t1", source: "audio" }),
        row(45_000, "MODEL_TIMEOUT", { turnId: "t1" }),
        row(45_000, "TURN_COMPLETE", { turnId: "t1" }),
      ]),
      ids,
    );
    const root = byName(spans, "invoke_agent greeter");
    expect(root.status).toEqual({ code: "error", message: "model_timeout" });
    expect(root.attributes["error.type"]).toBe("model_timeout");
    const chat = byName(spans, "chat gemini-2.5-flash-native-audio");
    expect(chat.attributes["gen_ai.response.time_to_first_chunk"]).toBeUndefined();
    expect(chat.events).toEqual([]);
  });

  it("an interrupted turn says so; a turn seen without its input is not traced", () => {
    const interrupted = turnSpans(
      trace([
        row(0, "USER", { turnId: "t1", source: "text" }),
        row(80, "INTERRUPTED", { turnId: "t1" }),
      ]),
      ids,
    );
    expect(interrupted[0]!.attributes["liveline.turn.outcome"]).toBe("interrupted");
    expect(turnSpans(trace(TYPED_TURN_WITH_TOOLS.slice(1)), ids)).toEqual([]);
  });
});
