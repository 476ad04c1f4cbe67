/**
 * Whether a tool of an agent's MCP servers may run again with its key, read from the
 * servers' definitions alone (their `policy`), by the name the model calls it: a restarted
 * session decides what to run again before its servers have listed their tools.
 */
import type { McpServerDefinition, McpToolPolicy } from "../agents/define.js";
import { mcpToolPrefix } from "../agents/define.js";
import { modelToolName } from "./tool-names.js";

/**
 * The timeout of a run again of the MCP tool `name` (a `<server>__<tool>` of `servers`), if
 * its server's policy, or that tool's, says it is idempotent; null if not; undefined when
 * `name` is no tool of these servers.
 */
export function mcpRerunTimeoutMs(
  servers: readonly McpServerDefinition[],
  name: string,
  defaultTimeoutMs: number,
): number | null | undefined {
  for (const server of servers) {
    if (!name.startsWith(mcpToolPrefix(server.name))) continue;
    const byTool = Object.entries(server.policy?.tools ?? {}).find(([tool]) => {
      const named = modelToolName(server.name, tool);
      return "name" in named && named.name === name;
    })?.[1];
    const policy: McpToolPolicy = { ...server.policy, ...byTool };
    return policy.idempotent === true ? (policy.timeoutMs ?? defaultTimeoutMs) : null;
  }
  return undefined;
}
