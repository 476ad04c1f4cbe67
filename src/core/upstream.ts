/**
 * The model connection's lifecycle: opened (fresh, resumed with a handle, or rebuilt from the
 * log), live, moved on a go-away, lost and reopened with backoff, refused, given up on. What
 * it is used for lives elsewhere: handoff.ts replaces it for a new agent, idle.ts closes it
 * for want of use.
 */
import { closeTurnOnUpstreamLoss, resumeCarriedTurn } from "./carry.js";
import type { UpstreamOpen } from "./effects.js";
import { setLineWait } from "./follow-up.js";
import { setIdle, setIdleTimer } from "./idle.js";
import { carrySentAudio, forgetSentAudio, resendCarriedAudio } from "./sent-audio.js";
import { type CoreState, restoredCallsRunning, upstreamQuiet } from "./session-state.js";
import { restartSpeechTimeline } from "./speech-clock.js";
import type { StepContext } from "./step-context.js";

/**
 * Open the model connection if nothing is open or on its way. After liveline gave up on it,
 * only a client's new input (`byInput`) opens it again, with a fresh failure count.
 */
export function ensureUpstream(ctx: StepContext, byInput = false): void {
  const up = ctx.state.upstream;
  if (ctx.state.ended || up.phase === "connecting" || up.phase === "live") return;
  if (up.phase === "reconnecting") return;
  if (up.phase === "failed") {
    if (!byInput) return;
    up.attempts = 0;
  }
  up.phase = "connecting";
  // A fresh start (none held, or given up on): no earlier failure folds its `live`.
  up.flapping = false;
  const waiting = ctx.state.afterRestart;
  if (waiting !== null && restoredCallsRunning(ctx.state)) {
    // Calls carried over a restart are still running: the connection opens once they have
    // settled, its context holding each with its outcome (restart.ts).
    ctx.state.afterRestart = { ...waiting, openWanted: true };
    ctx.trace("UPSTREAM_WAITS", { calls: waiting.calls.length });
  } else openWith(ctx, nextOpen(ctx, true));
  ctx.record({ kind: "status", state: "connecting" });
}

/** The connection a restarted session waited to open (restart.ts), now that it may. */
export function openDeferredUpstream(ctx: StepContext): void {
  if (ctx.state.upstream.phase !== "connecting" || ctx.state.ended) return;
  openWith(ctx, nextOpen(ctx, true));
}

/**
 * Resume only with a handle that covers everything the model heard and said; a stale one
 * would silently drop the turns since it was issued. Otherwise seed from the log.
 */
function nextOpen(ctx: StepContext, first = false): UpstreamOpen {
  const up = ctx.state.upstream;
  if (up.handle !== null && !up.handleStale) return { mode: "resume", handle: up.handle };
  return first && ctx.state.turnCount === 0 ? { mode: "fresh" } : { mode: "rebuild" };
}

function openWith(ctx: StepContext, open: UpstreamOpen): void {
  const { upstream: up, config } = ctx.state;
  up.resumingWith = open.mode === "resume" ? open.handle : null;
  up.liveSince = null;
  up.served = false;
  up.recentOpens = [
    ...up.recentOpens.filter((t) => t > ctx.now - config.reconnectWindowMs),
    ctx.now,
  ];
  ctx.emit({ type: "open_upstream", open, agent: ctx.state.agent });
  ctx.emit({ type: "set_timer", timer: "connect", at: ctx.now + config.connectTimeoutMs });
  ctx.trace("UPSTREAM_CONNECT", { mode: open.mode });
}

export function onSetupComplete(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (up.phase === "live") return;
  // A connection that replaced one (a goAway, a drop) is not the user's doing: the idle time
  // goes on from their last input, else goAways every minute kept a session up for ever.
  const replaced = up.phase === "reconnecting";
  // A planned move (goAway, nothing in flight) from a connection shown `live`: the status
  // never stopped being live, so none is written (see maybeReconnectForGoAway).
  const quietMove = replaced && up.goingAway;
  up.phase = "live";
  // The failure count starts over only once the connection has stayed up (see onLost).
  up.liveSince = ctx.now;
  ctx.state.speechClock = restartSpeechTimeline(ctx.state.speechClock);
  // Nothing of a reply the last connection was giving comes on this one.
  ctx.state.replyOpen = false;
  ctx.state.replyAsked = false;
  up.goingAway = false;
  up.goAwayDeadline = null;
  ctx.emit({ type: "clear_timer", timer: "connect" });
  // Live again after two or more failures in a row, or after a connection that failed without
  // proving itself (scheduleReconnect): said once it has proven itself, so that a loop of
  // accept-then-close is not logged one connection at a time.
  up.flapping = up.flapping || up.attempts >= 2;
  if (!up.flapping && !quietMove) ctx.record({ kind: "status", state: "live" });
  ctx.trace("UPSTREAM_LIVE");
  // What the last connection took along unheard goes first: it was sent before the outbox.
  resendCarriedAudio(ctx);
  for (const command of ctx.takeOutbox()) ctx.sendModel(command);
  // Lines held for the answer to speech that waited with them: their wait starts now.
  setLineWait(ctx);
  resumeCarriedTurn(ctx);
  if (replaced) setIdleTimer(ctx);
  else setIdle(ctx);
}

