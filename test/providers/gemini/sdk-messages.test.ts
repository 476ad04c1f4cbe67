/** The SDK authors' hand-written messages (test/fixtures/gemini/sdk-messages). */
import { describe, expect, it } from "vitest";
import { createDecoderState, decodeServerFrame } from "../../../src/providers/gemini/decode.js";
import { encodeSetup } from "../../../src/providers/gemini/encode.js";
import {
  ClientMessage,
  ServerMessage,
  SessionResumptionUpdate,
} from "../../../src/providers/gemini/schemas.js";
import { loadSdkMessages, type SdkMessage } from "./fixtures.js";

const server = loadSdkMessages("server");

function frameOf(m: SdkMessage): string {
  return m.msg === null ? (m.raw ?? "") : JSON.stringify(m.msg);
}

function pick(testName: string, nth = 0): SdkMessage {
  const found = server.filter((m) => m.test.startsWith(testName))[nth];
  if (found === undefined) throw new Error(`no SDK message for ${testName}`);
  return found;
}

function decodeOne(m: SdkMessage) {
  return decodeServerFrame(frameOf(m), createDecoderState());
}

describe("SDK unit-test server messages", () => {
  it("all JSON messages decode ok; the non-JSON one is a protocol error", () => {
    expect(server).toHaveLength(13);
    const results = server.map((m) => [m.test, decodeOne(m).ok] as const);
    expect(results.filter(([, ok]) => !ok).map(([test]) => test)).toEqual([
      "test_async_session_receive_error: non-JSON frame must raise",
    ]);
  });

  it('goAway "10s" → go_away 10000 ms (both SDKs)', () => {
    const py = decodeOne(pick("test_async_go_away"));
    const js = decodeOne(pick("session should return goAway message"));
    const expected = { ok: true, events: [{ type: "go_away", timeLeftMs: 10000 }] };
    expect(py).toEqual(expected);
    expect(js).toEqual(expected);
  });

  it('resumption update with string index and resumable "true" → resumable true', () => {
    const m = pick("test_async_session_resumption_update");
    const parsed = SessionResumptionUpdate.parse(
      (m.msg as { sessionResumptionUpdate: unknown }).sessionResumptionUpdate,
    );
    expect(parsed.lastConsumedClientMessageIndex).toBe("123456789");
    expect(parsed.resumable).toBe("true");
    expect(decodeOne(m)).toEqual({
      ok: true,
      events: [{ type: "resumption_update", handle: "test_handle", resumable: true }],
    });
    expect(decodeOne(pick("sessionResumptionUpdate"))).toEqual({
      ok: true,
      events: [{ type: "resumption_update", handle: "test_handle", resumable: true }],
    });
  });

  it("a call without id gets a synthetic id that is stable across decoders", () => {
    const m = pick("test_async_session_receive_tool_call");
    const first = decodeOne(m);
    const second = decodeOne(m);
    const expected = {
      ok: true,
      events: [
        {
          type: "tool_call",
          calls: [
            {
              id: "liveline-call-1-get_current_weather",
              name: "get_current_weather",
              args: { location: "San Francisco", unit: "C" },
            },
          ],
        },
      ],
    };
    expect(first).toEqual(expected);
    expect(second).toEqual(expected);
  });

  it("VAD start-of-speech signal → speech_started", () => {
    expect(decodeOne(pick("test_async_session_receive_vad_signal"))).toEqual({
      ok: true,
      events: [{ type: "speech_started" }],
    });
  });

  it("non-JSON frame → protocol_error, no throw", () => {
    const result = decodeOne(pick("test_async_session_receive_error"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("protocol_error");
    expect(result.error.message).toContain("not JSON");
  });

  it("text then turnComplete with NEED_MORE_INPUT in one frame", () => {
    expect(decodeOne(pick("test_receive_server_content_with_turn_reason"))).toEqual({
      ok: true,
      events: [
        { type: "text_delta", text: "Please provide more details." },
        { type: "turn_complete", reason: "NEED_MORE_INPUT" },
      ],
    });
  });

  it("transcriptions: input with finished, output text", () => {
    expect(decodeOne(pick("test_async_session_receive_transcription", 0))).toEqual({
      ok: true,
      events: [{ type: "input_transcript", text: "test_input", finished: true }],
    });
    expect(decodeOne(pick("test_async_session_receive_transcription", 1))).toEqual({
      ok: true,
      events: [{ type: "transcript_delta", text: "test_output" }],
    });
  });

  it('inlineData "audio/pcm" MDAwMDAw → the six bytes "000000"', () => {
    const result = decodeOne(pick("test_async_session_receive_audio"));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.events).toHaveLength(1);
    const [event] = result.events;
    expect(event?.type === "audio_delta" && Array.from(event.pcm)).toEqual([
      48, 48, 48, 48, 48, 48,
    ]);
  });

  it("every JSON server message validates against ServerMessage", () => {
    for (const m of server.filter((x) => x.msg !== null)) {
      expect(ServerMessage.safeParse(m.msg).success, m.test).toBe(true);
    }
  });
});

describe("SDK unit-test client messages", () => {
  const client = loadSdkMessages("client");

  it("the expected setup with sessionResumption validates, and ours puts the handle there", () => {
    expect(client).toHaveLength(1);
    const sdk = client[0]?.msg as { setup: { sessionResumption: { handle: string } } };
    expect(ClientMessage.safeParse(sdk).success).toBe(true);
    const ours = encodeSetup({
      model: "gemini-2.0-flash-live-preview-04-09",
      resumptionHandle: "test_handle",
    });
    expect(ours.setup.model).toBe("models/gemini-2.0-flash-live-preview-04-09");
    expect(ours.setup.sessionResumption).toEqual({ handle: sdk.setup.sessionResumption.handle });
    expect(ours.setup.generationConfig).toEqual({ responseModalities: ["AUDIO"] });
  });
});
