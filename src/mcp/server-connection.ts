/**
 * One session's connection to one MCP server, with the official SDK's client over Streamable
 * HTTP: made when first needed (a listing, a call), kept for the session's calls, ended (the
 * MCP session terminated) when the session idles or ends. Answers are read leniently — a
 * tool the SDK's schema refuses costs that tool alone, a result of an odd shape is read for
 * what it holds — and nothing it says of a failure carries the server's URL, its query or
 * its headers.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type Tool,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { z } from "zod";
import type { McpServerDefinition, ToolProgress } from "../agents/define.js";
import { type FetchLike, withHeadersDeadline } from "../outbound.js";
import { VERSION } from "../version.js";

/**
 * The `_meta` key of a `tools/call` that carries the call's idempotency key: the same for the
 * call wherever it runs (a run again after a restart sends the same), different for every
 * other call. MCP has no standard key yet (SEP-3182 proposed a top-level `idempotencyKey`
 * and was closed unmerged), so it goes under liveline's own prefix, as the spec's `_meta`
 * naming rules ask for a name that is not the protocol's.
 */
export const MCP_IDEMPOTENCY_KEY = "liveline/idempotency-key";

/** Pages of a listing at most (a server that pages for ever is cut off there). */
const MAX_PAGES = 20;
/** What a failure's words are cut to. */
const MAX_REASON_CHARS = 300;
/** A closing connection waits this long for cancellations still on their way out. */
const CLOSE_AFTER_MS = 250;