export function onResumptionUpdate(
  ctx: StepContext,
  handle: string | undefined,
  resumable: boolean,
): void {
  const up = ctx.state.upstream;
  if (resumable && handle) {
    up.handle = handle;
    up.handleStale = false;
    // A move after goAway waits for this: a handle that covers the turn just ended.
    maybeReconnectForGoAway(ctx);
  } else if (!resumable) {
    up.handleStale = true;
  }
}

export function onGoAway(ctx: StepContext, timeLeftMs: number): void {
  const up = ctx.state.upstream;
  up.goingAway = true;
  ctx.trace("GO_AWAY", { timeLeftMs });
  // Move over by the margin before the deadline, but never sooner than half the time left:
  // a short notice still gives a running turn a chance to finish on the old connection.
  const margin = Math.min(ctx.state.config.goAwayMarginMs, timeLeftMs / 2);
  up.goAwayDeadline = ctx.now + timeLeftMs;
  ctx.emit({ type: "set_timer", timer: "go_away", at: ctx.now + Math.max(0, timeLeftMs - margin) });
  maybeReconnectForGoAway(ctx);
}

/** After a goAway, move to a new connection as soon as nothing is in flight. */
export function maybeReconnectForGoAway(ctx: StepContext, force = false): void {
  const up = ctx.state.upstream;
  if (!up.goingAway || up.phase !== "live") return;
  if (!force && !upstreamQuiet(ctx.state)) return;
  // With resumption in use, wait (bounded by the go_away timer) for the handle that follows
  // the turn's end: moving on the turn's end itself would resume without that turn.
  if (!force && up.handle !== null && up.handleStale) return;
  const deadline = up.goAwayDeadline ?? ctx.now;
  const inFlight = ctx.state.generation?.hasContent === true || ctx.state.speechDetected;
  if (force && inFlight && ctx.now < deadline) {
    // A reply is being spoken, or speech waits for its answer: moving now would cut it; the
    // service may let it finish. Wait (at most until the deadline, where the service cuts).
    ctx.emit({ type: "set_timer", timer: "go_away", at: deadline });
    return;
  }
  // A planned move with nothing in flight, from a connection whose `live` was said, is no
  // loss: it writes no status (a model that sends goAway every few seconds would otherwise
  // fill the log with pairs). `goingAway` stays set while the next connection opens: if it
  // fails, scheduleReconnect says `reconnecting` then. A forced move may cut or carry a turn:
  // its `reconnecting`, `live` are said.
  const quiet = !up.flapping && upstreamQuiet(ctx.state);
  up.goingAway = quiet;
  up.goAwayDeadline = null;
  ctx.emit({ type: "clear_timer", timer: "go_away" });
  if (force) closeTurnOnUpstreamLoss(ctx, true);
  reconnectNow(ctx, "go_away", quiet);
}

export function reconnectNow(ctx: StepContext, reason: string, quiet = false): void {
  const up = ctx.state.upstream;
  ctx.emit({ type: "close_upstream", reason });
  carrySentAudio(ctx);
  up.phase = "reconnecting";
  // A flapping connection's `live` was never said: its `reconnecting` still stands.
  if (!quiet && !up.flapping) ctx.record({ kind: "status", state: "reconnecting" });
  const open = nextOpen(ctx);
  ctx.trace("UPSTREAM_RECONNECT", { reason, resume: open.mode === "resume" });
  openWith(ctx, open);
}

