/**
 * Function tools as OpenAI's services take and give them (Realtime, and GPT-Live's Responses
 * backend): a tool's zod arguments as JSON Schema, and a call's arguments as the model wrote
 * them.
 */
import { z } from "zod";
import type { ToolSpec } from "../vocabulary/provider-adapter.js";

/** A tool's zod arguments as the JSON Schema a function tool takes. */
export function jsonSchemaOf(args: z.ZodType): Record<string, unknown> {
  const { $schema: _schema, ...schema } = z.toJSONSchema(args) as Record<string, unknown>;
  return schema;
}

/** A tool's parameters as declared: its own JSON Schema (an MCP server's), else its zod's. */
export function parametersOf(tool: ToolSpec): Record<string, unknown> {
  return tool.inputSchema === undefined ? jsonSchemaOf(tool.args) : { ...tool.inputSchema };
}

/** Arguments as the model wrote them; text that is not a JSON object reaches the tool as none. */
export function argumentsOf(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
