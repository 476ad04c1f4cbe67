import { describe, expect, it } from "vitest";
import { listSessions, loadSession, parseWebsocketLog } from "./fixtures.js";

const enc = new TextEncoder();

describe("websocket.log parser", () => {
  it("splits back-to-back frames by byte length, including multi-byte UTF-8", () => {
    const a = '{"x":"é"}\n'; // 11 bytes, 10 chars
    const b = '{\n  "y": 1\n}\n\n';
    const log = `>${enc.encode(a).length} ${a}<${enc.encode(b).length} ${b}`;
    const frames = parseWebsocketLog(enc.encode(log));
    expect(frames.map((f) => [f.dir, f.text])).toEqual([
      ["client", a],
      ["server", b],
    ]);
  });

  it("rejects a truncated frame", () => {
    expect(() => parseWebsocketLog(enc.encode(">50 {}"))).toThrow(/overruns/);
  });

  it("reads the recorded tool session frame by frame", () => {
    const s = loadSession("recorded", "live_ML_Dev_should_send_tool_response");
    expect(s.frames.map((f) => [f.dir, f.bytes.length])).toEqual([
      ["client", 402],
      ["server", 27],
      ["client", 129],
      ["server", 261],
      ["server", 224],
    ]);
  });

  it("finds all recorded sessions", () => {
    expect(listSessions("recorded")).toHaveLength(10);
    expect(listSessions("recorded-vertex")).toHaveLength(9);
  });
});