export function onUpstreamClosed(
  ctx: StepContext,
  code: number,
  reason: string,
  fatal: boolean,
  expired = false,
): void {
  const s = ctx.state;
  const up = s.upstream;
  ctx.trace("UPSTREAM_CLOSED", { code, reason });
  if (s.ended || up.phase === "failed" || up.phase === "closed") return;
  ctx.emit({ type: "clear_timer", timer: "connect" });
  if (expired && up.phase === "live") {
    onExpired(ctx);
    return;
  }
  loseConnection(ctx);
  if (fatal) {
    if (up.resumingWith !== null) {
      // A rejected or expired handle: drop it and seed a fresh connection from the log. An
      // expected fallback, not a failure of the model (it does not count towards giving up,
      // nor make the next connection look like a flapping one).
      up.handle = null;
      up.resumingWith = null;
      scheduleReconnect(ctx, false);
      return;
    }
    fail(ctx, `the model closed the connection (${code}${reason ? `: ${reason}` : ""})`);
    return;
  }
  scheduleReconnect(ctx);
}

/**
 * The service ended its session for its age (GPT-Live's two hours), nothing lost. With
 * nothing in flight it is not replaced now (a new one bills by the minute, and nobody is
 * speaking): the connection is idle, and the next input opens one, seeded from the log. With
 * a turn or speech in flight, it is carried to a new one at once.
 */
function onExpired(ctx: StepContext): void {
  const s = ctx.state;
  // The service closes the socket: its close is not news (the link reports it no more).
  ctx.emit({ type: "close_upstream", reason: "expired" });
  if (s.turn === null && upstreamQuiet(s) && s.heldLines.length === 0) {
    s.upstream.phase = "closed";
    forgetSentAudio(ctx);
    ctx.record({ kind: "status", state: "idle" });
    ctx.trace("UPSTREAM_EXPIRED", { replaced: false });
    return;
  }
  ctx.trace("UPSTREAM_EXPIRED", { replaced: true });
  closeTurnOnUpstreamLoss(ctx, true);
  reconnectNow(ctx, "expired");
}

export function onUpstreamFailed(ctx: StepContext, message: string, refused = false): void {
  ctx.trace(refused ? "UPSTREAM_REFUSED" : "UPSTREAM_CLOSED", { code: 1006, reason: message });
  const up = ctx.state.upstream;
  if (ctx.state.ended || up.phase === "failed" || up.phase === "closed") return;
  ctx.emit({ type: "clear_timer", timer: "connect" });
  loseConnection(ctx);
  if (refused) {
    refuse(ctx, message);
    return;
  }
  scheduleReconnect(ctx);
}

/**
 * The service refused the connection (a bad key, an unknown model): retrying cannot help, so
 * nothing retries; the clients are told why, in the service's words, and the session goes on
 * (a client's next input tries again, e.g. once the operator fixed the key).
 */
function refuse(ctx: StepContext, message: string): void {
  // The error belongs to the turn it ends (said first, with its turnId); then the status says
  // no connection is held (`idle`: the next input opens one), so no client shows `connecting`.
  ctx.recordError(
    "upstream_refused",
    `${message}; send new input to try again`,
    ctx.state.turn?.id,
  );
  closeTurnOnUpstreamLoss(ctx);
  ctx.state.upstream.phase = "failed";
  ctx.record({ kind: "status", state: "idle" });
}

/**
 * A live connection lost takes its turn with it (the model may have heard part of it). One
 * that never became live heard nothing: the input waiting for it stays queued, in order,
 * and goes to the next connection (a line typed during a reconnect whose resumption handle
 * is refused is answered after the rebuild, not ended as lost).
 */
function loseConnection(ctx: StepContext): void {
  if (ctx.state.upstream.phase === "live") closeTurnOnUpstreamLoss(ctx, true);
}

/**
 * On every model event: once a flapping connection has stayed up healthyAfterMs, or served
 * a turn, it has proven itself, and its `live` is logged (checked lazily: no timer).
 */
export function noteUpstreamHealth(ctx: StepContext, servedATurn: boolean): void {
  const up = ctx.state.upstream;
  if (up.phase !== "live" || up.liveSince === null) return;
  // A connection that ended a model turn works (the answers reach the client): saying
  // `reconnecting` meanwhile would be untrue, however soon it drops.
  if (servedATurn) up.served = true;
  if (!up.flapping) return;
  if (!up.served && ctx.now - up.liveSince < ctx.state.config.healthyAfterMs) return;
  up.attempts = 0;
  up.flapping = false;
  ctx.record({ kind: "status", state: "live" });
}

/** No setup_complete in time: a silent failure, handled like any other. */
export function onConnectTimer(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (ctx.state.ended || (up.phase !== "connecting" && up.phase !== "reconnecting")) return;
  ctx.emit({ type: "close_upstream", reason: "no setup_complete in time" });
  onUpstreamFailed(ctx, "the model connection stayed silent after setup");
}

