/**
 * A stand-in for Cloudflare's edge in front of a gateway that restarts: a TCP relay on a
 * loopback port that holds every new connection until the gateway behind it answers, then
 * passes the bytes through both ways (HTTP and WebSockets alike). On Cloudflare a deploy or a
 * runtime update resets the session objects, never the host's reachability: the Worker
 * answers throughout. Locally the gateway is one process, killed and started again; the edge
 * keeps its address reachable meanwhile, as Cloudflare's does (a connection waits at most
 * `holdMs` for it). Connections open when the gateway dies are cut, as a reset cuts them.
 */
import { connect, createServer } from "node:net";

export async function startEdge({ holdMs = 30_000 } = {}) {
  /** The gateway's port (null: none yet, or between a kill and its restart). */
  let target = null;
  const open = new Set();
  const server = createServer((client) => {
    open.add(client);
    client.pause();
    const deadline = Date.now() + holdMs;
    let upstream = null;
    const drop = () => {
      client.destroy();
      upstream?.destroy();
      open.delete(client);
    };
    client.once("error", drop);
    client.once("close", drop);
    const attempt = () => {
      if (client.destroyed) return;
      if (target === null) {
        retry();
        return;
      }
      const socket = connect(target, "127.0.0.1");
      let connected = false;
      socket.once("connect", () => {
        connected = true;
        upstream = socket;
        socket.once("error", drop);
        socket.once("close", drop);
        client.pipe(socket);
        socket.pipe(client);
        client.resume();
      });
      socket.once("error", () => {
        if (connected) return;
        socket.destroy();
        retry();
      });
    };
    const retry = () => {
      if (Date.now() > deadline) drop();
      else setTimeout(attempt, 50);
    };
    attempt();
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const port = server.address().port;
  return {
    base: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}`,
    /** Where connections go from now on (a gateway's port; null: hold them). */
    route(gatewayPort) {
      target = gatewayPort;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}
