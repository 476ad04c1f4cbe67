/**
 * A stand-in for Cloudflare's limit on simultaneous outbound connections, which local workerd
 * does not enforce: an invocation has at most six connections waiting for their response
 * headers, and a seventh waits in a queue until one of them hears back (Workers limits,
 * "Simultaneous open connections"; since the changelog of 2026-04-09 only connections still
 * waiting for headers count). Installed over the isolate's `fetch` for one test, and around a
 * D1 binding's statements.
 *
 * Assumed, not documented: the queue is first in, first out; a queued request whose signal
 * aborts leaves the queue; D1 counts (the documented list names fetch, KV, Cache, R2, Queues
 * and connect(), not D1: counting it can only make the test stricter).
 */
export class ConnectionGate {
  /** Requests waiting for their headers now, and the most at once. */
  waiting = 0;
  mostWaiting = 0;
  private readonly queue: { go: () => void; signal: AbortSignal | undefined }[] = [];
  /** The runtime's own fetch, for the test's control requests (never gated). */
  readonly bypass: typeof fetch = globalThis.fetch.bind(globalThis);

  constructor(readonly slots = 6) {}

  /** Requests queued behind the six. */
  get queued(): number {
    return this.queue.length;
  }

  /** A slot: at once when one is free, else when one frees; its release. */
  async admit(signal?: AbortSignal): Promise<() => void> {
    if (this.waiting >= this.slots) {
      await new Promise<void>((go, fail) => {
        const entry = { go, signal };
        this.queue.push(entry);
        signal?.addEventListener("abort", () => {
          const at = this.queue.indexOf(entry);
          if (at >= 0) this.queue.splice(at, 1);
          fail(signal.reason);
        });
      });
    }
    this.waiting += 1;
    this.mostWaiting = Math.max(this.mostWaiting, this.waiting);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.waiting -= 1;
      this.queue.shift()?.go();
    };
  }

  /** Gates the isolate's fetch (each request holds a slot until its headers or its failure). */
  install(): () => void {
    const original = globalThis.fetch;
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
      const release = await this.admit(signal ?? undefined);
      try {
        return await original(input, init);
      } finally {
        release();
      }
    }) as typeof fetch;
    return () => {
      globalThis.fetch = original;
    };
  }

  /** `db` with each statement's run holding a slot while it runs. */
  d1(db: D1Database): D1Database {
    const gate = this;
    return {
      prepare(query: string) {
        const statement = db.prepare(query);
        return {
          bind(...values: unknown[]) {
            const bound = statement.bind(...values);
            return {
              async run() {
                const release = await gate.admit();
                try {
                  return await bound.run();
                } finally {
                  release();
                }
              },
            };
          },
        };
      },
    } as unknown as D1Database;
  }
}
