/**
 * Whether the object's event loop is behind: a timer set for every PERIOD_MS fires late by
 * as long as the work queued before it (every socket message the isolate has yet to take).
 * The lateness is the gateway's own queueing, never a client's network: a client whose
 * frames come in a burst after a stall leaves the timer on time.
 *
 * A loop flooded with socket messages may take every one of them before the timer (the
 * runtime does not promise the timer a turn), so the timer alone would say "behind" only once
 * the backlog is gone. Each chunk taken past the timer's due time says it too: the chunk is
 * proof the loop has not yet reached the timer.
 *
 * It runs only while audio comes in (an idle object keeps no timer, so it can leave memory).
 */

/** How often the timer is set while audio comes in (each costs the loop a timer event). */
const PERIOD_MS = 200;
/** Late by this much: behind (a chunk waits at least this long before the object takes it). */
const BEHIND_MS = 60;
/** On time to within this: caught up. */
const CAUGHT_UP_MS = 20;
/** No audio for this long: the timer stops. */
const QUIET_MS = 1000;

export class LoadProbe {
  /** The last timer's lateness said the loop is behind (until one is on time again). */
  behind = false;
  /** The greatest lateness seen (stats). */
  worstLateMs = 0;
  private running = false;
  private lastAudioAt = 0;
  /** When the running timer should fire. */
  private dueAt = 0;
  /** The last lateness the timer measured, and when. */
  private lastLate = { ms: 0, at: Number.NEGATIVE_INFINITY };

  constructor(private readonly clock: () => number = Date.now) {}

  /** Audio came in: the timer runs (again) if it had stopped. */
  noteAudio(): void {
    const now = this.clock();
    this.lastAudioAt = now;
    if (!this.running) {
      this.running = true;
      this.schedule();
      return;
    }
    // The timer is overdue and this chunk came first: behind (catching up is the timer's to say).
    const late = now - this.dueAt;
    if (late >= BEHIND_MS) {
      this.behind = true;
      this.worstLateMs = Math.max(this.worstLateMs, late);
    }
  }

  /**
   * How late the loop is now, or was within the last second: frames a client spread over a
   * second may reach the object bunched into less by as much (the rate limits allow for it).
   */
  lateMs(): number {
    const now = this.clock();
    const overdue = this.running ? now - this.dueAt : 0;
    const recent = now - this.lastLate.at <= 1000 ? this.lastLate.ms : 0;
    return Math.max(0, overdue, recent);
  }

  private schedule(): void {
    this.dueAt = this.clock() + PERIOD_MS;
    setTimeout(() => this.fired(), PERIOD_MS);
  }

  private fired(): void {
    const now = this.clock();
    const late = now - this.dueAt;
    this.worstLateMs = Math.max(this.worstLateMs, late);
    this.lastLate = { ms: late, at: now };
    if (late >= BEHIND_MS) this.behind = true;
    else if (late <= CAUGHT_UP_MS) this.behind = false;
    if (now - this.lastAudioAt >= QUIET_MS) {
      this.running = false;
      this.behind = false;
      return;
    }
    this.schedule();
  }
}
