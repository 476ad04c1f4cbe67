/**
 * An MCP server's listed tools as an agent's server tools: declared to the model with the
 * server's own schema, called through the session's connection, under the server's policy.
 * An MCP error or an `isError` result becomes the call's error, which the model hears; what
 * the server says is shown with its address and headers hidden.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpServerDefinition, McpToolPolicy, ToolDefinition } from "../agents/define.js";
import type { McpCallResult, McpServerConnection } from "./server-connection.js";
import { modelToolName } from "./tool-names.js";

/** The server checks arguments against its own schema; liveline passes the model's object on. */
const ANY_ARGUMENTS = z.record(z.string(), z.unknown());

/** Tools a session declares from one server at most (providers cap a setup's functions). */
export const MAX_TOOLS_PER_SERVER = 128;
/** A tool's declaration (name, description, schema) at most, in bytes of JSON. */
const MAX_DECLARATION_BYTES = 64 * 1024;

export interface McpTools {
  tools: ToolDefinition[];
  /** Tools of the server left out, with why (a name no provider takes, a clash, a limit). */
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
    if (tools.length >= MAX_TOOLS_PER_SERVER) {
      skipped.push({
        tool: tool.name,
        reason: `over the ${MAX_TOOLS_PER_SERVER} tools a session takes from one server`,
      });
      continue;
    }
    const description = tool.description ?? tool.title ?? tool.name;
    const inputSchema = declaredSchema(tool.inputSchema);
    const bytes = JSON.stringify({ description, inputSchema }).length;
    if (bytes > MAX_DECLARATION_BYTES) {
      skipped.push({
        tool: tool.name,
        reason: `its declaration is ${bytes} bytes, over ${MAX_DECLARATION_BYTES}`,
      });
      continue;
    }
    names.add(named.name);
    const policy: McpToolPolicy = { ...server.policy, ...server.policy?.tools?.[tool.name] };
    const timeoutMs = policy.timeoutMs ?? defaultTimeoutMs;
    tools.push({
      name: named.name,
      description,
      args: ANY_ARGUMENTS,
      inputSchema,
      runOn: "server",
      followUp: policy.followUp ?? "speak",
      timeoutMs,
      ...(policy.onHandoff === undefined ? {} : { onHandoff: policy.onHandoff }),
      ...(policy.progress === undefined ? {} : { progress: policy.progress }),
      ...(policy.idempotent === true ? { idempotent: true } : {}),
      run: async (args, ctx) => {
        let result: McpCallResult;
        try {
          result = await connection.callTool(tool.name, args as Record<string, unknown>, {
            idempotencyKey: ctx.idempotencyKey,
            signal: ctx.signal,
            timeoutMs,
            onprogress: (p) => ctx.progress(p),
          });
        } catch (err) {
          throw new Error(connection.describe(err));
        }
        if (result.isError === true)
          throw new Error(connection.redact(textOf(result)) || "the tool reported an error");
        return payloadOf(result, connection);
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

/**
 * What the model reads of a result: its text, and its structured content where it has one
 * (any JSON value), with the server's address and headers hidden.
 */
function payloadOf(
  result: McpCallResult,
  connection: McpServerConnection,
): Record<string, unknown> {
  const text = connection.redact(textOf(result));
  const structured =
    result.structuredContent === undefined
      ? undefined
      : (JSON.parse(connection.redact(JSON.stringify(result.structuredContent))) as unknown);
  const payload: Record<string, unknown> = {};
  if (text !== "") payload.text = text;
  if (structured !== undefined) payload.structured = structured;
  if (text === "" && structured === undefined) payload.text = "(the tool returned nothing)";
  return payload;
}

/** The result's content as text: its text parts, and a word for each part of another kind. */
function textOf(result: McpCallResult): string {
  return (result.content ?? [])
    .map((raw) => {
      const part = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
      const resource = (part.resource ?? {}) as Record<string, unknown>;
      switch (part.type) {
        case "text":
          return typeof part.text === "string" ? part.text : "";
        case "image":
        case "audio":
          return `[${part.type}: ${String(part.mimeType ?? "unknown")}]`;
        case "resource_link":
          return `[resource: ${String(part.uri ?? "")}]`;
        case "resource":
          return typeof resource.text === "string"
            ? resource.text
            : `[resource: ${String(resource.uri ?? "")}]`;
        default:
          return "";
      }
    })
    .filter((t) => t !== "")
    .join("\n");
}
