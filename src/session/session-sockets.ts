/**
 * How a session's object holds its sockets, one of two ways (CLIENT_SOCKETS):
 *
 * - `streaming` (the default; a phone call's media stream always): the socket is `accept()`ed
 *   and each message is a plain event on the object's loop — what a relay pays per frame. An
 *   open one keeps the object in memory (as its model connection does while the session is
 *   live).
 * - `hibernatable`: the Hibernation API. Each message is an event of its own for the runtime
 *   (in workerd about as much CPU again as the relay's whole per-frame work: 50 audio chunks
 *   a second pay it 50 times), but a session idle with its clients attached leaves memory,
 *   its sockets kept, and a keepalive is answered without waking it.
 *
 * The object sees one set of sockets and one set of handlers either way.
 */

import type { SocketMode } from "../worker-config.js";
import { sendText } from "./sockets.js";

/** Answered as it is, byte for byte, before the session sees it (see PROTOCOL.md, keepalive). */
export const KEEPALIVE = '{"type":"keepalive"}';

/** The object's handlers: for a hibernatable socket the runtime calls them, else the shell. */
export interface SocketHandlers {
  webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void>;
  webSocketClose(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<void>;
  webSocketError(ws: WebSocket, error: unknown): Promise<void>;
}

export class SessionSockets {
  /** The streaming sockets still open (a hibernatable one the runtime lists). */
  private readonly streaming = new Set<WebSocket>();
  /** When each streaming socket's last keepalive was answered. */
  private readonly keptAt = new WeakMap<WebSocket, number>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly handlers: SocketHandlers,
  ) {
    // A keepalive is answered by the runtime without waking the object; its timestamp keeps
    // the socket alive. (`ping` still goes through the session, in order with every frame.)
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(KEEPALIVE, KEEPALIVE));
  }

  /** Takes the server end of a new socket, held the given way. */
  accept(ws: WebSocket, holding: SocketMode): void {
    switch (holding) {
      case "hibernatable":
        this.ctx.acceptWebSocket(ws);
        break;
      case "streaming":
        ws.accept();
        this.streaming.add(ws);
        ws.addEventListener("message", (event) => {
          const data = event.data as string | ArrayBuffer;
          // As the runtime answers a hibernatable socket's: the session never sees it.
          if (data === KEEPALIVE) {
            this.keptAt.set(ws, Date.now());
            sendText(ws, KEEPALIVE);
            return;
          }
          void this.handlers.webSocketMessage(ws, data);
        });
        ws.addEventListener("close", (event) => {
          this.streaming.delete(ws);
          void this.handlers.webSocketClose(ws, event.code, event.reason, event.wasClean);
        });
        ws.addEventListener("error", (event) => {
          this.streaming.delete(ws);
          void this.handlers.webSocketError(ws, event.error);
        });
        break;
      default: {
        const unreachable: never = holding;
        throw new Error(`unknown socket holding ${String(unreachable)}`);
      }
    }
    ws.binaryType = "arraybuffer";
  }

  /** Every socket the object holds (closed ones the runtime still lists included). */
  all(): WebSocket[] {
    const hibernatable = this.ctx.getWebSockets();
    return this.streaming.size === 0 ? hibernatable : [...hibernatable, ...this.streaming];
  }

  /** When the socket's last keepalive was answered (ms since the epoch), or null. */
  keepaliveAt(ws: WebSocket): number | null {
    if (this.streaming.has(ws)) return this.keptAt.get(ws) ?? null;
    return this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? null;
  }
}
