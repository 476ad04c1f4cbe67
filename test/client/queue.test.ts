/**
 * liveline/client's send queue while it is not connected, with a stand-in socket class (the
 * real-gateway behaviour is test/client's): text is kept, audio is bounded (oldest dropped
 * first, counted), and what is kept goes out in order once the connection is ready.
 */
import { describe, expect, it } from "vitest";
import { type ConnectOptions, LivelineClient } from "../../src/client/client.js";
import { clientInput, JsonClientFrame } from "../../src/session/client-frames.js";

class FakeSocket extends EventTarget {
  static last: FakeSocket | null = null;
  binaryType = "blob";
  readonly sent: (string | ArrayBuffer)[] = [];
  constructor(readonly url: string) {
    super();
    FakeSocket.last = this;
  }
  send(data: string | ArrayBuffer) {
    this.sent.push(data);
  }
  close() {}
  /** The server's side: the socket opens and `ready` arrives. */
  ready(lastSeq = 0) {
    this.dispatchEvent(new Event("open"));
    const message = new MessageEvent("message", {
      data: JSON.stringify({ type: "ready", sessionId: "s", lastSeq, resumed: true }),
    });
    this.dispatchEvent(message);
  }
}

/** A client on the stand-in socket class, with `extra` options. */
const fakeClient = (extra: Partial<ConnectOptions> = {}) =>
  new LivelineClient({
    baseUrl: "http://gateway.test",
    sessionId: "s",
    getToken: async () => "t",
    WebSocket: FakeSocket as unknown as typeof WebSocket,
    ...extra,
  });

const chunk = (ms: number) => new Uint8Array(ms * 32).buffer; // 16 kHz PCM16

describe("liveline/client while not connected", () => {
  it("keeps every line, bounds audio to maxQueuedAudioMs (oldest dropped, counted), sends in order", async () => {
    const client = fakeClient({ maxQueuedAudioMs: 100 }).start();
    client.sendText("first");
    for (let i = 0; i < 10; i++) client.sendAudio(chunk(20)); // 200 ms: 5 chunks too many
    client.sendText("second");
    expect(client.droppedAudioChunks).toBe(5);
    await new Promise((r) => setTimeout(r, 0)); // the token, then the socket
    const ws = FakeSocket.last!;
    expect(ws.url).toContain("resumeFrom=0");
    expect(ws.binaryType).toBe("arraybuffer");
    ws.ready();
    const kinds = ws.sent.map((d) => (typeof d === "string" ? JSON.parse(d).type : "audio"));
    expect(kinds).toEqual(["text", "audio", "audio", "audio", "audio", "audio", "text"]);
    client.close();
  });
});

describe("liveline/client's lines across a reconnect", () => {
  it("sends again, with the same textId and first, a line whose user frame never came; not one that came", async () => {
    const client = fakeClient({ backoff: { baseMs: 1, maxMs: 1 } }).start();
    await new Promise((r) => setTimeout(r, 0));
    const first = FakeSocket.last!;
    first.ready();
    client.sendText("confirmed");
    client.sendText("lost");
    const [confirmed, lost] = first.sent.map((d) => JSON.parse(d as string));
    expect(confirmed.textId).not.toBe(lost.textId);
    const user = (seq: number, frame: { text: string; textId: string }) =>
      first.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({
            type: "user",
            seq,
            turnId: `t${seq}`,
            text: frame.text,
            textId: frame.textId,
          }),
        }),
      );
    user(1, confirmed);
    expect(client.unconfirmedLines).toBe(1);
    client.dropConnection();
    client.sendText("while down");
    await new Promise((r) => setTimeout(r, 20));
    const second = FakeSocket.last!;
    expect(second).not.toBe(first);
    second.ready(1);
    const again = second.sent.map((d) => JSON.parse(d as string));
    expect(again.map((f) => f.text)).toEqual(["lost", "while down"]);
    expect(again[0].textId).toBe(lost.textId);
    client.close();
  });
});

