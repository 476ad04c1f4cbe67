/**
 * Ready-made transports for the carrier stand-in. Twilio itself reaches liveline over the
 * internet; tests reach it through whatever runs it.
 */
import type { CarrierTransport } from "./call-stand-in.js";

/** The runtime's own fetch and WebSocket (Node 22, a browser): a gateway at a real URL. */
export function webTransport(): CarrierTransport {
  return {
    fetch: (request) => fetch(request),
    openWebSocket: async (url) => new WebSocket(url),
  };
}

/**
 * A Worker's fetch handler (in workerd tests, `exports.default` or `SELF`): the webhook is a
 * request, the stream an upgrade request whose response carries the socket.
 */
export function fetcherTransport(fetcher: {
  fetch(request: Request): Promise<Response>;
}): CarrierTransport {
  return {
    fetch: (request) => fetcher.fetch(request),
    openWebSocket: async (url) => {
      const response = await fetcher.fetch(
        new Request(url.replace(/^ws(s?):/, "http$1:"), { headers: { Upgrade: "websocket" } }),
      );
      const socket = response.webSocket;
      if (socket === null || socket === undefined)
        throw new Error(`the stream URL answered ${response.status}, not a WebSocket: ${url}`);
      socket.accept();
      return socket;
    },
  };
}
