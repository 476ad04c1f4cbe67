import type { AgentDefinition, ToolContext } from "../agents/define.js";
import type { ToolOutcome } from "../vocabulary/log-events.js";

/**
 * Runs a server tool: arguments are parsed with the tool's zod schema first (bad arguments
 * from the model become an error result the model can read); a throw becomes an error
 * result too. Timeouts and cancellation are the core's: they abort `ctx.signal`.
 */
export async function runServerTool(
  agent: AgentDefinition,
  name: string,
  args: unknown,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const tool = agent.tools.find((t) => t.name === name && t.runOn === "server");
  if (!tool?.run) return { error: `no server tool "${name}"` };
  const parsed = tool.args.safeParse(args);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "args"}: ${i.message}`);
    return { error: `invalid arguments for ${name}: ${issues.join("; ")}` };
  }
  try {
    return { result: await tool.run(parsed.data, ctx) };
  } catch (err) {
    return { error: `${name} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}
