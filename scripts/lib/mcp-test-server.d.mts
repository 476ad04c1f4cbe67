/** Types of mcp-test-server.mjs, for the TypeScript tests that start it. */
export interface McpTestCall {
  id: number;
  name: string;
  args: Record<string, unknown>;
  at: number;
  cancelled: boolean;
  finished: boolean;
  /** The call's idempotency key (`_meta["liveline/idempotency-key"]`), or null. */
  key: string | null;
}

export type ListingMode = "ok" | "refuse" | "hang" | "malformed" | "bad_tool";

export const IDEMPOTENCY_META_KEY: string;

export interface McpTestServer {
  url: string;
  calls: McpTestCall[];
  /** Side effects made: orders placed (once per key), notices sent (every call). */
  effects: { orders: number; notices: number };
  headersSeen: Record<string, string | string[] | undefined>[];
  listings: { count: number };
  setListing(mode: ListingMode): void;
  stop(): Promise<void>;
}

export function startMcpTestServer(opts?: {
  token?: string | null;
  extraTools?: { name: string; description: string }[];
  slowMs?: number;
  orderMs?: number;
}): Promise<McpTestServer>;
