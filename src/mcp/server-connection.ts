/**
 * One session's connection to one MCP server, with the official SDK's client over Streamable
 * HTTP: made when first needed (a listing, a call), kept for the session's calls, closed when
 * the session idles or ends. Its schemas are checked with the SDK's Workers validator (no
 * code generation). What it says of a failure never names the server's URL or headers.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  CallToolResultSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { McpServerDefinition, ToolProgress } from "../agents/define.js";
import { VERSION } from "../version.js";

/** Pages of a listing at most (a server that pages for ever is cut off there). */
const MAX_PAGES = 20;

export interface McpConnectionHooks {
  /** The server said its tools changed. */
  listChanged(): void;
}

export class McpServerConnection {
  private client: Promise<Client> | null = null;

  constructor(
    private readonly server: McpServerDefinition,
    private readonly hooks: McpConnectionHooks,
  ) {}

  /** Every tool the server lists (all pages), within `timeoutMs`. */
  async listTools(timeoutMs: number): Promise<Tool[]> {
    const signal = AbortSignal.timeout(timeoutMs);
    const client = await this.connected(signal);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout: timeoutMs,
      });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /**
   * Calls `name`; `signal` aborts it (the SDK tells the server with notifications/cancelled).
   * The core's timer ends a call: the SDK's own timeout is set past it.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number; onprogress: (p: ToolProgress) => void },
  ): Promise<CallToolResult> {
    const client = await this.connected(opts.signal);
    const result = await client.callTool({ name, arguments: args }, CallToolResultSchema, {
      signal: opts.signal,
      timeout: opts.timeoutMs + 5_000,
      onprogress: (p) =>
        opts.onprogress({
          progress: p.progress,
          ...(p.total === undefined ? {} : { total: p.total }),
          ...(p.message === undefined ? {} : { message: p.message }),
        }),
    });
    return result as CallToolResult;
  }

  /** Closes the connection (a later listing or call makes a new one). */
  close(): void {
    const client = this.client;
    this.client = null;
    void client?.then((c) => c.close()).catch(() => {});
  }

  private connected(signal: AbortSignal): Promise<Client> {
    if (this.client !== null) return this.client;
    const client = new Client(
      { name: "liveline", version: VERSION },
      { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
      this.hooks.listChanged(),
    );
    const transport = new StreamableHTTPClientTransport(new URL(this.server.url), {
      requestInit: { headers: { ...this.server.headers } },
    });
    const connecting = client.connect(transport, { signal }).then(
      () => client,
      (err: unknown) => {
        // The next listing or call tries again.
        if (this.client === connecting) this.client = null;
        void client.close().catch(() => {});
        throw err;
      },
    );
    this.client = connecting;
    return connecting;
  }

  /** An error's words, with the server's URL and headers left out (they may carry a key). */
  describe(err: unknown): string {
    const text = err instanceof Error ? err.message : String(err);
    let hidden = text.split(this.server.url).join("<the server's URL>");
    for (const value of Object.values(this.server.headers ?? {}))
      if (value.length >= 4) hidden = hidden.split(value).join("<hidden>");
    if (
      (err instanceof Error && err.name === "TimeoutError") ||
      /TimeoutError|timed out/i.test(hidden)
    )
      return "it did not answer in time";
    if (/Unexpected token|JSON|not valid/i.test(hidden))
      return `its answer was not valid JSON-RPC (${hidden.slice(0, 200)})`;
    return hidden.slice(0, 300);
  }
}
