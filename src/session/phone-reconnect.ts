/**
 * A phone call across the loss of its media stream. A deploy or a Workers runtime update
 * resets the session's object and closes every socket with it; a carrier that can (its
 * `reattach`) then asks, on its reconnect webhook, what the call does next, and liveline
 * connects it to the same session again. What that takes beyond the token:
 * - the call is greeted once: only its first stream says the caller is on the line;
 * - bounded in time: a stream that is gone (closed without a hang-up, or gone with the old
 *   instance) must come back within the grace, or the session ends (`stream_dropped`, in its
 *   closing record and `/v1/usage`) — even when nothing else wakes the object: while a stream
 *   is up the object's alarm stays set a grace ahead, so the instance that follows a reset
 *   wakes and looks;
 * - bounded in number: a call connected again more than MAX_RECONNECTS times within
 *   RECONNECT_WINDOW_MS ends (a loop of drops is not a conversation), and one whose stream
 *   never started (refused: a wrong token) is not connected again.
 * What it keeps (the streams started, the recent reconnects) is in its own table, a
 * component of its own: an earlier release never reads or migrates it.
 */
import { type Migration, migrate } from "./migrations.js";

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "call_streams: how often a call's stream started, and its recent reconnects",
    up(sql) {
      sql.exec(`CREATE TABLE call_streams (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        started INTEGER NOT NULL,
        reconnects TEXT NOT NULL
      )`);
    },
  },
];

/** Reconnects within RECONNECT_WINDOW_MS beyond this end the call. */
export const MAX_RECONNECTS = 5;
export const RECONNECT_WINDOW_MS = 60_000;

export interface CallReconnectHost {
  /** How long a lost stream has to come back (CALL_RECONNECT_GRACE_MS; 0: never). */
  readonly graceMs: number;
  /** A stream of the call is bound now. */
  bound(): boolean;
  /** The session has ended. */
  ended(): boolean;
  /** Ends the session (the call is over). */
  end(reason: "stream_dropped"): void;
  /** The object's alarm for the call at `at` (null: none). */
  alarm(at: number | null): void;
  /** A timeline row. */
  trace(kind: "CALL_RECONNECTED" | "CALL_STREAM_LOST", detail: Record<string, unknown>): void;
}

export class CallReconnect {
  private readonly sql: SqlStorage;
  /** When the lost stream's grace ends (null: no stream is lost, or none ever started). */
  private deadline: number | null = null;

  constructor(
    storage: DurableObjectStorage,
    private readonly host: CallReconnectHost,
  ) {
    this.sql = storage.sql;
    migrate(storage, "call_streams", MIGRATIONS);
  }

  /** A stream started (its start bound it): true for the call's first, which is greeted. */
  started(now: number): boolean {
    const { started, reconnects } = this.read();
    this.write(started + 1, reconnects);
    this.deadline = null;
    if (started > 0) this.host.trace("CALL_RECONNECTED", { streams: started + 1 });
    this.watch(now);
    return started === 0;
  }

  /**
   * The bound stream is gone without a hang-up: the carrier may connect the call again within
   * the grace (false: it may not — no grace — and the caller of this ends the call).
   */
  lost(now: number): boolean {
    if (this.host.graceMs <= 0) return false;
    this.deadline = now + this.host.graceMs;
    this.host.trace("CALL_STREAM_LOST", { graceMs: this.host.graceMs });
    this.watch(now);
    return true;
  }

  /**
   * The carrier asks to connect the call again: true if it may (the stream must then start
   * within the grace), false once the call has been connected again too often (it ends).
   */
  mayReconnect(now: number): boolean {
    const { started, reconnects } = this.read();
    // A call whose stream never started (refused: a wrong token) has no conversation to go
    // on with: the carrier's retry is hung up.
    if (started === 0) return false;
    const recent = reconnects.filter((t) => t > now - RECONNECT_WINDOW_MS);
    if (recent.length >= MAX_RECONNECTS) {
      this.host.trace("CALL_STREAM_LOST", { why: "reconnect_limit", reconnects: recent.length });
      this.host.end("stream_dropped");
      return false;
    }
    this.write(started, [...recent, now]);
    this.deadline = now + Math.max(this.host.graceMs, 1);
    this.watch(now);
    return true;
  }

  /**
   * The object (re)started holding an open call's session: a stream the call had went with
   * the old instance, so its grace starts now (nothing else may wake the object to end it).
   */
  resumed(now: number): void {
    if (this.host.ended() || this.read().started === 0 || this.host.bound()) return;
    if (this.host.graceMs <= 0) {
      this.host.end("stream_dropped");
      return;
    }
    this.deadline ??= now + this.host.graceMs;
    this.watch(now);
  }

  /** The object's alarm fired: the call is looked at again. */
  check(now: number): void {
    if (this.host.ended() || this.read().started === 0) return;
    if (!this.host.bound() && this.deadline === null) this.deadline = now + this.host.graceMs;
    if (!this.host.bound() && this.deadline !== null && now >= this.deadline) {
      this.host.trace("CALL_STREAM_LOST", { why: "grace_passed", graceMs: this.host.graceMs });
      this.host.end("stream_dropped");
      return;
    }
    this.watch(now);
  }

  /**
   * The alarm the call needs: a grace ahead while a stream is up (the heartbeat that wakes
   * the next instance after a reset), else at the lost stream's deadline.
   */
  private watch(now: number): void {
    if (this.host.ended() || this.host.graceMs <= 0) {
      this.host.alarm(null);
      return;
    }
    this.host.alarm(
      this.host.bound() || this.deadline === null ? now + this.host.graceMs : this.deadline,
    );
  }

  private read(): { started: number; reconnects: number[] } {
    const row = this.sql
      .exec<{ started: number; reconnects: string }>("SELECT started, reconnects FROM call_streams")
      .toArray()[0];
    if (row === undefined) return { started: 0, reconnects: [] };
    const reconnects = JSON.parse(row.reconnects) as unknown;
    return {
      started: row.started,
      reconnects: Array.isArray(reconnects) ? reconnects.filter((t) => typeof t === "number") : [],
    };
  }

  private write(started: number, reconnects: readonly number[]): void {
    this.sql.exec(
      "INSERT INTO call_streams (id, started, reconnects) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET started = excluded.started, reconnects = excluded.reconnects",
      started,
      JSON.stringify(reconnects),
    );
  }
}
