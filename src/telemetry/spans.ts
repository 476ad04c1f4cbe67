/**
 * A turn as an OpenTelemetry trace, built from the rows the session's timeline holds for it:
 * the turn (`invoke_agent`) from the user's input to its end; under it the model's work
 * (`chat`: from the input to the turn's end, with the time to its first byte) and each tool
 * call (`execute_tool`: from the call to its outcome, with its policy). Attribute names are
 * the GenAI semantic conventions' where they have one, `liveline.*` otherwise. Pure.
 */
import type { Cost } from "../metering/cost.js";
import { type TraceRowAt, turnLatencies } from "../metering/latency.js";
import type { ToolPolicy, UsageTotals } from "../vocabulary/model.js";

export type AttributeValue = string | number | boolean;

/** OTLP's span kinds (trace.proto): what liveline uses. */
export type SpanKind = "internal" | "client";

export interface SpanEvent {
  name: string;
  /** Epoch milliseconds. */
  atMs: number;
}

export interface Span {
  /** 32 hex digits. */
  traceId: string;
  /** 16 hex digits. */
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: SpanKind;
  /** Epoch milliseconds. */
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  events: SpanEvent[];
  status: { code: "unset" } | { code: "error"; message: string };
}

/** A turn's rows (epoch milliseconds) and what the session knows of it. */
export interface TurnTrace {
  sessionId: string;
  /** The agent that spoke in it. */
  agent: string;
  provider: string;
  model: string;
  turnId: string;
  rows: readonly TraceRowAt[];
  usage: UsageTotals | null;
  cost: Cost | null;
  /** The agent's tools' policies, by name. */
  policies: Readonly<Record<string, ToolPolicy>>;
}

export interface SpanIds {
  traceId(): string;
  spanId(): string;
}

/** The GenAI conventions' `gen_ai.provider.name` for each of liveline's providers. */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  gemini: "gcp.gemini",
  vertex: "gcp.vertex_ai",
  openai: "openai",
  "gpt-live": "openai",
  simulator: "liveline.simulator",
};

/** Timeline rows that mean the turn went wrong, and the `error.type` each is. */
const TURN_ERRORS: Readonly<Record<string, string>> = {
  MODEL_TIMEOUT: "model_timeout",
  EMPTY_RESPONSE: "empty_response",
  UPSTREAM_GAVE_UP: "upstream_gave_up",
};

type Detail = Record<string, unknown>;
const detailOf = (row: TraceRowAt): Detail =>
  typeof row.detail === "object" && row.detail !== null ? (row.detail as Detail) : {};

/**
 * The turn's spans, its root first; none when its rows lack the input that opened it (the
 * object restarted during the turn, or the timeline dropped the rows).
 */
export function turnSpans(turn: TurnTrace, ids: SpanIds): Span[] {
  const opened = turn.rows.find((r) => r.kind === "USER");
  const latency = turnLatencies(turn.rows).find((t) => t.turnId === turn.turnId);
  if (opened === undefined || latency === undefined) return [];
  const ended = turn.rows.find((r) => r.kind === "TURN_COMPLETE" || r.kind === "INTERRUPTED");
  const start = opened.ms;
  const end = ended?.ms ?? Math.max(start, ...turn.rows.map((r) => r.ms));
  const traceId = ids.traceId();
  const provider = PROVIDER_NAMES[turn.provider] ?? turn.provider;
  const tokens: Record<string, number> =
    turn.usage === null
      ? {}
      : {
          "gen_ai.usage.input_tokens": turn.usage.promptTokens,
          "gen_ai.usage.output_tokens": turn.usage.responseTokens,
        };
  const failure = turn.rows.map((r) => TURN_ERRORS[r.kind]).find((e) => e !== undefined);
  const root: Span = {
    traceId,
    spanId: ids.spanId(),
    parentSpanId: null,
    name: `invoke_agent ${turn.agent}`,
    kind: "internal",
    startMs: start,
    endMs: end,
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": turn.agent,
      "gen_ai.conversation.id": turn.sessionId,
      "gen_ai.provider.name": provider,
      "gen_ai.request.model": turn.model,
      ...tokens,
      "liveline.turn.id": turn.turnId,
      "liveline.turn.source": latency.source,
      "liveline.turn.outcome":
        ended === undefined ? "open" : ended.kind === "INTERRUPTED" ? "interrupted" : "complete",
      ...costAttributes(turn.cost),
      ...(failure === undefined ? {} : { "error.type": failure }),
    },
    events: [],
    status: failure === undefined ? { code: "unset" } : { code: "error", message: failure },
  };
  const firstByte = latency.firstByteMs;
  const chat: Span = {
    traceId,
    spanId: ids.spanId(),
    parentSpanId: root.spanId,
    name: `chat ${turn.model}`,
    kind: "client",
    startMs: start,
    endMs: end,
    attributes: {
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": provider,
      "gen_ai.request.model": turn.model,
      "gen_ai.conversation.id": turn.sessionId,
      ...tokens,
      ...(firstByte === null
        ? {}
        : {
            "gen_ai.response.time_to_first_chunk": firstByte / 1000,
            "liveline.first_byte_ms": firstByte,
          }),
    },
    events: firstByte === null ? [] : [{ name: "first_byte", atMs: start + firstByte }],
    status: { code: "unset" },
  };
  const calls = new Map(
    turn.rows
      .filter((r) => r.kind === "TOOL_CALL")
      .map((r) => [String(detailOf(r).callId), { at: r.ms, detail: detailOf(r) }]),
  );
  const tools = latency.tools.map((tool): Span => {
    const call = calls.get(tool.callId);
    const policy = turn.policies[tool.name];
    const at = call?.at ?? start;
    const runOn = call?.detail.runOn ?? policy?.runOn;
    return {
      traceId,
      spanId: ids.spanId(),
      parentSpanId: root.spanId,
      name: `execute_tool ${tool.name}`,
      kind: "internal",
      startMs: at,
      endMs: at + tool.ms,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool.name,
        "gen_ai.tool.call.id": tool.callId,
        "gen_ai.tool.type": "function",
        ...(typeof runOn === "string" ? { "liveline.tool.run_on": runOn } : {}),
        ...(policy === undefined
          ? {}
          : {
              "liveline.tool.follow_up": policy.followUp,
              "liveline.tool.timeout_ms": policy.timeoutMs,
              "liveline.tool.on_handoff": policy.onHandoff ?? "cancel",
            }),
        "liveline.tool.outcome": tool.outcome,
        ...(tool.outcome === "result" ? {} : { "error.type": tool.outcome }),
      },
      events: [],
      status:
        tool.outcome === "result" ? { code: "unset" } : { code: "error", message: tool.outcome },
    };
  });
  return [root, chat, ...tools];
}

function costAttributes(cost: Cost | null): Record<string, AttributeValue> {
  if (cost === null) return {};
  if (cost.status === "unpriced") return { "liveline.cost.status": "unpriced" };
  return { "liveline.cost.status": cost.status, "liveline.cost.usd": cost.usd };
}
