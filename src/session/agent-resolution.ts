import { type AgentDefinition, resolveAgent } from "../agents/define.js";
import type { LivelineApp } from "../app-options.js";
import type { Env } from "../contracts/worker-env.js";
import type { SessionMeta } from "./meta.js";

/**
 * The agent a session runs, resolved from the app at every start of its object (an agent may
 * be a function of the session). An agent the app no longer has, or whose function throws,
 * leaves the session readable (history, timeline, DELETE) and refuses new connections with
 * the reason; it is said in the log too.
 */
export function agentOf(
  app: LivelineApp,
  meta: SessionMeta,
  env: Env,
): { agents: Map<string, AgentDefinition> } | { problem: string } {
  const resolve = (name: string): AgentDefinition => {
    const agent = app.agent(name);
    if (agent === undefined) throw new Error(`the agent "${name}" is no longer offered`);
    // The creator's options belong to the agent the session was created for.
    const options = name === meta.agent ? meta.options : {};
    return resolveAgent(agent, { ...meta, agent: name, options, env });
  };
  let first: AgentDefinition;
  try {
    first = resolve(meta.agent);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`liveline: session ${meta.sessionId}: agent "${meta.agent}": ${message}`);
    return { problem: `agent "${meta.agent}" cannot take this session: ${message}` };
  }
  // Every agent reachable by handoff, resolved for this session; one that cannot be (gone,
  // or its function refuses) is left out, and the transfers to it with it.
  const agents = new Map([[meta.agent, first]]);
  const queue = [...(first.handoffs ?? [])];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (agents.has(name)) continue;
    try {
      const agent = resolve(name);
      agents.set(name, agent);
      queue.push(...(agent.handoffs ?? []));
    } catch (err) {
      console.error(
        `liveline: session ${meta.sessionId}: handoff target "${name}": ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  for (const [name, agent] of agents)
    agents.set(name, { ...agent, handoffs: (agent.handoffs ?? []).filter((t) => agents.has(t)) });
  return { agents };
}
