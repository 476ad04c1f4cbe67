/**
 * A session's caps: maximum duration, cost, turns and tool calls. Reaching one closes the
 * session gracefully: nothing in flight is cut (an open turn ends as it would, a running call
 * gets its outcome); then the model is asked, once and unseen by clients, to say goodbye in a
 * turn of its own; once that turn ends, a durable `session_limit` and the session's end.
 * A tool call past a cap is answered with an error and never runs; lines after it are refused.
 */
import type { LimitName } from "../vocabulary/log-events.js";
import { sendInput } from "./follow-up.js";
import { callsRunning } from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { openTurn } from "./turn-state.js";
import { ensureUpstream } from "./upstream.js";

/** What the model is told (hidden, once): said as a nudge is. */
export function goodbyeInstruction(limit: LimitName): string {
  const what = {
    duration: "its maximum duration",
    cost: "its maximum cost",
    turns: "its maximum number of turns",
    tool_calls: "its maximum number of tool calls",
  }[limit];
  return `(This conversation has reached ${what} and ends now. Say a short, friendly goodbye to the user in one sentence. Do not call any tools.)`;
}

/** A cap was reached: noted once; the first one reached is the one the session ends by. */
export function reachLimit(ctx: StepContext, limit: LimitName, value: number): void {
  const s = ctx.state;
  if (s.ended || s.limit !== null) return;
  s.limit = { limit, value, phase: "pending", turnId: null, openTurnId: s.turn?.id ?? null };
  ctx.trace("LIMIT_REACHED", { limit, value });
}

/**
 * No call runs past the tool-call cap, nor, once a cap is reached, outside the turn that was
 * open then: that turn ends as it would, so its own calls run (refusing them would leave the
 * last question the cap allowed unanswered, its refusal read out instead).
 */
export function callRefusedByLimit(ctx: StepContext, turnId: string): string | null {
  const s = ctx.state;
  const max = s.config.limits?.maxToolCalls;
  if (max !== undefined && s.toolCallCount > max)
    return `refused: this session allows at most ${max} tool calls`;
  const limit = s.limit;
  if (limit === null) return null;
  if (limit.phase === "pending" && turnId === limit.openTurnId && s.config.guards.capSparesOpenTurn)
    return null;
  return "refused: this session has reached its limit and is closing";
}

/**
 * After every step: what the caps measure, and the close moving on once nothing is in
 * flight. "end": the goodbye is over (or cannot be had), `session_limit` is recorded, and
 * the caller ends the session.
 */
export function advanceLimits(ctx: StepContext): "end" | null {
  const s = ctx.state;
  if (s.ended) return null;
  if (s.limit === null && s.config.limits !== undefined) measure(ctx);
  const limit = s.limit;
  if (limit === null || callsRunning(s)) return null;
  if (limit.phase === "pending" && s.turn === null) {
    // No one to hear a goodbye (no client connected), or no model to say it: it ends now.
    if (s.upstream.phase === "failed" || s.clients.length === 0) return finish(ctx);
    const turn = openTurn(ctx, "limit", "");
    limit.phase = "goodbye";
    limit.turnId = turn.id;
    ctx.trace("LIMIT_GOODBYE", { turnId: turn.id, limit: limit.limit });
    ensureUpstream(ctx, true);
    sendInput(ctx, { type: "nudge", text: goodbyeInstruction(limit.limit) }, turn.id);
    return null;
  }
  if (limit.phase === "goodbye" && s.turn?.id !== limit.turnId) return finish(ctx);
  return null;
}

function measure(ctx: StepContext): void {
  const s = ctx.state;
  const limits = s.config.limits!;
  if (limits.endsAt !== undefined) {
    if (ctx.now >= limits.endsAt) {
      reachLimit(ctx, "duration", Math.round((ctx.now - limits.startedAt) / 100) / 10);
      return;
    }
    // The timer is set while the connection is live (a live object stays in memory); an
    // idle session is measured at its next input.
    if (!s.limitTimerSet && s.upstream.phase === "live") {
      s.limitTimerSet = true;
      ctx.emit({ type: "set_timer", timer: "limit", at: limits.endsAt });
    }
  }
  // The last turn allowed has opened: no line or speech opens another (each is refused), and
  // the goodbye waits until its answer has been delivered in full.
  const turns = s.turnCount - s.limitTurns;
  if (limits.maxTurns !== undefined && turns >= limits.maxTurns)
    reachLimit(ctx, "turns", Math.min(turns, limits.maxTurns));
  if (limits.maxToolCalls !== undefined && s.toolCallCount >= limits.maxToolCalls)
    reachLimit(ctx, "tool_calls", Math.min(s.toolCallCount, limits.maxToolCalls));
}

function finish(ctx: StepContext): "end" {
  const limit = ctx.state.limit!;
  ctx.record({ kind: "session_limit", limit: limit.limit, value: limit.value });
  return "end";
}
