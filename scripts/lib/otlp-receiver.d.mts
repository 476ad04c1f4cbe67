/** Types of otlp-receiver.mjs, for the TypeScript tests that start it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  requests: { path: string; bytes: number }[];
  readonly heldRequests: number;
  setMode(mode: "ok" | "hang" | "down"): Promise<void>;
  waitFor(
    predicate: (spans: ReceivedSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

export function startOtlpReceiver(): Promise<OtlpReceiver>;
