import type { AgentDefinition, ToolContext } from "../agents/define.js";
import { jsonLimitProblem } from "../json-limits.js";
import type { ToolOutcome } from "../vocabulary/log-events.js";

/** An error's words are kept to this many characters (the model reads them, the log keeps them). */
const MAX_ERROR_CHARS = 2_000;

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
  /** A result is held to what a client's `tool_result` may carry (MAX_FRAME_BYTES). */
  maxResultBytes = 262_144,
): Promise<ToolOutcome> {
  const outcome = await runOnce(agent, name, args, ctx);
  if (outcome.error !== undefined)
    return {
      error:
        outcome.error.length > MAX_ERROR_CHARS
          ? `${outcome.error.slice(0, MAX_ERROR_CHARS)}…`
          : outcome.error,
    };
  // Stored with its call, sent to the model and to every client: a result is bounded as a
  // client's is, and refused, said so, when over (never left without an outcome).
  const problem = jsonLimitProblem(outcome.result);
  if (problem !== null) return { error: `the result of ${name} is ${problem}` };
  const bytes = new TextEncoder().encode(JSON.stringify(outcome.result)).length;
  if (bytes > maxResultBytes)
    return {
      error: `the result of ${name} is too large (${bytes} bytes; a result may be at most ${maxResultBytes})`,
    };
  return outcome;
}

async function runOnce(
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
