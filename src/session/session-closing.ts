import type { SessionLimitOptions } from "../agents/define.js";
import type { CoreState } from "../core/session-state.js";
import {
  type ClosingCopy,
  type ClosingRecord,
  type EndReason,
  modelLiveMs,
} from "../metering/closing-record.js";
import { type Cost, costOf, emptyUsage, sumCosts } from "../metering/cost.js";
import { type PriceOverrides, priceFor } from "../metering/prices.js";
import type { UsageTotals } from "../vocabulary/model.js";
import type { ClosingRecordStore } from "./closing-record-store.js";
import type { HistoryStore } from "./history-store.js";
import type { SessionInterpreter } from "./interpreter.js";
import type { SessionMeta } from "./meta.js";
import type { SessionAlarm } from "./session-alarm.js";
import type { UsageStore } from "./usage-store.js";

/** What the session's close reaches of its running session. */
export interface ClosingSession {
  readonly interpreter: SessionInterpreter;
  /** The model the session's current agent asks for. */
  readonly model: string;
  /** The session's recordings end with it. */
  readonly recordings: { finish(): void };
}

/**
 * The session's end and its account: the closing record (kept in the session, copied to the
 * usage database), the object's alarm (a copy to retry, the duration cap), the cost cap, and
 * what the session cost.
 */
export class SessionClosing {
  /** Why the shell is ending the session (set before its end_session input), or null. */
  private endReason: EndReason | null = null;
  private costCapReached = false;

  constructor(
    private readonly session: ClosingSession,
    private readonly meta: SessionMeta,
    private readonly store: HistoryStore,
    private readonly usage: UsageStore,
    private readonly closings: ClosingRecordStore,
    private readonly alarm: SessionAlarm,
    /** The session's caps: its agent's, lowered where its creator asked. */
    private readonly caps: SessionLimitOptions,
    /** The app's prices, by model id, over the shipped ones. */
    private readonly prices: PriceOverrides,
    /** The session ended (the core ended it: a cap), as the object's meta must say. */
    private readonly ended: (by: EndReason) => void,
    private readonly startedAt: number,
  ) {}

  private get state(): CoreState {
    return this.session.interpreter.state;
  }

  /** The shell is about to end the session, for this reason (its closing record says it). */
  endBy(reason: EndReason): void {
    this.endReason ??= reason;
  }

  /**
   * On the object's start: an end the object did not live to record, or a record it did not
   * live to copy; and the duration cap's alarm.
   */
  started(): void {
    this.setLimitAlarm();
    const closing = this.closings.read();
    if (this.state.ended && closing?.record.state !== "ended") this.close("ended");
    else if (this.closings.pending()) queueMicrotask(() => void this.closings.copy());
  }

  /**
   * The session ended or its model connection idled: a closing record, kept in the session
   * and copied to the usage database (never waited on).
   */
  close(state: "idle" | "ended"): void {
    // An idle after the end (none is expected) would only replace the end's record.
    if (state === "idle" && this.state.ended) return;
    const limit = this.state.limit;
    const endedBy: EndReason | null =
      state === "idle"
        ? null
        : (this.endReason ?? this.meta.endedBy ?? (limit !== null ? "limit" : "deleted"));
    if (endedBy !== null) this.ended(endedBy);
    const now = Date.now();
    const { turns: _, ...usage } = this.usage.totals();
    const record: ClosingRecord = {
      sessionId: this.meta.sessionId,
      agent: this.meta.agent,
      provider: this.meta.provider,
      model: this.session.model,
      state,
      endedBy,
      limit:
        endedBy === "limit" && limit !== null ? { limit: limit.limit, value: limit.value } : null,
      createdAt: this.meta.createdAt,
      closedAt: new Date(now).toISOString(),
      durationMs: now - this.startedAt,
      modelLiveMs: modelLiveMs(this.store.statusTimes(), now),
      usage,
      cost: this.cost(),
      turns: this.state.turnCount,
      toolCalls: this.state.toolCallCount,
      version: this.closings.nextVersion(),
    };
    this.closings.keep(record);
    if (state === "ended") {
      this.setLimitAlarm();
      this.session.recordings.finish();
    }
  }

  /**
   * The object's alarm: a closing record's copy that failed, or never ran, is tried again, and
   * the duration cap is looked at (a session no client or model holds open ends at its cap).
   */
  async onAlarm(): Promise<void> {
    this.alarm.fired();
    if (!this.state.ended && this.state.config.limits?.endsAt !== undefined)
      this.session.interpreter.handleInput({ type: "timer_fired", timer: "limit" });
    this.setLimitAlarm();
    await this.closings.copy();
  }

  /** The alarm at the duration cap, while the session runs and has not reached a cap. */
  private setLimitAlarm(): void {
    const endsAt = this.state.config.limits?.endsAt;
    if (endsAt !== undefined && !this.state.ended && this.state.limit === null)
      this.alarm.set("limit", endsAt);
    else this.alarm.clear("limit");
  }

  /** The object's alarm for a phone call's stream (session/phone-reconnect.ts), or none. */
  callAlarm(at: number | null): void {
    if (at === null) this.alarm.clear("call");
    else this.alarm.set("call", at);
  }

  /** The latest closing record and whether the usage database holds it (null: none yet). */
  closingRecord(): { record: ClosingRecord; copy: ClosingCopy } | null {
    return this.closings.read();
  }

  /**
   * The cost cap, measured where the cost is known: after each usage report. The core hears
   * of it once, after the step that reported it (never from inside a step).
   */
  checkCostCap(): void {
    const max = this.caps.maxCostUsd;
    if (max === undefined || this.costCapReached) return;
    const cost = this.cost();
    if (cost.status === "unpriced" || cost.usd < max) return;
    this.costCapReached = true;
    queueMicrotask(() =>
      this.session.interpreter.handleInput({
        type: "limit_reached",
        limit: "cost",
        value: cost.usd,
      }),
    );
  }

  /** The price of a turn's usage, by the model that reported it (none said: the session's). */
  usageOf(turnId: string): { usage: UsageTotals; cost: Cost } | null {
    const row = this.usage.ofTurn(turnId);
    if (row === null) return null;
    const price = priceFor(row.model === "" ? this.session.model : row.model, this.prices);
    return { usage: row.usage, cost: costOf(row.usage, price) };
  }

  /** The session's cost so far, each turn priced by the model that reported its usage. */
  private cost(): Cost {
    const model = this.session.model;
    const priceOf = (m: string) => priceFor(m === "" ? model : m, this.prices);
    return sumCosts(
      this.usage.byTurn().map((row) => costOf(row.usage, priceOf(row.model))),
      costOf(emptyUsage(), priceOf(model)),
    );
  }
}
