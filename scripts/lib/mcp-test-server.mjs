/**
 * A real MCP server for the tests and `npm run dev` trials, built with the official
 * `@modelcontextprotocol/sdk` (McpServer over Streamable HTTP, stateful sessions) on
 * localhost. Its tools:
 * - `lookup_order` — fast: answers at once;
 * - `slow_report` — takes `slowMs` (3000 unless set), reporting progress every 300 ms;
 *   honours cancellation (MCP's notifications/cancelled aborts its signal);
 * - `broken_tool` — fails: an `isError` result;
 * - `crashing_tool` — throws (the SDK answers with an error result too);
 * - `place_order` — a side effect made once per idempotency key (the request's
 *   `_meta["liveline/idempotency-key"]`): a call with a key seen before gets that order's
 *   result, placing nothing; it takes `orderMs` (2000 unless set) either way;
 * - `send_notice` — a side effect made on every call (no key read), taking `orderMs`.
 * It keeps a record of every tools/call it received (name, arguments, whether it was
 * cancelled, finished, its idempotency key), the side effects made (`effects`: orders placed
 * and notices sent), of the headers each request carried, and can refuse, hang or answer
 * its listing with malformed JSON (`setListing`), to play a server that is down or broken.
 * Tests in workerd reach the same through its control routes: `GET /_test/calls` (the calls,
 * listings and MCP requests seen), `POST /_test/listing` with `{"mode": …}` and
 * `POST /_test/slow` with `{"ms": …}` (how long `slow_report` takes), `POST /_test/order-ms`
 * with `{"ms": …}` (how long `place_order` and `send_notice` take), and `POST /_test/add-tool`
 * with `{"name": …}`, a tool added to every session (the SDK sends `tools/list_changed`).
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const sleep = (ms, signal) =>
  new Promise((ok) => {
    const timer = setTimeout(ok, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      ok();
    });
  });

/** `token`: when set, requests must carry `Authorization: Bearer <token>` (else 401). */
/** The `_meta` key liveline sends a call's idempotency key under (src/mcp/server-connection.ts). */
export const IDEMPOTENCY_META_KEY = "liveline/idempotency-key";

