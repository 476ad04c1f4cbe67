/**
 * A deadline for an outbound request's response headers.
 *
 * Cloudflare lets one invocation have six connections waiting for their response headers at
 * once; a seventh waits in a queue until one of them hears back (Workers limits,
 * "Simultaneous open connections"; since the changelog of 2026-04-09 only connections still
 * waiting for headers count). An attempt whose endpoint accepts the connection and never
 * answers would hold one of the six for good, and what the session needs next (a trace batch,
 * an MCP call, the next model attempt) would queue behind it. So every attempt is aborted at
 * its deadline. Once the headers came the deadline is off: a body may then stream for as long
 * as it takes (an MCP tool's progress, an upgraded WebSocket), and only the caller's own
 * signal ends it.
 */

export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** The reason an attempt is aborted with at its deadline (a `TimeoutError`, as fetch names one). */
export function deadlineReason(ms: number, what = "no response headers"): Error {
  const error = new Error(`${what} within ${ms} ms`);
  error.name = "TimeoutError";
  return error;
}

/**
 * `fetcher` with a deadline of `ms` for the response headers of each request: past it the
 * request is aborted (its connection let go), and the promise rejects with a `TimeoutError`.
 * The caller's `init.signal` still aborts it, before or after the headers.
 */
export function withHeadersDeadline(fetcher: FetchLike, ms: number): FetchLike {
  if (!Number.isFinite(ms)) return fetcher;
  return async (input, init) => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(deadlineReason(ms)), ms);
    const caller = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const signal = caller ? AbortSignal.any([caller, deadline.signal]) : deadline.signal;
    try {
      return await fetcher(input, { ...init, signal });
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * A promise bounded by a deadline where the work itself cannot be aborted (a D1 query has no
 * signal): past `ms` the caller stops waiting (a `TimeoutError`) and the work is left to end on
 * its own.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(deadlineReason(ms, "no answer")), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