/** A `tools/list` page, read leniently: each tool is checked on its own. */
const ListPage = z.looseObject({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

/** A `tools/call` result, read for what it holds. */
const CallResult = z.looseObject({
  content: z.array(z.unknown()).optional(),
  structuredContent: z.unknown().optional(),
  isError: z.boolean().optional(),
});
export type McpCallResult = z.infer<typeof CallResult>;

export interface McpConnectionHooks {
  /** The server said its tools changed. */
  listChanged(): void;
}

/** How the connection reaches its server. */
export interface McpTransportOptions {
  /** The session's fetch (it counts its subrequests); the runtime's when absent. */
  fetch?: FetchLike;
  /**
   * Every request to the server (a call, a listing, its notification stream, its end) is
   * aborted when its response headers have not come by then (src/outbound.ts). A server that
   * answers a call with plain JSON sends its headers with its result: this must be past the
   * longest call's own timeout.
   */
  headersDeadlineMs: number;
}

/** The SDK gives up on a call this long after its own timeout: a server's headers may take as long. */
const SDK_TIMEOUT_MARGIN_MS = 5_000;

/**
 * How long a request to `server` may wait for its response headers: a call answered with
 * plain JSON sends them with its result, so the longest of its tools' timeouts (or of its
 * listing), and the SDK's margin past it.
 */
export function mcpHeadersDeadlineMs(
  server: McpServerDefinition,
  toolTimeoutMs: number,
  listTimeoutMs: number,
): number {
  const policy = server.policy;
  const timeouts = [
    listTimeoutMs,
    policy?.timeoutMs ?? toolTimeoutMs,
    ...Object.values(policy?.tools ?? {}).map(
      (t) => t.timeoutMs ?? policy?.timeoutMs ?? toolTimeoutMs,
    ),
  ];
  return Math.max(...timeouts) + SDK_TIMEOUT_MARGIN_MS;
}

export interface McpListing {
  tools: Tool[];
  /** Listed tools the MCP schema refuses (by name where they have one), with why. */
  invalid: { tool: string; reason: string }[];
}

export class McpServerConnection {
  private client: Promise<{ client: Client; transport: StreamableHTTPClientTransport }> | null =
    null;

  constructor(
    private readonly server: McpServerDefinition,
    private readonly hooks: McpConnectionHooks,
    private readonly transport: McpTransportOptions = { headersDeadlineMs: 60_000 },
  ) {}

  /** Every tool the server lists (all pages), within `timeoutMs`. */
  async listTools(timeoutMs: number): Promise<McpListing> {
    // A signal of its own, never aborted once the listing is done: the SDK keeps its listeners,
    // and a later abort would cancel requests long answered (initialize among them).
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new Error("it did not answer in time")),
      timeoutMs,
    );
    try {
      const { client } = await this.connected(deadline.signal);
      const listing: McpListing = { tools: [], invalid: [] };
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const listed = await client.request(
          { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
          ListPage,
          { signal: deadline.signal, timeout: timeoutMs },
        );
        for (const raw of listed.tools) {
          const tool = ToolSchema.safeParse(raw);
          if (tool.success) listing.tools.push(tool.data);
          else listing.invalid.push({ tool: nameOf(raw), reason: issueOf(tool.error) });
        }
        cursor = listed.nextCursor;
        if (cursor === undefined) break;
      }
      return listing;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Calls `name`; `signal` aborts it (the SDK tells the server with notifications/cancelled).
   * The core's timer ends a call: the SDK's own timeout is set past it.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    opts: {
      /** The call's key (ToolContext `idempotencyKey`), sent as `_meta[MCP_IDEMPOTENCY_KEY]`. */
      idempotencyKey: string;
      signal: AbortSignal;
      timeoutMs: number;
      onprogress: (p: ToolProgress) => void;
    },
  ): Promise<McpCallResult> {
    // The call's signal cancels the connection's set-up only while it is set up.
    const setUp = new AbortController();
    const cut = () => setUp.abort(opts.signal.reason);
    opts.signal.addEventListener("abort", cut);
    let client: Client;
    try {
      ({ client } = await this.connected(setUp.signal));
    } finally {
      opts.signal.removeEventListener("abort", cut);
    }
    const _meta = { [MCP_IDEMPOTENCY_KEY]: opts.idempotencyKey };
    const params = { name, arguments: args, _meta };
    return client.request({ method: "tools/call", params }, CallResult, {
      signal: opts.signal,
      timeout: opts.timeoutMs + 5_000,
      onprogress: (p) =>
        opts.onprogress({
          progress: p.progress,
          ...(p.total === undefined ? {} : { total: p.total }),
          ...(p.message === undefined ? {} : { message: p.message }),
        }),
    });
  }

  /**
   * Ends the MCP session (a DELETE the server may refuse) and the connection, a moment later:
   * cancellations just sent go out first. A later listing or call makes a new one.
   */
  close(): void {
    const connection = this.client;
    this.client = null;
    if (connection === null) return;
    setTimeout(() => {
      void connection
        .then(async ({ client, transport }) => {
          await transport.terminateSession().catch(() => {});
          await client.close();
        })
        .catch(() => {});
    }, CLOSE_AFTER_MS);
  }

  private connected(
    signal: AbortSignal,
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    if (this.client !== null) return this.client;
    const client = new Client(
      { name: "liveline", version: VERSION },
      { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
      this.hooks.listChanged(),
    );
    const send = this.transport.fetch ?? ((input, init) => fetch(input, init));
    const transport = new StreamableHTTPClientTransport(new URL(this.server.url), {
      requestInit: { headers: { ...this.server.headers } },
      fetch: withHeadersDeadline(send, this.transport.headersDeadlineMs),
    });
    const connecting = client.connect(transport, { signal }).then(
      () => ({ client, transport }),
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

  /** A failure in words: short, and with the server's URL, query and headers left out. */
  describe(err: unknown): string {
    const text = err instanceof Error ? err.message : String(err);
    const hidden = this.redact(text).replace(/\s+/g, " ").trim();
    if (
      (err instanceof Error && err.name === "TimeoutError") ||
      /TimeoutError|timed out|did not answer in time/i.test(hidden)
    )
      return "it did not answer in time";
    if (/invalid_union|invalid_type|Unexpected token|not valid JSON|JSON at position/i.test(hidden))
      return `its answer was not valid JSON-RPC (${hidden.slice(0, 120)})`;
    if (hidden === "") return "it failed without saying why";
    return hidden.length > MAX_REASON_CHARS ? `${hidden.slice(0, MAX_REASON_CHARS)}…` : hidden;
  }

  /** `text` with everything of the server's address and headers that could be a key hidden. */
  redact(text: string): string {
    const url = new URL(this.server.url);
    const secrets = [
      this.server.url,
      url.href,
      url.search,
      ...url.searchParams.values(),
      decodeURIComponent(url.username),
      decodeURIComponent(url.password),
      ...Object.values(this.server.headers ?? {}),
    ]
      .filter((s) => s.length >= 4)
      // The longest first: a value inside a longer one is hidden with it.
      .sort((a, b) => b.length - a.length);
    let out = text;
    for (const secret of secrets) out = out.split(secret).join("<hidden>");
    return out;
  }
}

function nameOf(raw: unknown): string {
  const name = (raw as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name.slice(0, 64) : "(no name)";
}

/** The first problem the MCP schema found with a listed tool, in a few words. */
function issueOf(error: { issues: readonly { path: PropertyKey[]; message: string }[] }): string {
  const issue = error.issues[0];
  if (issue === undefined) return "not a tool the MCP schema takes";
  const path = issue.path.map(String).join(".");
  return `not a tool the MCP schema takes (${path === "" ? "" : `${path}: `}${issue.message.slice(0, 120)})`;
}