describe("liveline/client's tool results across a reconnect", () => {
  /** The server's frame on `ws`. */
  const frame = (ws: FakeSocket, body: Record<string, unknown>) =>
    ws.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(body) }));
  const call = (seq: number, callId: string) => ({
    type: "tool_call",
    seq,
    turnId: "t1",
    callId,
    name: "show_chips",
    args: {},
    runOn: "client",
  });

  /**
   * Two calls answered on a socket that then drops (its session's object restarted, say);
   * the next connection's replay settles `settledInReplay` of them. What the client sends
   * on the new connection.
   */
  async function resultsAfterReconnect(settledInReplay: string[]) {
    const client = fakeClient({
      backoff: { baseMs: 1, maxMs: 1 },
      tools: { show_chips: async () => ({ shown: true }) },
    }).start();
    await new Promise((r) => setTimeout(r, 0));
    const first = FakeSocket.last!;
    first.ready();
    frame(first, call(1, "c1"));
    frame(first, call(2, "c2"));
    await new Promise((r) => setTimeout(r, 0));
    expect(first.sent.map((d) => JSON.parse(d as string).callId)).toEqual(["c1", "c2"]);
    client.dropConnection();
    await new Promise((r) => setTimeout(r, 20));
    const second = FakeSocket.last!;
    const lastSeq = 2 + settledInReplay.length;
    second.ready(lastSeq);
    for (const [i, callId] of settledInReplay.entries())
      frame(second, {
        type: "tool_result",
        seq: 3 + i,
        turnId: "t1",
        callId,
        name: "show_chips",
        result: { shown: true },
      });
    await new Promise((r) => setTimeout(r, 0));
    client.close();
    return second.sent.map((d) => JSON.parse(d as string).callId);
  }

  it("sends again, once, a result the gateway never recorded; not one its replay shows recorded", async () => {
    expect(await resultsAfterReconnect([])).toEqual(["c1", "c2"]);
    expect(await resultsAfterReconnect(["c1"])).toEqual(["c2"]);
  });
});

describe("liveline/client's lines the gateway refused", () => {
  it("a line dropped for rate goes again in the next second (found by the attack: it waited for a reconnect)", async () => {
    const client = fakeClient().start();
    await new Promise((r) => setTimeout(r, 0));
    const ws = FakeSocket.last!;
    ws.ready();
    client.sendText("one too many");
    const error = {
      type: "error",
      code: "rate_limited",
      message: "text frame dropped: more than 100 control frames in a second",
      fatal: false,
    };
    ws.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(error) }));
    expect(ws.sent).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_100));
    expect(ws.sent).toEqual([ws.sent[0], ws.sent[0]]);
    client.close();
  });

  it("a blank line is refused at once (the gateway would refuse it: it would wait for ever)", () => {
    const client = fakeClient();
    expect(() => client.sendText("  ")).toThrow(RangeError);
    expect(client.unconfirmedLines).toBe(0);
  });

  it("a line too long for the gateway's frame limit is refused at once, at the gateway's own measure", async () => {
    const client = fakeClient({ maxFrameBytes: 1_000 }).start();
    await new Promise((r) => setTimeout(r, 0));
    const ws = FakeSocket.last!;
    ws.ready();
    // 2 bytes a character in UTF-8: 450 of them fit in 1,000 bytes with the frame around them,
    // 500 do not.
    client.sendText("é".repeat(450));
    expect(() => client.sendText("é".repeat(500))).toThrow(RangeError);
    expect(client.unconfirmedLines).toBe(1);
    expect(ws.sent).toHaveLength(1);
    // The gateway with the same limit takes the one sent (no frame_too_large).
    expect(clientInput("c", ws.sent[0] as string, 1_000).type).toBe("client_text");
    client.close();
  });
});

describe("what liveline/client sends is what the server parses (its own zod schemas)", () => {
  it("text, audio_end, played, and a client tool's result or error", async () => {
    const client = fakeClient({
      tools: {
        ok: () => ({ shown: true }),
        fails: () => {
          throw new Error("no screen");
        },
      },
    }).start();
    await new Promise((r) => setTimeout(r, 0));
    const ws = FakeSocket.last!;
    ws.ready();
    client.sendText("hello");
    client.endAudio();
    client.played(1234.4);
    const call = (seq: number, name: string) =>
      ws.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({
            type: "tool_call",
            seq,
            turnId: "t1",
            callId: `c${seq}`,
            name,
            args: {},
            runOn: "client",
          }),
        }),
      );
    call(1, "ok");
    call(2, "fails");
    call(3, "not_a_tool");
    await new Promise((r) => setTimeout(r, 10));
    const json = ws.sent.filter((d): d is string => typeof d === "string");
    const types = json.map((d) => JSON.parse(d).type);
    expect(types).toEqual([
      "text",
      "audio_end",
      "played",
      "tool_result",
      "tool_result",
      "tool_result",
    ]);
    for (const frame of json)
      expect(JsonClientFrame.safeParse(JSON.parse(frame)).success, frame).toBe(true);
    client.close();
  });
});
