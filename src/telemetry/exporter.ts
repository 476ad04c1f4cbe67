/**
 * Sends spans to an OTLP/HTTP collector (`POST <endpoint>`, protobuf), in batches, never on a
 * frame's path: its caller queues spans and flushes after its step. A collector that is down,
 * slow or refuses costs the session nothing: the batch is dropped and counted, with one
 * warning per minute at most.
 */
import { type ExportScope, exportTraceRequest } from "./otlp-protobuf.js";
import type { Span } from "./spans.js";

/** Spans waiting at most; past this the oldest are dropped (counted). */
const MAX_QUEUED = 2048;
/** Spans per request at most. */
const MAX_BATCH = 512;
/** A request that takes longer is given up (its spans dropped). */
const EXPORT_TIMEOUT_MS = 10_000;
const WARN_EVERY_MS = 60_000;

/** When this isolate last warned of dropped spans: one warning a minute for all its sessions. */
let lastWarnedAt = Number.NEGATIVE_INFINITY;

export interface TraceExport {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or the endpoint + `/v1/traces`. */
  url: string;
  /** From OTEL_EXPORTER_OTLP_HEADERS (a secret: never logged). */
  headers: Readonly<Record<string, string>>;
  scope: ExportScope;
}

/** What the exporter did: spans sent, spans dropped (a collector down, a full queue). */
export interface ExportCounts {
  exported: number;
  dropped: number;
}

export class OtlpExporter {
  readonly counts: ExportCounts = { exported: 0, dropped: 0 };
  private queue: Span[] = [];

  constructor(
    private readonly target: TraceExport,
    private readonly warn: (message: string) => void,
    private readonly send: (input: string, init: RequestInit) => Promise<Response> = (
      input,
      init,
    ) => fetch(input, init),
    /** Whether a batch may go now (false: it is dropped and counted, as for a collector down). */
    private readonly admit: () => boolean = () => true,
  ) {}

  add(spans: readonly Span[]): void {
    this.queue.push(...spans);
    const over = this.queue.length - MAX_QUEUED;
    if (over > 0) {
      this.queue = this.queue.slice(over);
      this.dropped(over, "the queue is full");
    }
  }

  /** Sends what is queued; resolves when every request has settled (never rejects). */
  async flush(): Promise<void> {
    const sending: Promise<void>[] = [];
    while (this.queue.length > 0) sending.push(this.post(this.queue.splice(0, MAX_BATCH)));
    await Promise.all(sending);
  }

  private async post(batch: Span[]): Promise<void> {
    if (!this.admit()) {
      this.dropped(batch.length, "the session's subrequests are near their budget");
      return;
    }
    let problem: string;
    try {
      const res = await this.send(this.target.url, {
        method: "POST",
        headers: { ...this.target.headers, "Content-Type": "application/x-protobuf" },
        body: exportTraceRequest(batch, this.target.scope),
        signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
      });
      // The body (a partial success, or why not) is read and let go.
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        this.counts.exported += batch.length;
        return;
      }
      problem = `the collector answered ${res.status}`;
    } catch (err) {
      problem = `the collector could not be reached (${err instanceof Error ? err.name : "error"})`;
    }
    this.dropped(batch.length, problem);
  }

  private dropped(n: number, why: string): void {
    this.counts.dropped += n;
    const now = Date.now();
    if (now - lastWarnedAt < WARN_EVERY_MS) return;
    lastWarnedAt = now;
    this.warn(
      `traces: ${n} spans dropped: ${why} (${this.counts.dropped} dropped, ${this.counts.exported} sent by this session so far)`,
    );
  }
}
