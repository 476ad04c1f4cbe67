/** A session's caps as its shell and core use them: from its agent and its creator's ask. */
import { type AgentDefinition, type SessionLimitOptions, sessionLimits } from "../agents/define.js";
import type { SessionLimits } from "../core/core-config.js";
import type { SessionMeta } from "./meta.js";

/**
 * The agent's caps, lowered where the session asked. Creation refused a raise; an agent
 * changed since (a lower cap now) keeps its own where the session's is above it.
 */
export function capsOf(agent: AgentDefinition | undefined, meta: SessionMeta): SessionLimitOptions {
  if (agent === undefined) return meta.limits;
  const caps = sessionLimits(agent, meta.limits);
  return "refused" in caps ? (agent.limits ?? {}) : caps;
}

/** The caps the core measures itself (the cost cap is measured by the shell). */
export function coreLimits(
  caps: SessionLimitOptions,
  startedAt: number,
): SessionLimits | undefined {
  const { maxTurns, maxToolCalls, maxDurationSeconds } = caps;
  if (maxTurns === undefined && maxToolCalls === undefined && maxDurationSeconds === undefined)
    return undefined;
  return {
    startedAt,
    ...(maxTurns === undefined ? {} : { maxTurns }),
    ...(maxToolCalls === undefined ? {} : { maxToolCalls }),
    ...(maxDurationSeconds === undefined ? {} : { endsAt: startedAt + maxDurationSeconds * 1000 }),
  };
}
