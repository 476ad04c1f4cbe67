/**
 * An MCP server's listed tools as an agent's server tools: declared to the model with the
 * server's own schema, called through the session's connection, under the server's policy.
 * An MCP error or an `isError` result becomes the call's error, which the model hears.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpServerDefinition, McpToolPolicy, ToolDefinition } from "../agents/define.js";
import type { McpServerConnection } from "./server-connection.js";
import { modelToolName } from "./tool-names.js";

/** The server checks arguments against its own schema; liveline passes the model's object on. */
const ANY_ARGUMENTS = z.record(z.string(), z.unknown());

export interface McpTools {
  tools: ToolDefinition[];
  /** Tools of the server left out, with why (a name no provider takes, a clash). */
  skipped: { tool: string; reason: string }[];
}

export function mcpTools(
  server: McpServerDefinition,
  listed: readonly Tool[],
  connection: McpServerConnection,
  defaultTimeoutMs: number,
): McpTools {
  const tools: ToolDefinition[] = [];
  const skipped: McpTools["skipped"] = [];
  const names = new Set<string>();
  for (const tool of listed) {
    if (server.allow !== undefined && !server.allow.includes(tool.name)) continue;
    if (server.deny?.includes(tool.name)) continue;
    const named = modelToolName(server.name, tool.name);
    if ("skipped" in named) {
      skipped.push({ tool: tool.name, reason: named.skipped });
      continue;
    }
    if (names.has(named.name)) {
      skipped.push({ tool: tool.name, reason: `another of its tools is also ${named.name}` });
      continue;
    }
    names.add(named.name);
    const policy: McpToolPolicy = { ...server.policy, ...server.policy?.tools?.[tool.name] };
    const timeoutMs = policy.timeoutMs ?? defaultTimeoutMs;
    tools.push({
      name: named.name,
      description: tool.description ?? tool.title ?? tool.name,
      args: ANY_ARGUMENTS,
      inputSchema: declaredSchema(tool.inputSchema),
      runOn: "server",
      followUp: policy.followUp ?? "speak",
      timeoutMs,
      ...(policy.onHandoff === undefined ? {} : { onHandoff: policy.onHandoff }),
      ...(policy.progress === undefined ? {} : { progress: policy.progress }),
      run: async (args, ctx) => {
        const result = await connection.callTool(tool.name, args as Record<string, unknown>, {
          signal: ctx.signal,
          timeoutMs,
          onprogress: (p) => ctx.progress(p),
        });
        if (result.isError === true)
          throw new Error(textOf(result) || "the tool reported an error");
        return payloadOf(result);
      },
    });
  }
  return { tools, skipped };
}

/** The server's input schema as a declaration takes it (no `$schema`). */
function declaredSchema(schema: Tool["inputSchema"]): Record<string, unknown> {
  const { $schema: _, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: "object" };
}

/** What the model reads of a result: its text, and its structured content where it has one. */
function payloadOf(result: CallToolResult): Record<string, unknown> {
  const text = textOf(result);
  return {
    ...(text === "" ? {} : { text }),
    ...(result.structuredContent === undefined ? {} : { structured: result.structuredContent }),
  };
}

/** The result's content as text: its text parts, and a word for each part of another kind. */
function textOf(result: CallToolResult): string {
  return (result.content ?? [])
    .map((part) => {
      switch (part.type) {
        case "text":
          return part.text;
        case "image":
        case "audio":
          return `[${part.type}: ${part.mimeType}]`;
        case "resource_link":
          return `[resource: ${part.uri}]`;
        case "resource":
          return "text" in part.resource ? part.resource.text : `[resource: ${part.resource.uri}]`;
        default:
          return "";
      }
    })
    .filter((t) => t !== "")
    .join("\n");
}
