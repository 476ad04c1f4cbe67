import type { UpstreamOpen } from "./effects.js";
import type { StepContext } from "./step-context.js";
import { closeTurnOnUpstreamLoss } from "./turns.js";

/** Open the model connection if nothing is open or on its way. */
export function ensureUpstream(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (ctx.state.ended || up.phase === "connecting" || up.phase === "live") return;
  if (up.phase === "reconnecting" || up.phase === "failed") return;
  up.phase = "connecting";
  openWith(
    ctx,
    up.handle
      ? { mode: "resume", handle: up.handle }
      : ctx.state.turnCount > 0
        ? { mode: "rebuild" }
        : { mode: "fresh" },
  );
  ctx.record({ kind: "status", state: "connecting" });
}

function openWith(ctx: StepContext, open: UpstreamOpen): void {
  ctx.state.upstream.resumingWith = open.mode === "resume" ? open.handle : null;
  ctx.emit({ type: "open_upstream", open });
  ctx.trace("UPSTREAM_CONNECT", { mode: open.mode });
}

export function onSetupComplete(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (up.phase === "live") return;
  up.phase = "live";
  up.attempts = 0;
  up.goingAway = false;
  ctx.record({ kind: "status", state: "live" });
  ctx.trace("UPSTREAM_LIVE");
  const queued = ctx.state.outbox;
  ctx.state.outbox = [];
  ctx.state.outboxSince = null;
  for (const command of queued) ctx.emit({ type: "send_model", command });
  armIdle(ctx);
}

export function onResumptionUpdate(
  ctx: StepContext,
  handle: string | undefined,
  resumable: boolean,
): void {
  if (resumable && handle) ctx.state.upstream.handle = handle;
}

/** Nothing in flight: no generation, no running call, no turn waiting for the model. */
export function upstreamQuiet(ctx: StepContext): boolean {
  const s = ctx.state;
  const running = Object.values(s.calls).some((c) => c.status === "running");
  return s.generation === null && !running && s.expected.length === 0 && s.followUpWindow === null;
}

export function onGoAway(ctx: StepContext, timeLeftMs: number): void {
  const up = ctx.state.upstream;
  up.goingAway = true;
  ctx.trace("GO_AWAY", { timeLeftMs });
  // Move over by the margin before the deadline, but never sooner than half the time left:
  // a short notice still gives a running turn a chance to finish on the old connection.
  const margin = Math.min(ctx.state.config.goAwayMarginMs, timeLeftMs / 2);
  ctx.emit({ type: "set_timer", timer: "go_away", at: ctx.now + Math.max(0, timeLeftMs - margin) });
  maybeReconnectForGoAway(ctx);
}

/** After a goAway, move to a new connection as soon as nothing is in flight. */
export function maybeReconnectForGoAway(ctx: StepContext, force = false): void {
  const up = ctx.state.upstream;
  if (!up.goingAway || up.phase !== "live") return;
  if (!force && !upstreamQuiet(ctx)) return;
  up.goingAway = false;
  ctx.emit({ type: "clear_timer", timer: "go_away" });
  if (force) closeTurnOnUpstreamLoss(ctx);
  reconnectNow(ctx, "go_away");
}

function reconnectNow(ctx: StepContext, reason: string): void {
  const up = ctx.state.upstream;
  ctx.emit({ type: "close_upstream", reason });
  up.phase = "reconnecting";
  ctx.record({ kind: "status", state: "reconnecting" });
  ctx.trace("UPSTREAM_RECONNECT", { reason, resume: up.handle !== null });
  openWith(ctx, up.handle ? { mode: "resume", handle: up.handle } : { mode: "rebuild" });
}

/** 1007 / 1008: retrying the same request cannot help (DESIGN.md, close codes). */
export function isFatalClose(code: number): boolean {
  return code === 1007 || code === 1008;
}

export function onUpstreamClosed(
  ctx: StepContext,
  code: number,
  reason: string,
  fatal: boolean,
): void {
  const s = ctx.state;
  const up = s.upstream;
  ctx.trace("UPSTREAM_CLOSED", { code, reason });
  if (s.ended || up.phase === "failed") return;
  closeTurnOnUpstreamLoss(ctx);
  if (fatal) {
    if (up.resumingWith !== null) {
      // A rejected or expired handle: drop it and seed a fresh connection from the log.
      up.handle = null;
      up.resumingWith = null;
      scheduleReconnect(ctx);
      return;
    }
    fail(ctx, `the model closed the connection (${code}${reason ? `: ${reason}` : ""})`);
    return;
  }
  scheduleReconnect(ctx);
}

export function onUpstreamFailed(ctx: StepContext, message: string): void {
  ctx.trace("UPSTREAM_CLOSED", { code: 1006, reason: message });
  if (ctx.state.ended) return;
  closeTurnOnUpstreamLoss(ctx);
  scheduleReconnect(ctx);
}

function scheduleReconnect(ctx: StepContext): void {
  const { config, upstream: up } = ctx.state;
  if (up.attempts >= config.maxReconnectAttempts) {
    fail(ctx, "the model connection could not be re-established");
    return;
  }
  const delay = Math.min(config.reconnectMaxMs, config.reconnectBaseMs * 2 ** up.attempts);
  up.attempts++;
  if (up.phase !== "reconnecting") {
    up.phase = "reconnecting";
    ctx.record({ kind: "status", state: "reconnecting" });
  }
  ctx.emit({ type: "set_timer", timer: "reconnect", at: ctx.now + delay });
}

export function onReconnectTimer(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (up.phase !== "reconnecting" || ctx.state.ended) return;
  ctx.trace("UPSTREAM_RECONNECT", { attempt: up.attempts, resume: up.handle !== null });
  openWith(ctx, up.handle ? { mode: "resume", handle: up.handle } : { mode: "rebuild" });
}

function fail(ctx: StepContext, message: string): void {
  const up = ctx.state.upstream;
  up.phase = "failed";
  ctx.state.outbox = [];
  ctx.state.outboxSince = null;
  ctx.record({ kind: "error", code: "upstream_unavailable", message, fatal: true });
  ctx.record({ kind: "status", state: "ended" });
  ctx.state.ended = true;
}

/**
 * Note activity for the idle timer. The timer is set once and, when it fires early because
 * of later activity, set again for the rest: live audio (50 frames a second) costs no timer
 * churn.
 */
export function armIdle(ctx: StepContext): void {
  const s = ctx.state;
  s.lastActivityAt = ctx.now;
  const ms = s.config.idleTimeoutMs;
  if (ms > 0 && !s.idleArmed && s.upstream.phase === "live") {
    s.idleArmed = true;
    ctx.emit({ type: "set_timer", timer: "idle", at: ctx.now + ms });
  }
}

export function onIdleTimer(ctx: StepContext): void {
  const s = ctx.state;
  const up = s.upstream;
  s.idleArmed = false;
  if (up.phase !== "live") return;
  const due = s.lastActivityAt + s.config.idleTimeoutMs;
  if (ctx.now < due) {
    s.idleArmed = true;
    ctx.emit({ type: "set_timer", timer: "idle", at: due });
    return;
  }
  if (!upstreamQuiet(ctx) || s.turn !== null) {
    armIdle(ctx);
    return;
  }
  up.phase = "closed";
  ctx.emit({ type: "close_upstream", reason: "idle" });
  ctx.trace("UPSTREAM_IDLE_CLOSE");
}
