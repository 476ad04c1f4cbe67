import type { TimerId } from "../core/effects.js";
import type { TimersPort } from "./interpreter-ports.js";

/**
 * The session's timers on one runtime timer. A turn sets and clears its watchdog, and often
 * a grace or tool timer: a runtime `setTimeout`/`clearTimeout` pair per turn costs more than
 * the rest of the turn's bookkeeping (profiled: ≈ 7 % of a text turn's worker time). Here a
 * timer is a deadline in a map; one runtime timer waits for the earliest. Clearing a timer
 * only forgets its deadline, and a runtime timer already waiting for an earlier moment is
 * kept: when it wakes with nothing due, it waits again for the next deadline. With no
 * deadline left, the runtime timer is cancelled: a pending timer would keep the object from
 * hibernating.
 */
export class DeadlineTimers implements TimersPort {
  private readonly due = new Map<TimerId, { at: number; fire: () => void }>();
  private handle: ReturnType<typeof setTimeout> | null = null;
  /** When the runtime timer wakes (Infinity: none is waiting). */
  private wakeAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  set(timer: TimerId, at: number, jitterMs: number, fire: () => void): void {
    const when = at + (jitterMs > 0 ? this.random() * jitterMs : 0);
    this.due.set(timer, { at: when, fire });
    if (when < this.wakeAt) this.schedule(when);
  }

  clear(timer: TimerId): void {
    if (!this.due.delete(timer) || this.due.size > 0) return;
    this.cancel();
  }

  /** Forgets every timer (the object is going away). */
  clearAll(): void {
    this.due.clear();
    this.cancel();
  }

  private schedule(at: number): void {
    if (this.handle !== null) clearTimeout(this.handle);
    this.wakeAt = at;
    this.handle = setTimeout(() => this.wake(), Math.max(0, at - this.clock()));
  }

  private cancel(): void {
    if (this.handle !== null) clearTimeout(this.handle);
    this.handle = null;
    this.wakeAt = Number.POSITIVE_INFINITY;
  }

  /** Fires what is due, in deadline order, then waits for the next deadline. */
  private wake(): void {
    this.handle = null;
    this.wakeAt = Number.POSITIVE_INFINITY;
    for (;;) {
      const now = this.clock();
      let next: [TimerId, { at: number; fire: () => void }] | null = null;
      for (const entry of this.due) if (next === null || entry[1].at < next[1].at) next = entry;
      if (next === null) return;
      if (next[1].at > now) {
        this.schedule(next[1].at);
        return;
      }
      // Deleted before it fires: the callback may set the same timer again.
      this.due.delete(next[0]);
      next[1].fire();
    }
  }
}
