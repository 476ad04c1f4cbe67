/**
 * A session's MCP servers: at its start, each of its agents' servers lists its tools (from a
 * recent listing when one is at hand: mcp/listing-cache.ts), and those tools become the
 * agent's, under the server's policy. A server that refuses, is slow or answers nonsense
 * costs the session only its tools, with a timeline row saying why; the next session tries
 * again. A connection is made when first needed and closed when the session idles or ends.
 */
import type { AgentDefinition, McpServerDefinition, ToolDefinition } from "../agents/define.js";
import { toolPolicies } from "../agents/define.js";
import type { TraceKind } from "../core/effects.js";
import { cachedListing, dropListings, keepListing, listingKey } from "../mcp/listing-cache.js";
import { mcpTools } from "../mcp/mcp-tools.js";
import { McpServerConnection, mcpHeadersDeadlineMs } from "../mcp/server-connection.js";
import type { FetchLike } from "../outbound.js";
import type { ToolPolicy } from "../vocabulary/model.js";

/** A server that has not listed its tools by then costs the session its tools. */
export const MCP_LIST_TIMEOUT_MS = 5_000;
/** A model connection waits this long at most for listings still under way. */
export const MCP_WAIT_AT_OPEN_MS = 1_500;
/**
 * A server's `tools/list_changed` is listed again this long after it (later ones meanwhile
 * join it), and no more often than that: a storm of them costs a listing or two.
 */
const RELIST_AFTER_MS = 1_000;

export interface SessionMcpHooks {
  /** Timeline rows (the shell writes them as the core's). */
  trace(kind: TraceKind, detail: Record<string, unknown>): void;
  /** An agent has new tools: their policies, for the core; its next connection declares them. */
  listed(agent: string, policies: Record<string, ToolPolicy>): void;
  /** The session's fetch for its MCP servers (it counts each request); the runtime's if absent. */
  fetch?: FetchLike;
}

interface ServerEntry {
  agent: string;
  server: McpServerDefinition;
  connection: McpServerConnection;
  tools: ToolDefinition[];
  /** Settles when the server has listed or failed. */
  listing: Promise<void>;
  /** A listing again, asked for by the server (list_changed) and not yet begun. */
  relist: ReturnType<typeof setTimeout> | null;
}

export class SessionMcp {
  private readonly servers: ServerEntry[] = [];

  constructor(
    agents: ReadonlyMap<string, AgentDefinition>,
    private readonly toolTimeoutMs: number,
    private readonly hooks: SessionMcpHooks,
  ) {
    for (const [agent, definition] of agents)
      for (const server of definition.mcp ?? []) {
        const entry: ServerEntry = {
          agent,
          server,
          connection: new McpServerConnection(
            server,
            { listChanged: () => this.listChanged(entry) },
            {
              ...(hooks.fetch === undefined ? {} : { fetch: hooks.fetch }),
              headersDeadlineMs: mcpHeadersDeadlineMs(server, toolTimeoutMs, MCP_LIST_TIMEOUT_MS),
            },
          ),
          tools: [],
          listing: Promise.resolve(),
          relist: null,
        };
        entry.listing = this.list(entry, true);
        this.servers.push(entry);
      }
  }

  /** The agent's MCP tools listed so far. */
  toolsOf(agent: string): ToolDefinition[] {
    return this.servers.filter((e) => e.agent === agent).flatMap((e) => e.tools);
  }

  /** Resolves once the agent's servers have all listed (or failed), or the wait is over. */
  ready(agent: string): Promise<void> {
    const listings = this.servers.filter((e) => e.agent === agent).map((e) => e.listing);
    if (listings.length === 0) return Promise.resolve();
    return Promise.race([
      Promise.all(listings).then(() => undefined),
      new Promise<void>((ok) => setTimeout(ok, MCP_WAIT_AT_OPEN_MS)),
    ]);
  }

  /** Closes every connection (the session idles or ends); a later call makes a new one. */
  close(): void {
    for (const entry of this.servers) {
      if (entry.relist !== null) clearTimeout(entry.relist);
      entry.relist = null;
      entry.connection.close();
    }
  }

  private async list(entry: ServerEntry, mayUseCache: boolean): Promise<void> {
    const { server, agent, connection } = entry;
    const key = listingKey(agent, server);
    const cached = mayUseCache ? cachedListing(key, Date.now()) : null;
    let listed = cached;
    if (listed === null) {
      try {
        listed = await connection.listTools(MCP_LIST_TIMEOUT_MS);
        for (const { tool, reason } of listed.invalid)
          this.hooks.trace("MCP_TOOL_SKIPPED", { agent, server: server.name, tool, reason });
      } catch (err) {
        connection.close();
        this.hooks.trace("MCP_UNAVAILABLE", {
          agent,
          server: server.name,
          reason: connection.describe(err),
        });
        return;
      }
      keepListing(key, listed, Date.now());
    }
    const { tools, skipped } = mcpTools(server, listed.tools, connection, this.toolTimeoutMs);
    for (const { tool, reason } of skipped)
      this.hooks.trace("MCP_TOOL_SKIPPED", { agent, server: server.name, tool, reason });
    entry.tools = tools;
    this.hooks.trace("MCP_TOOLS", {
      agent,
      server: server.name,
      tools: tools.length,
      cached: cached !== null,
    });
    this.hooks.listed(agent, toolPolicies({ instructions: "", tools }, this.toolTimeoutMs));
  }

  private listChanged(entry: ServerEntry): void {
    dropListings(entry.server);
    if (entry.relist !== null) return;
    entry.relist = setTimeout(() => {
      this.hooks.trace("MCP_LIST_CHANGED", { agent: entry.agent, server: entry.server.name });
      entry.listing = this.list(entry, false).finally(() => {
        entry.relist = null;
      });
    }, RELIST_AFTER_MS);
  }
}
