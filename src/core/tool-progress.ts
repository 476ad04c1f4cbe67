/**
 * A long server call's progress (an MCP server's notifications, a tool's own word): clients
 * hear of each report, as an ephemeral frame; under a `progress: "say"` policy the model is
 * also asked, once per call and unseen by clients, to tell the user it is still working. It
 * is never a result: the call's one outcome still comes, and is answered as any other.
 */
import { sendInput } from "./follow-up.js";
import { capabilitiesOf, policyOf } from "./session-state.js";
import type { StepContext } from "./step-context.js";

/** What the model is told (hidden): said as a nudge is. */
export function stillWorkingInstruction(tool: string): string {
  return `(The tool ${tool} is still working. Tell the user in a few words that you are still on it. Do not call any tool, and do not make up its result.)`;
}

export function onToolProgress(
  ctx: StepContext,
  report: {
    callId: string;
    progress: number;
    total?: number | undefined;
    message?: string | undefined;
  },
): void {
  const s = ctx.state;
  const call = s.calls[report.callId];
  if (call === undefined || call.status !== "running" || call.runOn !== "server") return;
  for (const clientId of s.clients)
    ctx.emit({
      type: "send_ephemeral",
      clientId,
      frame: {
        type: "tool_progress",
        callId: call.id,
        name: call.name,
        progress: report.progress,
        ...(report.total === undefined ? {} : { total: report.total }),
        ...(report.message === undefined ? {} : { message: report.message }),
      },
    });
  if (policyOf(s, call.name)?.progress !== "say" || call.progressSaid === true) return;
  // Only while the model waits for the call with nothing else to say: a nudge then cuts no
  // answer. (A model that keeps its generation open for its calls, or has no turns, never
  // gets one: its users see the frames only.)
  if (
    s.turn?.id !== call.turnId ||
    s.generation !== null ||
    s.expected.length > 0 ||
    s.followUpWindow !== null ||
    s.upstream.phase !== "live" ||
    s.limit !== null ||
    capabilitiesOf(s).turnless === true
  )
    return;
  call.progressSaid = true;
  // Its answer is the next generation: results that come while it runs are owed their own.
  s.stillWorkingAsked = call.id;
  ctx.trace("TOOL_PROGRESS_SAID", { turnId: call.turnId, callId: call.id, name: call.name });
  sendInput(ctx, { type: "nudge", text: stillWorkingInstruction(call.name) }, call.turnId);
}