/**
 * One policy for every failure: a connection that stayed up long enough was healthy (the
 * failure count starts over); else the count grows. With no client connected and the session
 * idle, nothing retries. Past the failures in a row, or the open budget in its window,
 * liveline gives up visibly; otherwise it retries after an exponential backoff with jitter.
 */
function scheduleReconnect(ctx: StepContext, failure = true): void {
  const s = ctx.state;
  const { config, upstream: up } = s;
  const proven =
    up.liveSince !== null && (up.served || ctx.now - up.liveSince >= config.healthyAfterMs);
  if (proven) up.attempts = 0;
  up.liveSince = null;
  // A flapping connection's `live` was never logged: its `reconnecting` still stands.
  const logged = up.flapping;
  up.flapping = false;
  // A planned move whose new connection failed: its `reconnecting` was not said yet.
  const quietMove = up.goingAway && up.phase === "reconnecting";
  up.goingAway = false;
  const idle =
    s.clients.length === 0 &&
    config.idleTimeoutMs > 0 &&
    ctx.now - s.lastActivityAt >= config.idleTimeoutMs;
  if (idle) {
    // Nobody to serve: the next client input opens a connection again.
    closeTurnOnUpstreamLoss(ctx);
    up.phase = "closed";
    ctx.record({ kind: "status", state: "idle" });
    ctx.trace("UPSTREAM_IDLE_CLOSE");
    return;
  }
  const opens = up.recentOpens.filter((t) => t > ctx.now - config.reconnectWindowMs).length;
  if (up.attempts >= config.maxReconnectAttempts || opens >= config.reconnectBudget) {
    giveUp(ctx, up.attempts, opens);
    return;
  }
  const delay = Math.min(config.reconnectMaxMs, config.reconnectBaseMs * 2 ** up.attempts);
  if (failure) up.attempts++;
  if (up.phase !== "reconnecting" || (quietMove && failure)) {
    up.phase = "reconnecting";
    if (!logged) ctx.record({ kind: "status", state: "reconnecting" });
  } else if (quietMove) {
    // A refused resumption handle on a planned move: the expected fallback, still quiet.
    up.goingAway = true;
  }
  // A connection that failed without serving (no turn ended, not up healthyAfterMs) folds the
  // next one: its `live` waits until it proves itself (docs/PROTOCOL-REFERENCE.md, "status after drops").
  up.flapping = failure && !proven;
  ctx.emit({ type: "set_timer", timer: "reconnect", at: ctx.now + delay, jitterMs: delay / 2 });
}

/** Stop retrying; say so durably; the session goes on and a client's input tries again. */
function giveUp(ctx: StepContext, failures: number, opens: number): void {
  const s = ctx.state;
  // Input still queued will not be answered: its turn ends, said so.
  closeTurnOnUpstreamLoss(ctx);
  s.upstream.phase = "failed";
  ctx.trace("UPSTREAM_GAVE_UP", { failures, opens });
  ctx.recordError(
    "upstream_unavailable",
    `${
      failures > 0
        ? `the model connection failed ${failures} times in a row`
        : "the model connection kept being replaced (refused resumption handles, or drops)"
    } (${opens} opens in the last ${s.config.reconnectWindowMs / 1000} s); send new input to try again`,
  );
  // No connection is held (as after a refusal): a UI would otherwise show reconnecting.
  ctx.record({ kind: "status", state: "idle" });
}

export function onReconnectTimer(ctx: StepContext): void {
  const up = ctx.state.upstream;
  if (up.phase !== "reconnecting" || ctx.state.ended) return;
  const open = nextOpen(ctx);
  ctx.trace("UPSTREAM_RECONNECT", { attempt: up.attempts, resume: open.mode === "resume" });
  openWith(ctx, open);
}

function fail(ctx: StepContext, message: string): void {
  const up = ctx.state.upstream;
  closeTurnOnUpstreamLoss(ctx);
  up.phase = "failed";
  ctx.record({ kind: "error", code: "upstream_unavailable", message, fatal: true });
  ctx.record({ kind: "status", state: "ended" });
  ctx.state.ended = true;
}

/**
 * May this chunk of the user's audio open a connection? Not while one the service refused,
 * or gave up on, was tried within reconnectMaxMs: a microphone sends 50 chunks a second,
 * and each would try again (a phone with a bad key hammered the service and wrote three
 * log rows per chunk). The chunks in between go nowhere, as with no connection at all.
 */
export function audioMayOpen(s: CoreState, now: number): boolean {
  const up = s.upstream;
  if (up.phase !== "failed") return true;
  const lastOpen = up.recentOpens.at(-1);
  return lastOpen === undefined || now - lastOpen >= s.config.reconnectMaxMs;
}
