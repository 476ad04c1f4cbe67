/**
 * The workers tests' MCP server: a real one (scripts/lib/mcp-test-server.mjs, the official
 * SDK over Streamable HTTP on localhost), started once in Node before the tests; its URL
 * reaches the Worker as the MCP_DESK_URL binding (vitest.config.ts), and the tests read what
 * it saw through its control routes.
 */
import type { TestProject } from "vitest/node";
import { startMcpTestServer } from "../../scripts/lib/mcp-test-server.mjs";

/** The bearer token the server takes (the Worker's MCP_DESK_TOKEN, a test-only secret). */
export const MCP_DESK_TOKEN = "desk-test-token";
/** A key in the server's URL (its query): as secret as the token. */
export const MCP_QUERY_KEY = "desk-query-key";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startMcpTestServer({
    token: MCP_DESK_TOKEN,
    // Listed by the server, denied by the desk agent: never declared to the model.
    extraTools: [{ name: "admin_reset", description: "Resets the warehouse (admins only)." }],
  });
  // A key in the URL's query, as some servers take one: it must never show anywhere.
  project.provide("mcpDeskUrl", `${server.url}?apikey=${MCP_QUERY_KEY}`);
  return () => server.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    mcpDeskUrl: string;
  }
}
