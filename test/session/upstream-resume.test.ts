/**
 * A resumed model connection opens only once the socket it replaces has closed: Gemini
 * refuses a resume with 1011 while an earlier socket of the same session is still open
 * (aicc2025/sip-to-ai PR #14). The production link (src/session/model-connection.ts) over stand-in
 * sockets whose close handshake ends when the test says; the control is a fresh or rebuilt
 * connection, which waits for nothing.
 */
import { describe, expect, it } from "vitest";
import { CLOSE_WAIT_MS, ModelConnection } from "../../src/session/model-connection.js";
import type { ProviderAdapter } from "../../src/vocabulary/provider-adapter.js";

/** A socket whose close completes when the service answers it (`finishClose`). */
class StandInSocket extends EventTarget {
  readyState: number = WebSocket.OPEN;
  readonly sent: string[] = [];
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    if (this.readyState === WebSocket.OPEN) this.readyState = WebSocket.CLOSING;
  }
  finishClose() {
    this.readyState = WebSocket.CLOSED;
    this.dispatchEvent(Object.assign(new Event("close"), { code: 1000, reason: "" }));
  }
}

const adapter: ProviderAdapter = {
  setupFrame: (opts: { resumeHandle?: string | undefined }) =>
    JSON.stringify({ setup: opts.resumeHandle ?? null }),
  decode: () => ({ ok: true, events: [] }),
  encode: () => [],
  encodeContext: () => [],
  classifyClose: () => "retry",
} as unknown as ProviderAdapter;

function link() {
  const sockets: StandInSocket[] = [];
  const upstream = new ModelConnection(
    "a",
    () => ({
      target: {
        connect: async () => {
          const ws = new StandInSocket();
          sockets.push(ws);
          return ws as unknown as WebSocket;
        },
        adapter: () => adapter,
        directCallService: undefined,
      },
      spec: { systemInstruction: "", tools: [] },
    }),
    { protocolError: () => {} },
  );
  return { upstream, sockets };
}

const settle = () => new Promise((r) => setTimeout(r, 10));
const rebuild = () => ({ items: [] });

describe("a resume waits for the socket it replaces to close", () => {
  it("connects only after the old socket's close handshake is done", async () => {
    const { upstream, sockets } = link();
    upstream.open({ mode: "fresh" }, rebuild, "a");
    await settle();
    expect(sockets).toHaveLength(1);
    upstream.open({ mode: "resume", handle: "h1" }, rebuild, "a");
    await settle();
    // The old one is closing, not closed: no second socket yet.
    expect(sockets[0]!.readyState).toBe(WebSocket.CLOSING);
    expect(sockets).toHaveLength(1);
    sockets[0]!.finishClose();
    await settle();
    expect(sockets).toHaveLength(2);
    expect(sockets[1]!.sent).toEqual([JSON.stringify({ setup: "h1" })]);
  });

  it(`gives up waiting after ${CLOSE_WAIT_MS} ms (a service that never answers the close)`, async () => {
    const { upstream, sockets } = link();
    upstream.open({ mode: "fresh" }, rebuild, "a");
    await settle();
    upstream.open({ mode: "resume", handle: "h1" }, rebuild, "a");
    await new Promise((r) => setTimeout(r, CLOSE_WAIT_MS + 50));
    expect(sockets).toHaveLength(2);
  });

  it("control: a rebuilt connection does not wait for the old socket", async () => {
    const { upstream, sockets } = link();
    upstream.open({ mode: "fresh" }, rebuild, "a");
    await settle();
    upstream.open({ mode: "rebuild" }, rebuild, "a");
    await settle();
    expect(sockets[0]!.readyState).toBe(WebSocket.CLOSING);
    expect(sockets).toHaveLength(2);
  });
});
