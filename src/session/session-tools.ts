import { idempotencyKey, type PhoneCall, type ToolProgress } from "../agents/define.js";
import type { HandoffAnswer } from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import type { ToolOutcome } from "../vocabulary/log-events.js";
import type { SessionInterpreter } from "./interpreter.js";
import type { ToolsPort } from "./interpreter-ports.js";
import type { SessionMeta } from "./meta.js";
import type { SessionAgents } from "./session-agents.js";
import type { SubrequestMeter } from "./subrequests.js";
import { runServerTool } from "./tool-runner.js";

/** What a server tool reaches of its running session. */
export interface ToolsSession {
  readonly interpreter: SessionInterpreter;
  /** A tool's handoff, as the app's backend asks for one. */
  requestHandoff(to: string, reason: string): HandoffAnswer;
}

/**
 * The interpreter's tools port: the session's server tools, each run with its own abort and
 * its progress passed on (at most once a second); its MCP servers' tools waited for after a
 * restart.
 */
export class SessionTools implements ToolsPort {
  private readonly running = new Map<string, AbortController>();
  /** When each running call last reported progress (reports are passed on once a second). */
  private readonly progressAt = new Map<string, number>();

  constructor(
    private readonly session: ToolsSession,
    private readonly agents: SessionAgents,
    private readonly meta: SessionMeta,
    private readonly env: Env,
    private readonly subrequests: SubrequestMeter,
    /** The phone call this session is, as its tools see it (null: no call). */
    private readonly phoneCall: PhoneCall | null,
    /** A server tool's result is held to what a client's may carry (MAX_FRAME_BYTES). */
    private readonly maxResultBytes: number,
  ) {}

  async run(
    callId: string,
    name: string,
    args: Record<string, unknown>,
  ): Promise<ToolOutcome | null> {
    const controller = new AbortController();
    this.running.set(callId, controller);
    const speaking = this.session.interpreter.state.agent;
    // A call run again right after a restart may be an MCP server's whose tools are still
    // being listed: it waits for them (bounded, as a connection's setup does).
    if (!this.agents.toolsOf(speaking).some((t) => t.name === name))
      await (this.agents.mcp?.ready(speaking) ?? Promise.resolve());
    if (this.running.get(callId) !== controller) return null; // aborted meanwhile
    const agent = { ...this.agents.get(speaking), tools: this.agents.toolsOf(speaking) };
    const phoneCall = this.toolsPhoneCall();
    const outcome = await runServerTool(
      agent,
      name,
      args,
      {
        signal: controller.signal,
        sessionId: this.meta.sessionId,
        env: this.env,
        metadata: this.meta.metadata,
        agent: this.session.interpreter.state.agent,
        callId,
        idempotencyKey: idempotencyKey(this.meta.sessionId, callId),
        handoff: (to, reason = "") => {
          const answer = this.session.requestHandoff(to, reason);
          if ("problem" in answer) throw new Error(answer.problem);
        },
        phoneCall,
        call: phoneCall,
        progress: (update) => this.progress(callId, controller, update),
      },
      this.maxResultBytes,
    );
    this.progressAt.delete(callId);
    if (this.running.get(callId) !== controller) return null; // aborted: the core settled it
    this.running.delete(callId);
    return outcome;
  }

  abort(callId: string, reason: string): void {
    this.running.get(callId)?.abort(reason);
    this.running.delete(callId);
  }

  /** Every running tool stops (the session closed, or moved to another instance). */
  abortAll(reason: string): void {
    for (const c of this.running.values()) c.abort(reason);
    this.running.clear();
  }

  /** The phone call as tools see it: a transfer asked for is the carrier's REST call (counted). */
  private toolsPhoneCall(): PhoneCall | null {
    const call = this.phoneCall;
    if (call === null) return null;
    return {
      ...call,
      transfer: (number) => {
        call.transfer(number);
        this.subrequests.count("carrier");
      },
    };
  }

  /** A running call's progress, passed to the core at most once a second (the first at once). */
  private progress(callId: string, controller: AbortController, update: ToolProgress): void {
    if (this.running.get(callId) !== controller || !Number.isFinite(update.progress)) return;
    const now = Date.now();
    if (now - (this.progressAt.get(callId) ?? Number.NEGATIVE_INFINITY) < 1_000) return;
    this.progressAt.set(callId, now);
    // Near the subrequest budget a report waits for nothing: the call's outcome still comes.
    if (!this.subrequests.admit("progress")) return;
    this.session.interpreter.handleInput({
      type: "tool_progress",
      callId,
      progress: update.progress,
      ...(update.total === undefined ? {} : { total: update.total }),
      ...(typeof update.message === "string" ? { message: update.message.slice(0, 500) } : {}),
    });
  }
}