export async function startMcpTestServer({
  token = null,
  extraTools = [],
  slowMs = 3000,
  orderMs = 2000,
} = {}) {
  let slow = slowMs;
  let orderTakes = orderMs;
  /** Side effects made: orders placed (once per key), notices sent (every call). */
  const effects = { orders: 0, notices: 0 };
  /** Each order by its idempotency key: its result, once made. */
  const orders = new Map();
  /** Every tools/call: {id, name, args, at, cancelled, finished}. */
  const calls = [];
  const headersSeen = [];
  /** The request ids of every notifications/cancelled received. */
  const cancelledRequests = [];
  const listings = { count: 0 };
  /**
   * `ok`, `refuse` (503), `hang` (no answer), `malformed` (not JSON) — for tools/list and
   * initialize; `bad_tool`: tools/list answers with two tools the MCP schema refuses.
   */
  let listing = "ok";
  const held = new Set();
  const sessions = new Map();

  /** Every live session's server: a tool added later is added to each (list_changed). */
  const live = new Set();
  const added = [];
  const addTool = (server, name) =>
    server.registerTool(
      name,
      { description: `${name} (added later)`, inputSchema: {} },
      async () => {
        calls.push({
          id: calls.length + 1,
          name,
          args: {},
          at: Date.now(),
          cancelled: false,
          finished: true,
        });
        return { content: [{ type: "text", text: `${name} done` }] };
      },
    );
  const newServer = () => {
    const server = new McpServer({ name: "liveline-test-desk", version: "1.0.0" });
    live.add(server);
    for (const name of added) addTool(server, name);
    const record = (name, args, extra) => {
      const call = {
        id: calls.length + 1,
        name,
        args,
        at: Date.now(),
        cancelled: false,
        finished: false,
        key: extra?._meta?.[IDEMPOTENCY_META_KEY] ?? null,
      };
      calls.push(call);
      return call;
    };
    server.registerTool(
      "place_order",
      {
        description: "Place an order for an item (once per idempotency key).",
        inputSchema: { item: z.string().describe("What to order") },
      },
      async ({ item }, extra) => {
        const call = record("place_order", { item }, extra);
        const key = call.key ?? `no-key-${call.id}`;
        let order = orders.get(key);
        if (order === undefined) {
          effects.orders += 1;
          const number = `A${1000 + effects.orders}`;
          order = sleep(orderTakes).then(() => ({ order: number, item }));
          orders.set(key, order);
        }
        const placed = await order;
        call.finished = true;
        return {
          content: [{ type: "text", text: `Order ${placed.order} placed for ${placed.item}.` }],
          structuredContent: placed,
        };
      },
    );
    server.registerTool(
      "send_notice",
      {
        description: "Send a notice to the customer (every call sends one).",
        inputSchema: { text: z.string().optional() },
      },
      async (args, extra) => {
        const call = record("send_notice", args, extra);
        effects.notices += 1;
        await sleep(orderTakes);
        call.finished = true;
        return { content: [{ type: "text", text: "The notice was sent." }] };
      },
    );
    server.registerTool(
      "lookup_order",
      {
        description: "Look up an order by its number.",
        inputSchema: { order: z.string().describe("The order number") },
      },
      async ({ order }) => {
        const call = record("lookup_order", { order });
        call.finished = true;
        return {
          content: [{ type: "text", text: `Order ${order}: shipped on Monday.` }],
          structuredContent: { order, status: "shipped" },
        };
      },
    );
    server.registerTool(
      "slow_report",
      {
        description: "Build a long report (slow).",
        inputSchema: { topic: z.string() },
      },
      async ({ topic }, extra) => {
        const ms = slow;
        const call = record("slow_report", { topic });
        extra.signal.addEventListener("abort", () => {
          call.cancelled = true;
        });
        const started = Date.now();
        let step = 0;
        while (Date.now() - started < ms && !extra.signal.aborted) {
          await sleep(Math.min(300, ms - (Date.now() - started)), extra.signal);
          step += 1;
          if (extra._meta?.progressToken !== undefined && !extra.signal.aborted)
            await extra
              .sendNotification({
                method: "notifications/progress",
                params: {
                  progressToken: extra._meta.progressToken,
                  progress: step,
                  message: `still building the ${topic} report`,
                },
              })
              .catch(() => {});
        }
        call.finished = !extra.signal.aborted;
        return { content: [{ type: "text", text: `The ${topic} report is ready.` }] };
      },
    );
    server.registerTool(
      "broken_tool",
      { description: "Always fails.", inputSchema: { what: z.string().optional() } },
      async (args) => {
        record("broken_tool", args);
        return {
          content: [{ type: "text", text: "the warehouse database is offline" }],
          isError: true,
        };
      },
    );
    server.registerTool(
      "huge_result",
      { description: "Answers with a very large text.", inputSchema: {} },
      async () => {
        record("huge_result", {});
        return { content: [{ type: "text", text: "x".repeat(600 * 1024) }] };
      },
    );
    server.registerTool(
      "echo_auth",
      { description: "Fails, saying what it was sent (a careless server).", inputSchema: {} },
      async (_args, extra) => {
        record("echo_auth", {});
        const auth = extra.requestInfo?.headers?.authorization ?? "";
        throw new Error(`refused the request with ${auth} to ${extra.requestInfo?.url ?? ""}`);
      },
    );
    server.registerTool("crashing_tool", { description: "Throws.", inputSchema: {} }, async () => {
      record("crashing_tool", {});
      throw new Error("crashing_tool exploded");
    });
    for (const tool of extraTools)
      server.registerTool(
        tool.name,
        { description: tool.description, inputSchema: {} },
        async () => {
          record(tool.name, {});
          return { content: [{ type: "text", text: `${tool.name} done` }] };
        },
      );
    return server;
  };

  const http = createServer(async (req, res) => {
    if (req.url === "/_test/calls") {
      res.writeHead(200, { "Content-Type": "application/json" }).end(
        JSON.stringify({
          calls,
          effects,
          listings: listings.count,
          requests: headersSeen.length,
          cancelledRequests,
        }),
      );
      return;
    }
    if (req.url === "/_test/add-tool" && req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const { name } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      added.push(name);
      // Each connected session's server says so: notifications/tools/list_changed.
      for (const server of live) if (server.isConnected()) addTool(server, name);
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/_test/order-ms" && req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      orderTakes = JSON.parse(Buffer.concat(chunks).toString("utf8")).ms;
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/_test/slow" && req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      slow = JSON.parse(Buffer.concat(chunks).toString("utf8")).ms;
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/_test/listing" && req.method === "POST") {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      control.setListing(JSON.parse(Buffer.concat(chunks).toString("utf8")).mode);
      res.writeHead(204).end();
      return;
    }
    headersSeen.push({ ...req.headers });
    if (token !== null && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "Content-Type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString("utf8");
    let body;
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (body?.method === "notifications/cancelled") cancelledRequests.push(body.params?.requestId);
    const isListing =
      body !== undefined && (isInitializeRequest(body) || body.method === "tools/list");
    if (isListing && body.method === "tools/list") listings.count += 1;
    if (isListing && listing !== "ok") {
      if (listing === "refuse") {
        // As careless servers do: the request's own address (its query, a key) in the answer.
        res
          .writeHead(503, { "Content-Type": "text/plain" })
          .end(`down for maintenance: ${req.url}`);
        return;
      }
      if (listing === "bad_tool" && body.method === "tools/list") {
        // Two tools the MCP schema refuses (a schema that is no object, none at all) beside
        // a good one: they cost the listing only themselves.
        res.writeHead(200, { "Content-Type": "application/json" }).end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: body.id,
            result: {
              tools: [
                {
                  name: "lookup_order",
                  description: "Look up an order.",
                  inputSchema: { type: "object", properties: { order: { type: "string" } } },
                },
                { name: "weird_tool", inputSchema: { type: "string" } },
                { name: "schemaless_tool" },
              ],
            },
          }),
        );
        return;
      }
      if (listing === "hang") {
        held.add(res);
        return;
      }
      if (listing === "malformed") {
        res.writeHead(200, { "Content-Type": "application/json" }).end("{not json at all");
        return;
      }
    }
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (transport === undefined) {
      if (req.method !== "POST" || body === undefined || !isInitializeRequest(body)) {
        res.writeHead(404, { "Content-Type": "application/json" }).end(
          JSON.stringify({
            jsonrpc: "2.0",
            error: { code: -32001, message: "Session not found" },
            id: null,
          }),
        );
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise((ok) => http.listen(0, "127.0.0.1", ok));
  const port = http.address().port;

  const control = {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    effects,
    headersSeen,
    listings,
    /** How the server answers its listing (initialize and tools/list) from now on. */
    setListing(mode) {
      listing = mode;
      if (mode !== "hang") {
        for (const res of held) res.destroy();
        held.clear();
      }
    },
    async stop() {
      for (const res of held) res.destroy();
      held.clear();
      for (const t of sessions.values()) await t.close().catch(() => {});
      http.closeAllConnections?.();
      await new Promise((ok) => http.close(ok));
    },
  };
  return control;
}

// `node scripts/lib/mcp-test-server.mjs`: serve it for a trial by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startMcpTestServer();
  console.log(`MCP test server: ${server.url}`);
}
