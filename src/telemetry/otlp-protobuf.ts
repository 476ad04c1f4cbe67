/**
 * Spans as an OTLP/HTTP request body: `ExportTraceServiceRequest` in protobuf's binary form
 * (OTLP's default encoding, `application/x-protobuf`), written by hand from
 * opentelemetry-proto's trace.proto, common.proto and resource.proto (field numbers below),
 * so that the Worker carries no protobuf runtime. The tests decode it with the
 * OpenTelemetry JS packages' own generated code.
 */
import type { AttributeValue, Span, SpanKind } from "./spans.js";

/** Protobuf wire types. */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

/** trace.proto `Span.SpanKind`. */
const KIND: Readonly<Record<SpanKind, number>> = { internal: 1, client: 3 };
/** trace.proto `Status.StatusCode`. */
const STATUS_ERROR = 2;

const utf8 = new TextEncoder();

/** A message under construction: its bytes, in pieces. */
class Message {
  private readonly parts: Uint8Array[] = [];
  private size = 0;

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private key(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire));
  }

  private varint(value: bigint): void {
    const out: number[] = [];
    let v = BigInt.asUintN(64, value);
    while (v > 0x7fn) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    this.push(Uint8Array.from(out));
  }

  uint(field: number, value: number | bigint): this {
    this.key(field, VARINT);
    this.varint(BigInt(value));
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.uint(field, value ? 1 : 0);
  }

  fixed64(field: number, value: bigint): this {
    this.key(field, FIXED64);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, value), true);
    this.push(bytes);
    return this;
  }

  double(field: number, value: number): this {
    this.key(field, FIXED64);
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    this.push(bytes);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.key(field, LENGTH_DELIMITED);
    this.varint(BigInt(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  message(field: number, value: Message): this {
    return this.bytes(field, value.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

/** common.proto `AnyValue`: a string (1), bool (2), int64 (3) or double (4). */
function anyValue(value: AttributeValue): Message {
  const m = new Message();
  if (typeof value === "string") return m.string(1, value);
  if (typeof value === "boolean") return m.bool(2, value);
  if (Number.isSafeInteger(value)) return m.uint(3, BigInt(value));
  return m.double(4, value);
}

/** common.proto `KeyValue` {key = 1, value = 2}, one per attribute. */
function keyValues(out: Message, field: number, attributes: Record<string, AttributeValue>) {
  for (const [key, value] of Object.entries(attributes))
    out.message(field, new Message().string(1, key).message(2, anyValue(value)));
}

function hex(digits: string): Uint8Array {
  const out = new Uint8Array(digits.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(digits.slice(i * 2, i * 2 + 2), 16);
  return out;
}

const nanos = (ms: number) => BigInt(Math.round(ms)) * 1_000_000n;

/** trace.proto `Span`. */
function span(s: Span): Message {
  const m = new Message().bytes(1, hex(s.traceId)).bytes(2, hex(s.spanId));
  if (s.parentSpanId !== null) m.bytes(4, hex(s.parentSpanId));
  m.string(5, s.name).uint(6, KIND[s.kind]).fixed64(7, nanos(s.startMs)).fixed64(8, nanos(s.endMs));
  keyValues(m, 9, s.attributes);
  for (const event of s.events)
    m.message(11, new Message().fixed64(1, nanos(event.atMs)).string(2, event.name));
  if (s.status.code === "error")
    m.message(15, new Message().string(2, s.status.message).uint(3, STATUS_ERROR));
  return m;
}

export interface ExportScope {
  /** resource.proto `Resource` attributes: `service.name` and the like. */
  resource: Record<string, AttributeValue>;
  /** The instrumentation scope: liveline and its version. */
  scope: { name: string; version: string };
}

/** An `ExportTraceServiceRequest` holding `spans`, all of one resource and one scope. */
export function exportTraceRequest(spans: readonly Span[], of: ExportScope): Uint8Array {
  const resource = new Message();
  keyValues(resource, 1, of.resource);
  const scopeSpans = new Message().message(
    1,
    new Message().string(1, of.scope.name).string(2, of.scope.version),
  );
  for (const s of spans) scopeSpans.message(2, span(s));
  const resourceSpans = new Message().message(1, resource).message(2, scopeSpans);
  return new Message().message(1, resourceSpans).finish();
}
