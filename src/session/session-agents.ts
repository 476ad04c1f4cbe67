import type { AgentDefinition, ToolDefinition } from "../agents/define.js";
import { handoffToolName, NO_AGENT, toolPolicies } from "../agents/define.js";
import { withHandoffTools } from "../agents/handoff-tools.js";
import type { RelayArm } from "../app-options.js";
import { phoneCallOf } from "../carrier-registry.js";
import type { Env } from "../contracts/worker-env.js";
import type { CoreConfig } from "../core/core-config.js";
import { ALL_GUARDS, type Arrival, defaultConfig } from "../core/session-state.js";
import { mcpRerunTimeoutMs } from "../mcp/rerun-policy.js";
import { providerSession } from "../provider-registry.js";
import { unreachableModel } from "../providers/unreachable.js";
import type { ModelCapabilities, ToolPolicy } from "../vocabulary/model.js";
import type { AgentSpec, ModelRoute } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import type { SessionMeta } from "./meta.js";
import type { SessionMcp } from "./session-mcp.js";

/**
 * The session's agents (its first and every one it may reach by handoff) as their model
 * connections see them: each agent's provider session, made when it first opens a connection,
 * its tools (its own and its MCP servers'), and its setup.
 */
export class SessionAgents {
  /** Each agent as the model sees it: its own tools and one transfer tool per handoff target. */
  readonly byName: ReadonlyMap<string, AgentDefinition>;
  /** A provider session per agent, made when that agent first opens a connection. */
  private readonly providers = new Map<string, ModelRoute>();
  /** The agents' MCP servers and the tools they listed (null until the session is whole). */
  mcp: SessionMcp | null = null;

  constructor(
    agents: ReadonlyMap<string, AgentDefinition>,
    private readonly env: Env,
    private readonly meta: SessionMeta,
    /** The measurement arm this session runs as (the naive relay), or null: liveline itself. */
    private readonly arm: RelayArm | null,
    /** Why the session's model cannot be reached (see LiveSession.modelProblem), or null. */
    private readonly modelProblem: string | null,
    private readonly toolTimeoutMs: number,
  ) {
    this.byName = new Map([...agents].map(([name, a]) => [name, withHandoffTools(a)]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** An agent's definition (NO_AGENT for a name the session does not have). */
  get(name: string): AgentDefinition {
    return this.byName.get(name) ?? NO_AGENT;
  }

  /** The agent's next connection is set up anew (its MCP servers listed new tools). */
  forget(name: string): void {
    this.providers.delete(name);
  }

  /** The provider session of an agent of this session (its setup: instructions, tools, voice). */
  providerFor(name: string): ModelRoute {
    const cached = this.providers.get(name);
    if (cached) return cached;
    if (this.modelProblem !== null) {
      const unreachable = unreachableModel(this.modelProblem);
      this.providers.set(name, unreachable);
      return unreachable;
    }
    const provider = providerSession(this.meta.provider, {
      env: this.env,
      sessionId: this.meta.sessionId,
      agent: this.specOf(name),
      metadata: this.meta.metadata,
      // A phone call's audio is its carrier's (G.711 μ-law): a provider that takes it gets it
      // untouched.
      audio: phoneCallOf(this.env, this.meta.metadata)?.audio ?? "pcm16",
      wireArm: this.arm?.wire ?? null,
    });
    this.providers.set(name, provider);
    return provider;
  }

  /** An agent's way to its model, as the model link opens it (null: no such agent). */
  readonly targetOf = (name: string) =>
    this.byName.has(name) ? { target: this.providerFor(name), spec: this.specOf(name) } : null;

  /** An agent's tools: its own, and those its MCP servers listed. */
  toolsOf(name: string): readonly ToolDefinition[] {
    const own = this.get(name).tools;
    const listed = this.mcp?.toolsOf(name) ?? [];
    return listed.length === 0 ? own : [...own, ...listed];
  }

  /** An agent of this session as its model connection is set up for it. */
  specOf(name: string): AgentSpec {
    const agent = this.get(name);
    return {
      systemInstruction: agent.instructions,
      tools: this.toolsOf(name),
      voice: agent.voice,
      model: agent.model,
      language: agent.language,
    };
  }

  /**
   * The timeout of a run again of the tool `name` after a restart, if it may run again with
   * its key (its definition's `idempotent`, or its MCP server's policy), else null. Any agent
   * of the session's: the restart decides before it knows which one speaks.
   */
  rerunTimeoutMs(name: string): number | null {
    for (const agent of this.byName.values()) {
      const own = agent.tools.find((t) => t.name === name && t.runOn === "server");
      if (own !== undefined)
        return own.idempotent === true ? (own.timeoutMs ?? this.toolTimeoutMs) : null;
      const mcp = mcpRerunTimeoutMs(agent.mcp ?? [], name, this.toolTimeoutMs);
      if (mcp !== undefined) return mcp;
    }
    return null;
  }

  /** The core's config for a session of these agents (its limits are added by the caller). */
  coreConfig(config: Config): CoreConfig {
    const agentTools: Record<string, Record<string, ToolPolicy>> = {};
    const transfers: Record<string, string> = {};
    const arrival: Record<string, Arrival> = {};
    const links: Record<string, string> = {};
    const capabilities: Record<string, ModelCapabilities> = {};
    for (const [name, a] of this.byName) {
      agentTools[name] = toolPolicies(a, config.TOOL_TIMEOUT_MS);
      for (const target of a.handoffs ?? []) transfers[handoffToolName(target)] = target;
      arrival[name] = a.arrival ?? "announce";
      if (this.byName.size === 1) continue;
      const session = this.providerFor(name);
      if (session.sharedConnectionKey !== undefined) links[name] = session.sharedConnectionKey;
      capabilities[name] = session.capabilities;
    }
    return defaultConfig({
      sessionId: this.meta.sessionId,
      guards: this.arm?.guards ?? ALL_GUARDS,
      tools: agentTools[this.meta.agent] ?? {},
      agent: this.meta.agent,
      agentTools,
      handoffTools: transfers,
      agentArrival: arrival,
      agentLinks: links,
      agentCapabilities: capabilities,
      capabilities: this.providerFor(this.meta.agent).capabilities,
      idleTimeoutMs: config.IDLE_TIMEOUT_MS,
      modelTimeoutMs: config.MODEL_TIMEOUT_MS,
      utteranceQuietMs: config.UTTERANCE_QUIET_MS,
    });
  }
}
