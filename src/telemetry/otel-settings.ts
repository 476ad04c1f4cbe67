/**
 * The OpenTelemetry exporter's settings, named as the OTLP exporter specification names them:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (traces go to its `/v1/traces`) or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is), `OTEL_EXPORTER_OTLP_HEADERS` (a
 * secret: `key=value` pairs, comma-separated, values percent-encoded),
 * `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the only one liveline speaks) and
 * `OTEL_SERVICE_NAME` (default `liveline`). No endpoint: no traces. They are read with the
 * Worker's other vars (src/worker-config.ts).
 */
import { headerList } from "../var-schemas.js";
import { VERSION } from "../version.js";
import type { TraceExport } from "./exporter.js";

export interface OtelSettings {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
}

/** Where a session's traces go, or null: tracing is off. */
export function traceExport(settings: OtelSettings): TraceExport | null {
  const url =
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (settings.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`);
  if (url === undefined) return null;
  return {
    url,
    headers: headerList(settings.OTEL_EXPORTER_OTLP_HEADERS ?? ""),
    scope: {
      resource: {
        "service.name": settings.OTEL_SERVICE_NAME ?? "liveline",
        "service.version": VERSION,
        "telemetry.sdk.name": "liveline",
        "telemetry.sdk.language": "webjs",
      },
      scope: { name: "liveline", version: VERSION },
    },
  };
}
