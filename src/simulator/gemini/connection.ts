/** The connection's life: limits, goAway, resumption handles, model families. */
import type { Ctx } from "./state.js";

/** The session name a handle belongs to (handles are `session:connection:n`). */
export function handleSession(handle: string): string | null {
  const parts = handle.split(":");
  return parts.length === 3 && parts[0] !== "" ? parts[0]! : null;
}

export function onOpen(ctx: Ctx): void {
  const k = ctx.s.knobs;
  if (k.goAwayAfterMs > 0) ctx.schedule(k.goAwayAfterMs, { kind: "go_away" });
  if (k.dropAfterMs > 0) {
    ctx.schedule(k.dropAfterMs, {
      kind: "close",
      code: 1011,
      reason: "Internal error encountered.",
    });
  }
  if (k.maxConnectionMs > 0) {
    ctx.schedule(Math.max(0, k.maxConnectionMs - k.goAwayMs), { kind: "go_away" });
    ctx.schedule(k.maxConnectionMs, {
      kind: "close",
      code: 1011,
      reason: "Deadline expired before operation could complete.",
    });
  }
}

export function goAway(ctx: Ctx): void {
  const s = ctx.s;
  if (s.goingAway) return;
  s.goingAway = true;
  const ms = s.knobs.goAwayMs;
  ctx.send({ goAway: { timeLeft: `${Number((ms / 1000).toFixed(3))}s` } });
  ctx.schedule(ms, {
    kind: "close",
    code: 1011,
    reason: "Deadline expired before operation could complete.",
  });
}

/**
 * 3.x live models (3.1 flash live, 3.8 live) differ from 2.x in how they take input and when
 * they end a turn; anything else is served as 2.x.
 */
export function modelFamilyOf(model: string): "2.x" | "3.x" {
  const id = model.slice(model.lastIndexOf("/") + 1);
  return /^gemini-3\.\d+-(.*-)?live/.test(id) ? "3.x" : "2.x";
}

/** Gemini 3.1 flash live: every call blocks, no `turnComplete` until every call is answered. */
export function isSyncOnlyModel(model: string): boolean {
  return /^gemini-3\.1-(.*-)?live/.test(model.slice(model.lastIndexOf("/") + 1));
}

/** A handle when idle with nothing pending; `resumable: false` otherwise. */
export function sendResumption(ctx: Ctx): void {
  const s = ctx.s;
  if (!s.setup?.resumption) return;
  const pending = Object.values(s.calls).some((c) => !c.answered);
  if (s.gen !== null || pending || s.deferred.length > 0) {
    ctx.send({ sessionResumptionUpdate: { resumable: false } });
    return;
  }
  const handle = `${s.sessionName}:${s.connectionId}:${++s.handles}`;
  ctx.effects.push({
    type: "save_handle",
    handle,
    context: { ...structuredClone(s.context), owed: s.owed, savedAt: ctx.now },
  });
  ctx.send({ sessionResumptionUpdate: { newHandle: handle, resumable: true } });
}
