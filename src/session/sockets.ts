import type { ServerFrame } from "../vocabulary/frames.js";

/** How the session reaches its client sockets (the object's hibernatable WebSockets). */
export interface ClientSockets {
  all(): WebSocket[];
  byId(clientId: string): WebSocket | undefined;
}

/** A frame as JSON text; a socket that is closing is skipped (its close handler cleans up). */
export function send(ws: WebSocket, frame: ServerFrame): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // closing
  }
}

/** A frame already encoded (a durable frame is encoded once, for every client and the log). */
export function sendText(ws: WebSocket, json: string): void {
  try {
    ws.send(json);
  } catch {
    // closing
  }
}

/** Binary audio. */
export function sendRaw(ws: WebSocket, data: Uint8Array): void {
  try {
    ws.send(data);
  } catch {
    // closing
  }
}

export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
