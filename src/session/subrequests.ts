/**
 * The session's subrequests, counted: what its object asks of other services (a model
 * connection, a direct call's creation, an MCP request, a trace batch, a usage write, a
 * carrier's REST call). Cloudflare allows an invocation 10,000 of them on Workers Paid (50 on
 * Free), and does not say whether a WebSocket message starts a new count: the meter counts
 * from the object's start, never from a message, which can only overstate them.
 *
 * Near its budget (`SUBREQUEST_BUDGET`) the session sheds what can wait — trace batches and
 * tool progress reports — so that what cannot keeps its room: the model, the tools and the
 * session's record are never held back. A timeline row says when the budget is near, and
 * another when it is spent.
 *
 * It also counts the attempts waiting for their response headers (the six an invocation may
 * have at once): each is bounded by its deadline (src/outbound.ts).
 */
import type { DeferrableWork, SubrequestKind, SubrequestStats } from "../contracts/session-api.js";
import type { FetchLike } from "../outbound.js";

/** The share of the budget past which what can wait is shed. */
export const NEAR_SHARE = 0.8;
/** Cloudflare's per-invocation subrequests on Workers Paid (the default budget). */
export const WORKERS_PAID_SUBREQUESTS = 10_000;

export type BudgetRow = "SUBREQUESTS_NEAR" | "SUBREQUESTS_OVER";

export class SubrequestMeter {
  private total = 0;
  private readonly byKind: Record<SubrequestKind, number> = {
    model: 0,
    call: 0,
    mcp: 0,
    traces: 0,
    usage: 0,
    carrier: 0,
    recording: 0,
  };
  private readonly shed: Record<DeferrableWork, number> = { traces: 0, progress: 0 };
  private waiting = 0;
  private mostWaiting = 0;
  private said: BudgetRow | null = null;

  constructor(
    readonly budget: number,
    /** A timeline row: the budget is near, or spent (each said once per object start). */
    private readonly row: (kind: BudgetRow, detail: Record<string, unknown>) => void,
  ) {}

  /** One subrequest, for `kind`. */
  count(kind: SubrequestKind): void {
    this.total += 1;
    this.byKind[kind] += 1;
    if (this.total >= this.budget && this.said !== "SUBREQUESTS_OVER") {
      this.said = "SUBREQUESTS_OVER";
      this.row("SUBREQUESTS_OVER", { count: this.total, budget: this.budget });
    } else if (this.near() && this.said === null) {
      this.said = "SUBREQUESTS_NEAR";
      this.row("SUBREQUESTS_NEAR", { count: this.total, budget: this.budget });
    }
  }

  /** The budget is near: what can wait is shed. */
  near(): boolean {
    return this.total >= Math.ceil(this.budget * NEAR_SHARE);
  }

  /** Whether work that can wait goes ahead now; when it does not, it is counted as shed. */
  admit(work: DeferrableWork): boolean {
    if (!this.near()) return true;
    this.shed[work] += 1;
    return false;
  }

  /** `fetcher`, each request counted as `kind`, and waiting until its headers (or failure). */
  fetcher(kind: SubrequestKind, fetcher: FetchLike): FetchLike {
    return (input, init) => this.track(kind, fetcher(input, init));
  }

  /** An attempt under way (counted as `kind`): waiting until it settles. */
  track<T>(kind: SubrequestKind, attempt: Promise<T>): Promise<T> {
    this.count(kind);
    this.waiting += 1;
    this.mostWaiting = Math.max(this.mostWaiting, this.waiting);
    return attempt.finally(() => {
      this.waiting -= 1;
    });
  }

  stats(): SubrequestStats {
    return {
      budget: this.budget,
      total: this.total,
      byKind: { ...this.byKind },
      waiting: this.waiting,
      mostWaiting: this.mostWaiting,
      shed: { ...this.shed },
    };
  }
}
