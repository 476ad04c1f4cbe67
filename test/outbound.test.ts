/**
 * An outbound request's deadline for its headers (src/outbound.ts): an endpoint that takes the
 * connection and never answers is let go at the deadline, not held for good (one of the six
 * connections an invocation may have waiting for headers); once the headers came the body is
 * the caller's, however long it streams. The workerd test of the same against a real endpoint
 * is test/cloudflare-limits.workers.test.ts.
 */
import { describe, expect, it, vi } from "vitest";
import { type FetchLike, withHeadersDeadline, withinDeadline } from "../src/outbound.js";

/** A fetch whose answer comes when the test says, or never; it sees each request's signal. */
function endpoint() {
  const signals: AbortSignal[] = [];
  let answer: ((res: Response) => void) | null = null;
  const fetcher: FetchLike = (_input, init) =>
    new Promise((ok, fail) => {
      const signal = init?.signal;
      if (signal) {
        signals.push(signal);
        signal.addEventListener("abort", () => fail(signal.reason));
      }
      answer = ok;
    });
  return { fetcher, signals, answer: (res: Response) => answer?.(res) };
}

describe("withHeadersDeadline", () => {
  it("aborts a request whose headers have not come by the deadline (a TimeoutError); without it the request waits for good (the control)", async () => {
    vi.useFakeTimers();
    try {
      const hung = endpoint();
      const settled = withHeadersDeadline(
        hung.fetcher,
        1_000,
      )("https://model.example/ws").catch((err: Error) => err);
      await vi.advanceTimersByTimeAsync(999);
      expect(hung.signals[0]?.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(hung.signals[0]?.aborted).toBe(true);
      expect(await settled).toMatchObject({ name: "TimeoutError" });

      const unbounded = endpoint();
      let done = false;
      void withHeadersDeadline(
        unbounded.fetcher,
        Number.POSITIVE_INFINITY,
      )("https://x.example").then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(3_600_000);
      expect(done).toBe(false);
      expect(unbounded.signals[0]?.aborted ?? false).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("lets a body stream past the deadline once the headers came; the caller's own signal still ends it, before or after", async () => {
    vi.useFakeTimers();
    try {
      const slow = endpoint();
      const pending = withHeadersDeadline(slow.fetcher, 1_000)("https://mcp.example/");
      await vi.advanceTimersByTimeAsync(500);
      slow.answer(new Response("streaming…"));
      await pending;
      await vi.advanceTimersByTimeAsync(60_000);
      expect(slow.signals[0]?.aborted).toBe(false);

      const caller = new AbortController();
      const cut = endpoint();
      const cutting = withHeadersDeadline(cut.fetcher, 1_000)("https://mcp.example/", {
        signal: caller.signal,
      }).catch((err: unknown) => err);
      caller.abort(new Error("cancelled"));
      expect(cut.signals[0]?.aborted).toBe(true);
      expect(await cutting).toMatchObject({ message: "cancelled" });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("withinDeadline", () => {
  it("stops waiting for work that takes no signal (a D1 write) at its deadline, and leaves what is on time alone", async () => {
    vi.useFakeTimers();
    try {
      const never = withinDeadline(new Promise(() => {}), 10_000).catch((err: Error) => err.name);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await never).toBe("TimeoutError");
      const quick = withinDeadline(Promise.resolve("written"), 10_000);
      expect(await quick).toBe("written");
    } finally {
      vi.useRealTimers();
    }
  });
});
