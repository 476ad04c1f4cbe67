/**
 * liveline writes OTLP's protobuf by hand; OpenTelemetry's own generated code (from
 * opentelemetry-proto, shipped in @opentelemetry/otlp-transformer 0.52) reads it back here,
 * field by field.
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { exportTraceRequest } from "../../src/telemetry/otlp-protobuf.js";
import type { Span } from "../../src/telemetry/spans.js";

/** What these tests read of the generated code's decoded messages. */
interface AnyValue {
  stringValue?: string;
  intValue?: { toString(): string };
  doubleValue?: number;
  boolValue?: boolean;
}
interface DecodedSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array | null;
  name: string;
  kind: number;
  startTimeUnixNano: { toString(): string };
  endTimeUnixNano: { toString(): string };
  attributes: { key: string; value: AnyValue }[];
  events: { name: string; timeUnixNano: { toString(): string } }[];
  status: { code?: number; message?: string } | null;
}
interface DecodedRequest {
  resourceSpans: {
    resource: { attributes: { key: string }[] };
    scopeSpans: { scope: { name: string; version: string }; spans: DecodedSpan[] }[];
  }[];
}

const require = createRequire(import.meta.url);
const { opentelemetry } =
  require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
    opentelemetry: {
      proto: {
        collector: {
          trace: { v1: { ExportTraceServiceRequest: { decode(b: Uint8Array): DecodedRequest } } };
        };
      };
    };
  };
const Request = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const root: Span = {
  traceId: "0123456789abcdef0123456789abcdef",
  spanId: "0011223344556677",
  parentSpanId: null,
  name: "invoke_agent greeter",
  kind: "internal",
  startMs: 1_764_345_600_123,
  endMs: 1_764_345_601_456,
  attributes: {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.usage.input_tokens": 1234,
    "liveline.cost.usd": 0.000123,
    "liveline.flag": true,
    "liveline.negative": -5,
    "liveline.text": "héllo — 💬",
  },
  events: [{ name: "first_byte", atMs: 1_764_345_600_250 }],
  status: { code: "error", message: "model_timeout" },
};
const child: Span = {
  ...root,
  spanId: "8899aabbccddeeff",
  parentSpanId: root.spanId,
  name: "execute_tool lookup_faq",
  kind: "client",
  attributes: {},
  events: [],
  status: { code: "unset" },
};

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("OTLP protobuf, read by OpenTelemetry's generated code", () => {
  const decoded = Request.decode(
    exportTraceRequest([root, child], {
      resource: { "service.name": "liveline", "service.version": "0.1.0" },
      scope: { name: "liveline", version: "0.1.0" },
    }),
  );
  const resourceSpans = decoded.resourceSpans[0]!;
  const spans = resourceSpans.scopeSpans[0]!.spans;

  it("holds one resource, one scope and every span", () => {
    expect(decoded.resourceSpans).toHaveLength(1);
    expect(resourceSpans.resource.attributes.map((kv) => kv.key)).toEqual([
      "service.name",
      "service.version",
    ]);
    expect(resourceSpans.scopeSpans[0]!.scope).toMatchObject({
      name: "liveline",
      version: "0.1.0",
    });
    expect(spans).toHaveLength(2);
  });

  it("ids, parent, name, kind and times to the nanosecond", () => {
    const [r, c] = spans as [DecodedSpan, DecodedSpan];
    expect(hex(r.traceId)).toBe(root.traceId);
    expect(hex(r.spanId)).toBe(root.spanId);
    expect(r.parentSpanId?.length ?? 0).toBe(0);
    expect(hex(c.parentSpanId!)).toBe(root.spanId);
    expect(r.name).toBe("invoke_agent greeter");
    expect(r.kind).toBe(1); // SPAN_KIND_INTERNAL
    expect(c.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(BigInt(r.startTimeUnixNano.toString())).toBe(1_764_345_600_123_000_000n);
    expect(BigInt(r.endTimeUnixNano.toString())).toBe(1_764_345_601_456_000_000n);
  });

  it("attributes keep their types: string, int64 (negative too), double, bool", () => {
    const attrs = new Map(spans[0]!.attributes.map((kv) => [kv.key, kv.value]));
    expect(attrs.get("gen_ai.operation.name")?.stringValue).toBe("invoke_agent");
    expect(Number(attrs.get("gen_ai.usage.input_tokens")?.intValue?.toString())).toBe(1234);
    expect(Number(attrs.get("liveline.negative")?.intValue?.toString())).toBe(-5);
    expect(attrs.get("liveline.cost.usd")?.doubleValue).toBe(0.000123);
    expect(attrs.get("liveline.flag")?.boolValue).toBe(true);
    expect(attrs.get("liveline.text")?.stringValue).toBe("héllo — 💬");
  });

  it("events and an error status", () => {
    const [r, c] = spans as [DecodedSpan, DecodedSpan];
    expect(r.events.map((e) => e.name)).toEqual(["first_byte"]);
    expect(BigInt(r.events[0]!.timeUnixNano.toString())).toBe(1_764_345_600_250_000_000n);
    expect(r.status).toMatchObject({ code: 2, message: "model_timeout" });
    expect(c.status?.code ?? 0).toBe(0);
  });
});
