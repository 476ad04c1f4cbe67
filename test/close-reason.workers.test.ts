import { describe, expect, it } from "vitest";
import { closeReason } from "../src/close-reason.js";
import { closeQuietly } from "../src/session/sockets.js";

/**
 * Found by the attack of 2026-12-02: a Telnyx start in a codec liveline does not speak was
 * refused with a reason of 126 bytes; `close` threw on it, quietly, and the stream stayed open
 * until its start timer. A reason is cut to the 123 bytes a close frame holds.
 */
const REFUSAL =
  "not a start the carrier sends: the stream carries G722 at 16000 Hz (1 channels): liveline speaks PCMU or PCMA at 8000 Hz, mono";

function closedWith(close: (ws: WebSocket) => void): Promise<{ code: number; reason: string }> {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  client.accept();
  const closed = new Promise<{ code: number; reason: string }>((ok) =>
    client.addEventListener("close", (e) => ok({ code: e.code, reason: e.reason })),
  );
  close(server);
  return closed;
}

describe("a socket closed with a long reason", () => {
  it("closes, with the reason cut to 123 bytes and marked", async () => {
    expect(new TextEncoder().encode(REFUSAL).length).toBeGreaterThan(123);
    const { code, reason } = await closedWith((ws) => closeQuietly(ws, 1008, REFUSAL));
    expect(code).toBe(1008);
    expect(reason.endsWith("…")).toBe(true);
    expect(REFUSAL.startsWith(reason.slice(0, -1))).toBe(true);
    expect(new TextEncoder().encode(reason).length).toBeLessThanOrEqual(123);
  });

  it("keeps a short reason, and cuts multi-byte text on a character", () => {
    expect(closeReason("done")).toBe("done");
    const cut = closeReason("é".repeat(100));
    expect(new TextEncoder().encode(cut).length).toBeLessThanOrEqual(123);
    expect(cut).toBe(`${"é".repeat(60)}…`);
  });

  it("control: the runtime refuses a close with the whole reason", () => {
    const [, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    server.accept();
    expect(() => server.close(1008, REFUSAL)).toThrow();
  });
});
