/** Opening a provider's WebSocket from a Worker (workerd's fetch-style upgrade). */

/**
 * workerd opens an outbound WebSocket with a fetch carrying `Upgrade: websocket`, and its
 * fetch takes only http(s) URLs: wss:// becomes https://, ws:// becomes http://.
 */
export function fetchableUrl(url: string): string {
  return url.replace(/^wss:/i, "https:").replace(/^ws:/i, "http:");
}

/** Opens an outbound WebSocket from a fetch-style upgrade response. */
export async function acceptUpgrade(response: Promise<Response>): Promise<WebSocket> {
  const res = await response;
  const ws = res.webSocket;
  if (!ws) throw new Error(`upgrade refused with HTTP ${res.status}`);
  ws.accept();
  ws.binaryType = "arraybuffer";
  return ws;
}

/** Opens `url` as a WebSocket with extra request headers (credentials, protocols). */
export function openWebSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<WebSocket> {
  return acceptUpgrade(fetch(fetchableUrl(url), { headers: { Upgrade: "websocket", ...headers } }));
}
