/**
 * Writes one recording's parts to the RECORDINGS bucket (R2), within its budget: each part is
 * one object, put as soon as it is made, so a crash loses the part being made and no more.
 * Past the budget the recording stops (a `RECORDING_STOPPED` timeline row says why); the
 * session goes on. A restarted object counts what its earlier runs wrote (a listing of the
 * recording's parts) toward the same budget.
 */
import type { TraceKind } from "../core/effects.js";

export type RecordingKind = "audio" | "wire";

export interface RecordingPartsHost {
  bucket: R2Bucket;
  kind: RecordingKind;
  /** The recording's parts are the keys under this prefix. */
  prefix: string;
  maxBytes: number;
  /** A timeline row, written by the session's shell. */
  trace(kind: TraceKind, detail: Record<string, unknown>): void;
  /** A write that failed (never fatal: the part is lost, the recording goes on). */
  warn(message: string): void;
  /** Each request to the bucket (a subrequest, counted by the session). */
  track<T>(request: Promise<T>): Promise<T>;
}

export class RecordingParts {
  /** Bytes the recording holds (this run's writes, and earlier runs' once listed). */
  bytes = 0;
  stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly host: RecordingPartsHost) {}

  /**
   * Counts what earlier runs of the session's object wrote; a recording already past its
   * budget stays stopped (its row was written when it stopped).
   */
  async countEarlier(): Promise<void> {
    let cursor: string | undefined;
    let earlier = 0;
    do {
      const listed = await this.host.track(
        this.host.bucket.list({ prefix: this.host.prefix, cursor }),
      );
      for (const object of listed.objects) earlier += object.size;
      cursor = listed.truncated ? listed.cursor : undefined;
    } while (cursor !== undefined);
    this.bytes += earlier;
    if (this.bytes >= this.host.maxBytes) this.stopped = true;
  }

  /** Puts one part; false when the budget stopped the recording (the part is not written). */
  write(key: string, body: Uint8Array | string): boolean {
    if (this.stopped) return false;
    const size = typeof body === "string" ? new TextEncoder().encode(body).length : body.length;
    if (this.bytes + size > this.host.maxBytes) {
      this.stop("budget", { bytes: this.bytes, maxBytes: this.host.maxBytes });
      return false;
    }
    this.bytes += size;
    this.track(this.host.track(this.host.bucket.put(key, body)));
    return true;
  }

  /** Puts an object beside the parts (a manifest), outside the budget. */
  describe(key: string, json: unknown): void {
    this.track(
      this.host.track(
        this.host.bucket.put(key, JSON.stringify(json), {
          httpMetadata: { contentType: "application/json" },
        }),
      ),
    );
  }

  /** The recording stops here: nothing more is written, and the timeline says why. */
  stop(reason: string, detail: Record<string, unknown> = {}): void {
    if (this.stopped) return;
    this.stopped = true;
    this.host.trace("RECORDING_STOPPED", { recording: this.host.kind, reason, ...detail });
  }

  /** Every write so far has landed (or failed). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private track(put: Promise<unknown>): void {
    const done = put.then(
      () => undefined,
      (err: unknown) =>
        this.host.warn(
          `recording (${this.host.kind}): a part could not be written: ${err instanceof Error ? err.message : String(err)}`,
        ),
    );
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
  }
}
