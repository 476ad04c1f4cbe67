/**
 * A session whose object restarted goes on where the old instance stopped (restore.ts planned
 * what carries over): calls that may run again with their key run again, a client's open
 * calls are answered, and the next model connection waits for all of them, so that its
 * context holds every call with its one outcome (never a call closed as cancelled whose real
 * result would then come as a second one). The carried turn is asked once that connection is
 * live (carry.ts), and only when a client is there to hear it: its answer's audio is never
 * stored, so a reply nobody hears would be a reply lost.
 */
import type { RerunCall } from "./inputs.js";
import { restoredCallsRunning } from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { ensureUpstream, openDeferredUpstream } from "./upstream.js";

/** The shell restored the session: the plan's runs start, the open calls' timeouts with them. */
export function onRestored(ctx: StepContext, rerun: readonly RerunCall[]): void {
  const s = ctx.state;
  for (const call of rerun) {
    if (s.calls[call.callId]?.status !== "running") continue;
    ctx.emit({ type: "set_timer", timer: `tool:${call.callId}`, at: ctx.now + call.timeoutMs });
    ctx.emit({ type: "run_tool", callId: call.callId, name: call.name, args: call.args });
    ctx.trace("TOOL_RERUN", { callId: call.callId, name: call.name });
  }
  for (const id of s.afterRestart?.calls ?? []) {
    const call = s.calls[id];
    if (call?.status !== "running" || call.runOn !== "client") continue;
    const timeoutMs = s.config.agentTools?.[s.agent]?.[call.name]?.timeoutMs;
    const at = ctx.now + (timeoutMs ?? s.config.tools[call.name]?.timeoutMs ?? 15_000);
    ctx.emit({ type: "set_timer", timer: `tool:${id}`, at });
    ctx.trace("TOOL_REOFFERED", { callId: id, name: call.name });
  }
  // Clients still attached (sockets on the Hibernation API outlive an eviction; the default
  // accept()ed ones do not): the turn goes on now.
  if (s.clients.length > 0 && s.turn?.carried === "pending") ensureUpstream(ctx);
}

/** After every step: once the carried calls have settled, the connection asked for opens. */
export function afterRestartStep(ctx: StepContext): void {
  const s = ctx.state;
  const waiting = s.afterRestart;
  if (waiting === null || restoredCallsRunning(s)) return;
  s.afterRestart = null;
  if (waiting.openWanted) openDeferredUpstream(ctx);
}
