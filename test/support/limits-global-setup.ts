/**
 * The endpoints the Cloudflare-limits tests (test/cloudflare-limits.workers.test.ts) reach over
 * real sockets, started once in Node before the tests:
 * - a model endpoint that takes the TCP connection and never answers (no status line, no
 *   headers): it counts the connections it holds, and answers them at last (503) on
 *   `POST /hung/release`;
 * - an OTLP/HTTP receiver (scripts/lib/otlp-receiver.mjs): `GET /otlp` says how many spans;
 * - a WebSocket endpoint that echoes every message (a model connection that stays up);
 * - an MCP server of its own (scripts/lib/mcp-test-server.mjs, no token), whose `slow_report`
 *   streams its progress for 600 ms: the workers' shared one is set by other tests.
 * Their addresses reach the tests through `inject("limitsServers")`.
 */
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import type { TestProject } from "vitest/node";
import { WebSocketServer } from "ws";
import { startMcpTestServer } from "../../scripts/lib/mcp-test-server.mjs";
import { startOtlpReceiver } from "../../scripts/lib/otlp-receiver.mjs";

export interface LimitsServers {
  /** Takes the connection, never answers. */
  hung: string;
  /** GET /hung → {open, accepted}; POST /hung/release (503 to each); GET /otlp → {spans}. */
  control: string;
  /** The OTLP receiver's base URL (traces go to its /v1/traces). */
  otlp: string;
  /** ws://…: every message echoed. */
  echo: string;
  /** An MCP server (Streamable HTTP) of these tests alone. */
  mcp: string;
}

const listen = (server: { listen(port: number, host: string, ok: () => void): unknown }) =>
  new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const held = new Set<Socket>();
  let accepted = 0;
  const hung = createTcpServer((socket) => {
    accepted += 1;
    held.add(socket);
    socket.on("close", () => held.delete(socket));
    socket.on("error", () => held.delete(socket));
    // What the client sends is read and ignored: no answer ever comes.
    socket.resume();
  });
  await listen(hung);

  const otlp = await startOtlpReceiver();

  const control = createHttpServer((req, res) => {
    const json = (body: unknown) =>
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    if (req.method === "GET" && req.url === "/hung") return json({ open: held.size, accepted });
    if (req.method === "POST" && req.url === "/hung/release") {
      for (const socket of held)
        socket.end(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
      held.clear();
      return json({ released: true });
    }
    if (req.method === "GET" && req.url === "/otlp") return json({ spans: otlp.spans.length });
    res.writeHead(404).end();
  });
  await listen(control);

  const echo = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((ok) => echo.once("listening", () => ok()));
  echo.on("connection", (socket) => {
    socket.on("message", (data, binary) => socket.send(data, { binary }));
  });

  const mcp = await startMcpTestServer({ slowMs: 600 });

  const portOf = (server: { address(): unknown }) => (server.address() as { port: number }).port;
  project.provide("limitsServers", {
    hung: `http://127.0.0.1:${portOf(hung)}`,
    control: `http://127.0.0.1:${portOf(control)}`,
    otlp: otlp.url,
    echo: `ws://127.0.0.1:${portOf(echo)}`,
    mcp: mcp.url,
  } satisfies LimitsServers);

  return async () => {
    for (const socket of held) socket.destroy();
    await new Promise((ok) => hung.close(ok));
    await new Promise((ok) => control.close(ok));
    for (const client of echo.clients) client.terminate();
    await new Promise((ok) => echo.close(ok));
    await otlp.stop();
    await mcp.stop();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    limitsServers: LimitsServers;
  }
}
