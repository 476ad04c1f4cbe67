import type { z } from "zod";
import type { ToolPayload } from "../vocabulary/events.js";
import type { ToolPolicy } from "../vocabulary/model.js";

/** What a server tool gets besides its arguments. */
export interface ToolContext {
  /** Fires when the call times out or the model cancels it. */
  signal: AbortSignal;
  sessionId: string;
}

/**
 * A tool, defined in code with a zod schema for its arguments (as the rest of the ecosystem
 * does). Server tools carry `run`; client tools are answered by the phone or browser.
 */
export interface ToolDefinition<Args extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  args: Args;
  runOn: "server" | "client";
  /** silent: a side effect, the model must not speak because of it; speak: an answer. */
  followUp: "silent" | "speak";
  timeoutMs?: number;
  run?: (args: z.infer<Args>, ctx: ToolContext) => Promise<ToolPayload>;
}

export interface AgentDefinition {
  name: string;
  systemInstruction: string;
  tools: readonly ToolDefinition[];
}

/** Keeps the schema's inferred argument type for `run` while storing tools uniformly. */
export function defineTool<Args extends z.ZodType>(tool: ToolDefinition<Args>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** The policy table the session core needs. */
export function toolPolicies(
  agent: AgentDefinition,
  defaultTimeoutMs: number,
): Record<string, ToolPolicy> {
  const policies: Record<string, ToolPolicy> = {};
  for (const tool of agent.tools) {
    policies[tool.name] = {
      name: tool.name,
      runOn: tool.runOn,
      followUp: tool.followUp,
      timeoutMs: tool.timeoutMs ?? defaultTimeoutMs,
    };
  }
  return policies;
}
