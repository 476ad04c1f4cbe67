/** Types of mcp-test-server.mjs, for the TypeScript tests that start it. */
export interface McpTestCall {
  id: number;
  name: string;
  args: Record<string, unknown>;
  at: number;
  cancelled: boolean;
  finished: boolean;
}

export type ListingMode = "ok" | "refuse" | "hang" | "malformed" | "bad_tool";

export interface McpTestServer {
  url: string;
  calls: McpTestCall[];
  headersSeen: Record<string, string | string[] | undefined>[];
  listings: { count: number };
  setListing(mode: ListingMode): void;
  stop(): Promise<void>;
}

export function startMcpTestServer(opts?: {
  token?: string | null;
  extraTools?: { name: string; description: string }[];
  slowMs?: number;
}): Promise<McpTestServer>;
