/**
 * Handoffs: an agent lists the agents it may hand the conversation to; the model is offered
 * one transfer tool per target (`transfer_to_billing`, with a reason), answered by liveline
 * itself. The session core then changes the agent once the old one has finished speaking.
 */
import { z } from "zod";
import {
  type AgentDefinition,
  defineTool,
  handoffToolName,
  type ToolDefinition,
} from "./define.js";

/** The transfer tools an agent offers, one per target it may hand off to. */
function handoffTools(agent: AgentDefinition): ToolDefinition[] {
  return (agent.handoffs ?? []).map((target) =>
    defineTool({
      name: handoffToolName(target),
      description: `Transfer the conversation to the ${target} agent, when the user needs what it does. Say briefly that you are transferring them.`,
      args: z.object({
        reason: z.string().default("").describe("why the user is transferred, in a few words"),
      }),
      runOn: "server",
      followUp: "speak",
      timeoutMs: 5_000,
      run: async ({ reason }) => ({ transferred_to: target, reason }),
    }),
  );
}

/** The agent with its transfer tools, as the model sees it. */
export function withHandoffTools(agent: AgentDefinition): AgentDefinition {
  const extra = handoffTools(agent);
  return extra.length === 0 ? agent : { ...agent, tools: [...agent.tools, ...extra] };
}
