/**
 * An MCP server's tool as the model knows it: `<server>__<tool>`, so that it can never be
 * taken for the agent's own tool or another server's. Characters some provider refuses in a
 * function name (OpenAI takes letters, digits, `_` and `-`) become `_`.
 */
import { mcpToolPrefix } from "../agents/define.js";

/** The longest function name every provider takes. */
const MAX_NAME = 64;

/** The model's name for `tool` of `server`, or why it has none. */
export function modelToolName(
  server: string,
  tool: string,
): { name: string } | { skipped: string } {
  if (tool.length === 0) return { skipped: "the server gave a tool with no name" };
  const name = `${mcpToolPrefix(server)}${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  if (name.length > MAX_NAME)
    return {
      skipped: `its name as the model would know it, ${name.length} characters, is over ${MAX_NAME}`,
    };
  return { name };
}
