/**
 * An OTLP/HTTP trace receiver for the tests and the bench, built from the OpenTelemetry JS
 * packages: requests are decoded with the generated protobuf code of opentelemetry-proto
 * that `@opentelemetry/otlp-transformer` (0.52) ships, and checked as a collector checks them
 * (ids of the right length, a body that decodes). It keeps what it received and can play a
 * collector that hangs (`hang`: requests are held, never answered) or is down (`down`: the
 * port is closed; `up()` opens it again on the same port).
 */
import { createServer } from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { opentelemetry } = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const ExportTraceServiceRequest = opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportTraceServiceResponse =
  opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

const hex = (bytes) => Buffer.from(bytes ?? []).toString("hex");

/** An AnyValue as a plain value (its oneof `value` names the field that is set). */
function plainValue(any) {
  const which = any?.value;
  if (which === undefined) return undefined;
  return which === "intValue" ? Number(any.intValue) : any[which];
}

const attributesOf = (list) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plainValue(kv.value)]));

/** nanoseconds (a Long) → milliseconds. */
const ms = (nanos) => Number(BigInt(nanos.toString()) / 1_000_000n);

/** A received span, plain: ids in hex, times in epoch ms, attributes as an object. */
function plainSpan(span, resource) {
  return {
    traceId: hex(span.traceId),
    spanId: hex(span.spanId),
    parentSpanId: hex(span.parentSpanId),
    name: span.name,
    kind: span.kind,
    startMs: ms(span.startTimeUnixNano),
    endMs: ms(span.endTimeUnixNano),
    attributes: attributesOf(span.attributes),
    events: (span.events ?? []).map((e) => ({ name: e.name, atMs: ms(e.timeUnixNano) })),
    status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
    resource,
  };
}

export async function startOtlpReceiver() {
  const spans = [];
  const requests = [];
  const held = new Set();
  const listeners = new Set();
  let mode = "ok";
  let port = 0;

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      requests.push({ path: req.url, headers: req.headers, bytes: body.length });
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      if (req.headers["content-type"] !== "application/x-protobuf") {
        res.writeHead(415).end();
        return;
      }
      if (mode === "hang") {
        held.add(res);
        return;
      }
      let request;
      try {
        request = ExportTraceServiceRequest.decode(body);
      } catch (err) {
        res.writeHead(400).end(String(err));
        return;
      }
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributesOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? []) {
            // As the collector refuses them: ids of the wrong length.
            if (span.traceId.length !== 16 || span.spanId.length !== 8) {
              res.writeHead(400).end("invalid trace or span id length");
              return;
            }
            spans.push({ ...plainSpan(span, resource), scope: ss.scope?.name ?? "" });
          }
      }
      const answer = ExportTraceServiceResponse.encode({}).finish();
      res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end(Buffer.from(answer));
      for (const notify of listeners) notify();
    });
  });
  const listen = (at) =>
    new Promise((ok) => server.listen(at, "127.0.0.1", () => ok(server.address().port)));
  port = await listen(0);

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    /** Requests held open (mode `hang`). */
    get heldRequests() {
      return held.size;
    },
    /** `ok`, `hang` (hold every request) or `down` (the port closed). */
    async setMode(next) {
      if (next === "down" && mode !== "down") {
        for (const res of held) res.destroy();
        held.clear();
        server.closeAllConnections?.();
        await new Promise((ok) => server.close(ok));
      } else if (mode === "down" && next !== "down") {
        await listen(port);
      }
      if (next !== "hang") {
        for (const res of held) res.writeHead(503).end();
        held.clear();
      }
      mode = next;
    },
    /** Resolves once `predicate(spans)` holds. */
    waitFor(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return false;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(spans);
          return true;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the receiver did not get the spans awaited; it has ${spans.length}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    async stop() {
      for (const res of held) res.destroy();
      held.clear();
      if (mode !== "down") {
        server.closeAllConnections?.();
        await new Promise((ok) => server.close(ok));
      }
    },
  };
}
