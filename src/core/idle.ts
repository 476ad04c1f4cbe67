/**
 * Idle: a model connection nobody uses is closed (said as status `idle`, not as a loss), and
 * the next input opens it again (upstream.ts, ensureUpstream). Activity is noted here; the
 * idle timer is set once while a connection is live and re-arms itself for the rest. (A
 * connection lost while idle, with no client, is not reopened: upstream.ts, scheduleReconnect.)
 */
import { closeTurnOnUpstreamLoss } from "./carry.js";
import { forgetSentAudio } from "./sent-audio.js";
import { callsRunning, upstreamQuiet } from "./session-state.js";
import type { StepContext } from "./step-context.js";

/**
 * Note activity for the idle timer. The timer is set once and, when it fires early because
 * of later activity, set again for the rest: live audio (50 frames a second) costs no timer
 * churn.
 */
export function setIdle(ctx: StepContext): void {
  ctx.state.lastActivityAt = ctx.now;
  setIdleTimer(ctx);
}

/** The idle timer, set once while a connection is live (it re-arms itself for the rest). */
export function setIdleTimer(ctx: StepContext): void {
  const s = ctx.state;
  const ms = s.config.idleTimeoutMs;
  if (ms > 0 && !s.idleSet && s.upstream.phase === "live") {
    s.idleSet = true;
    ctx.emit({ type: "set_timer", timer: "idle", at: s.lastActivityAt + ms });
  }
}

/** The idle timer fired: the connection closes if nothing was used, nor owed, for the idle time. */
export function onIdleTimer(ctx: StepContext): void {
  const s = ctx.state;
  const up = s.upstream;
  s.idleSet = false;
  if (up.phase !== "live") return;
  const due = s.lastActivityAt + s.config.idleTimeoutMs;
  if (ctx.now < due) {
    s.idleSet = true;
    ctx.emit({ type: "set_timer", timer: "idle", at: due });
    return;
  }
  if (!upstreamQuiet(s) || s.turn !== null) {
    // What the model still owes belongs to turns that already ended (a timed-out turn's
    // slots, a reply cut off mid-stream) and it has said nothing for the whole idle time:
    // the connection is idle all the same. It goes as a lost one would, so that nothing it
    // owed is waited for by the next connection (else the next turn's answer would be taken
    // for a late one). Without this an unanswered turn kept the object in memory for ever.
    const silentSince = Math.max(s.lastModelSignAt, s.lastActivityAt);
    if (s.turn !== null || callsRunning(s) || ctx.now - silentSince < s.config.idleTimeoutMs) {
      setIdle(ctx);
      return;
    }
    ctx.trace("IDLE_OWED_DROPPED", {
      expected: s.expected.length,
      generation: s.generation !== null,
    });
    closeTurnOnUpstreamLoss(ctx);
  }
  up.phase = "closed";
  ctx.emit({ type: "close_upstream", reason: "idle" });
  // Nothing is carried over an idle close: audio is activity, and none came for the idle time.
  forgetSentAudio(ctx);
  // Said to clients: the model connection is closed on purpose, not lost (no alarm), and
  // the next input opens it again (connecting, live).
  ctx.record({ kind: "status", state: "idle" });
  ctx.trace("UPSTREAM_IDLE_CLOSE");
}
