import { describe, expect, it } from "vitest";
import { GeminiLiveAdapter } from "../../../src/providers/gemini/adapter.js";
import { loadSession } from "./fixtures.js";

describe("GeminiLiveAdapter", () => {
  it("looks up capabilities and encodes compact JSON text frames", () => {
    const adapter = new GeminiLiveAdapter({
      model: "gemini-2.5-flash-native-audio-preview-12-2025",
      endpoint: "developer",
    });
    expect(adapter.capabilities.resultScheduling).toBe(true);
    const frames = adapter.encode({
      type: "tool_responses",
      responses: [{ callId: "c1", name: "chips", result: { shown: 2 }, scheduling: "silent" }],
    });
    expect(frames).toEqual([
      '{"toolResponse":{"functionResponses":[{"id":"c1","name":"chips","response":{"output":{"shown":2}},"scheduling":"SILENT"}]}}',
    ]);
  });

  it("explicit capabilities are used as given", () => {
    const adapter = new GeminiLiveAdapter({
      model: "gemini-2.5-flash-native-audio-preview-12-2025",
      endpoint: "developer",
      capabilities: {
        nonBlockingCalls: true,
        resultScheduling: false,
        turnCompleteWaitsForResults: false,
        silentHonoured: true,
        responsesOnRequest: false,
      },
    });
    const [frame] = adapter.encode({
      type: "tool_responses",
      responses: [{ callId: "c1", name: "chips", result: {}, scheduling: "silent" }],
    });
    expect(frame).not.toContain("scheduling");
  });

  it("setupMessage uses the adapter's model", () => {
    const adapter = new GeminiLiveAdapter({
      model: "gemini-live-2.5-flash-preview",
      endpoint: "developer",
    });
    expect(JSON.parse(adapter.setupMessage({ responseModality: "TEXT" }))).toEqual({
      setup: {
        model: "models/gemini-live-2.5-flash-preview",
        generationConfig: { responseModalities: ["TEXT"] },
        inputAudioTranscription: {},
        outputAudioTranscription: {},
        sessionResumption: {},
      },
    });
  });

  it("decodes a recorded session's binary frames and dedupes across frames", () => {
    const adapter = new GeminiLiveAdapter({
      model: "gemini-live-2.5-flash-preview",
      endpoint: "developer",
    });
    const server = loadSession("recorded", "live_ML_Dev_should_send_tool_response").frames.filter(
      (f) => f.dir === "server",
    );
    const types = server.flatMap((f) => {
      const r = adapter.decode(f.bytes);
      return r.ok ? r.events.map((e) => e.type) : ["error"];
    });
    expect(types).toEqual(["setup_complete", "tool_call"]);
    // The same toolCall again (e.g. the modelTurn twin) yields nothing new.
    const again = adapter.decode(server[2]?.bytes ?? new Uint8Array());
    expect(again).toEqual({ ok: true, events: [] });
  });

  it("synthetic ids carry the connection prefix", () => {
    const adapter = new GeminiLiveAdapter({
      model: "m",
      endpoint: "developer",
      callIdPrefix: "c3",
    });
    expect(adapter.decode('{"toolCall":{"functionCalls":[{"name":"f"}]}}')).toEqual({
      ok: true,
      events: [{ type: "tool_call", calls: [{ id: "c3-1-f", name: "f", args: {} }] }],
    });
  });

  it("encodeContext: nothing for an empty history, one clientContent frame otherwise", () => {
    const adapter = new GeminiLiveAdapter({ model: "m", endpoint: "developer" });
    expect(adapter.encodeContext({ items: [] })).toEqual([]);
    expect(adapter.encodeContext({ items: [{ role: "user", text: "hi" }] })).toEqual([
      '{"clientContent":{"turns":[{"role":"user","parts":[{"text":"hi"}]}],"turnComplete":true}}',
    ]);
  });

  it("user text: clientContent on 2.x, realtimeInput.text on 3.1; Vertex sends no audioStreamEnd", () => {
    const dev25 = new GeminiLiveAdapter({
      model: "gemini-live-2.5-flash-preview",
      endpoint: "developer",
    });
    expect(dev25.encode({ type: "user_text", text: "hi" })[0]).toContain('"clientContent"');
    const dev31 = new GeminiLiveAdapter({
      model: "gemini-3.1-flash-live-preview",
      endpoint: "developer",
    });
    expect(dev31.encode({ type: "user_text", text: "hi" })).toEqual([
      '{"realtimeInput":{"text":"hi"}}',
    ]);
    expect(dev31.encode({ type: "nudge", text: "go on" })).toEqual([
      '{"realtimeInput":{"text":"go on"}}',
    ]);
    expect(dev25.encode({ type: "audio_end" })).toEqual([
      '{"realtimeInput":{"audioStreamEnd":true}}',
    ]);
    const vertex = new GeminiLiveAdapter({
      model: "gemini-live-2.5-flash-preview",
      endpoint: "vertex",
    });
    expect(vertex.encode({ type: "audio_end" })).toEqual([]);
  });

  it("classifies close codes", () => {
    const adapter = new GeminiLiveAdapter({ model: "m", endpoint: "vertex" });
    expect([1000, 1007, 1011].map((c) => adapter.classifyClose(c))).toEqual([
      "normal",
      "fatal",
      "retry",
    ]);
  });
});
