/**
 * Conformance against every real recorded session (test/fixtures/gemini/recorded and
 * recorded-vertex): each server frame decodes with ok:true to exactly the listed events,
 * and each client frame is a valid client message.
 */
import { describe, expect, it } from "vitest";
import { createDecoderState, decodeServerFrame } from "../../../src/providers/gemini/decode.js";
import { ClientMessage } from "../../../src/providers/gemini/schemas.js";
import { listSessions, type RecordedSession } from "./fixtures.js";
import { type EventSummary, summarize } from "./summarize.js";

const setup: EventSummary = { type: "setup_complete" };
const text = (t: string): EventSummary => ({ type: "text_delta", text: t });
const transcript = (t: string): EventSummary => ({ type: "transcript_delta", text: t });
const audio = (bytes: number): EventSummary => ({ type: "audio_delta", bytes });

/** Per server frame, in order, the events it must produce. */
const EXPECTED: Record<string, EventSummary[][]> = {
  "recorded/live_ML_Dev_handle_activity_start_and_end": [
    [setup],
    [text("Yeah")],
    [text(", I can hear you. What's up?")],
  ],
  "recorded/live_ML_Dev_should_receive_transcription_in_async_session_with_transcription_enabled": [
    [setup],
    [transcript("We")],
    [
      transcript(
        " could talk about anything you like. Perhaps you have a hobby or an interest you",
      ),
    ],
    [transcript("'d like to discuss, or maybe there's a topic you've been curious about lately.")],
  ],
  "recorded/live_ML_Dev_should_reply_to_realtime_audio_input": [
    [setup],
    [text("Yes")],
    [text(", I can hear you clearly. How may I assist you?")],
  ],
  "recorded/live_ML_Dev_should_reply_to_realtime_text_input": [
    [setup],
    [text("Yes, I'")],
    [text("m here! How can I help you today?")],
  ],
  "recorded/live_ML_Dev_should_respond_to_realtime_media-audio_input": [
    [setup],
    [text("Yes")],
    [text(", I can hear you clearly. How may I help you?")],
  ],
  "recorded/live_ML_Dev_should_return_error_for_invalid_input_in_async_session": [[setup]],
  // generationComplete alone, then turnComplete + usageMetadata in one frame (usage first:
  // it is counted for the turn that frame ends).
  "recorded/live_ML_Dev_should_send_content_dict_in_async_session": [
    [setup],
    [{ type: "generation_complete" }],
    [
      {
        type: "usage",
        usage: {
          promptTokens: 515,
          responseTokens: 31,
          totalTokens: 546,
          promptByModality: { TEXT: 515 },
          responseByModality: { TEXT: 31 },
        },
      },
      { type: "turn_complete" },
    ],
  ],
  "recorded/live_ML_Dev_should_send_text_in_async_session": [
    [setup],
    [{ type: "generation_complete" }],
    [
      {
        type: "usage",
        usage: {
          promptTokens: 515,
          responseTokens: 38,
          totalTokens: 553,
          promptByModality: { TEXT: 515 },
          responseByModality: { TEXT: 38 },
        },
      },
      { type: "turn_complete" },
    ],
  ],
  // executableCode part first (ignored: not model text), then the one real call.
  "recorded/live_ML_Dev_should_send_tool_response": [
    [setup],
    [],
    [
      {
        type: "tool_call",
        calls: [
          {
            id: "function-call-5831923424298605773",
            name: "get_current_weather",
            args: { location: "Redmond, WA" },
          },
        ],
      },
    ],
  ],
  "recorded/live_ML_Dev_should_send_tool_response_with_function_responses": [[setup]],
  "recorded-vertex/live_Vertex_should_initialize_session_with_publishers_prefix": [[setup]],
  "recorded-vertex/live_Vertex_should_initialize_session_without_prefix": [[setup]],
  // Vertex opens transcription with an empty `outputTranscription: {}`: no event.
  "recorded-vertex/live_Vertex_should_receive_transcription_in_async_session_with_transcription_enabled":
    [[setup], [], [transcript("We")]],
  "recorded-vertex/live_Vertex_should_respond_to_realtime_media-audio_input": [
    [setup],
    [text("Yes")],
    [text(", I can hear you. How can I help you today?\n")],
  ],
  // role "model" + inlineData "audio/pcm" (no rate): 12800 base64 chars = 9600 bytes.
  "recorded-vertex/live_Vertex_should_return_error_for_invalid_input_in_async_session": [
    [setup],
    [audio(9600)],
  ],
  "recorded-vertex/live_Vertex_should_send_content_dict_in_async_session": [
    [setup],
    [audio(9600)],
    [audio(11520)],
  ],
  "recorded-vertex/live_Vertex_should_send_text_in_async_session": [
    [setup],
    [audio(9600)],
    [audio(11520)],
  ],
  // A UUID call id, then generationComplete.
  "recorded-vertex/live_Vertex_should_send_tool_response": [
    [setup],
    [
      {
        type: "tool_call",
        calls: [
          {
            id: "8acdafcd-9c55-44be-84da-da3d2612f9d1",
            name: "get_current_weather",
            args: { location: "Redmond, WA" },
          },
        ],
      },
    ],
    [{ type: "generation_complete" }],
  ],
  "recorded-vertex/live_Vertex_should_send_tool_response_with_function_responses": [
    [setup],
    [audio(9600)],
  ],
};

const sessions: RecordedSession[] = [
  ...listSessions("recorded"),
  ...listSessions("recorded-vertex"),
];

describe("recorded Gemini Live sessions", () => {
  it("has an expectation for every recorded session and no stale ones", () => {
    expect(sessions.map((s) => s.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  describe.each(sessions.map((s) => [s.name, s] as const))("%s", (name, session) => {
    it("decodes every server frame (as text) to the expected events", () => {
      const state = createDecoderState();
      const got = session.frames
        .filter((f) => f.dir === "server")
        .map((f) => {
          const result = decodeServerFrame(f.text, state);
          if (!result.ok) throw new Error(`${name}: ${result.error.message}`);
          return summarize(result.events);
        });
      expect(got).toEqual(EXPECTED[name]);
    });

    it("decodes every server frame identically when it arrives binary", () => {
      const asText = createDecoderState();
      const asBytes = createDecoderState();
      const asBuffer = createDecoderState();
      for (const f of session.frames.filter((frame) => frame.dir === "server")) {
        const expected = decodeServerFrame(f.text, asText);
        expect(decodeServerFrame(f.bytes, asBytes)).toEqual(expected);
        const copy = new Uint8Array(f.bytes); // an ArrayBuffer holding exactly the frame
        expect(decodeServerFrame(copy.buffer, asBuffer)).toEqual(expected);
      }
    });

    it("every recorded client frame is a valid client message", () => {
      const clientFrames = session.frames.filter((f) => f.dir === "client");
      expect(clientFrames.length).toBeGreaterThan(0);
      for (const f of clientFrames) {
        const parsed = ClientMessage.safeParse(JSON.parse(f.text));
        expect(parsed.success, `${name}: ${f.text.slice(0, 120)}`).toBe(true);
      }
    });
  });

  it("Vertex setupComplete carries a sessionId the schema keeps", () => {
    const vertex = sessions.find((s) => s.name.includes("Vertex_should_initialize_session_with"));
    const frame = vertex?.frames.find((f) => f.dir === "server");
    expect(JSON.parse(frame?.text ?? "{}")).toEqual({
      setupComplete: { sessionId: "f162d11d-434a-4212-8a31-f1a4843cad11" },
    });
    expect(decodeServerFrame(frame?.text ?? "", createDecoderState())).toEqual({
      ok: true,
      events: [{ type: "setup_complete" }],
    });
  });

  it("Vertex audio decodes to the recorded bytes (PCM16, first sample 0x0001)", () => {
    const s = sessions.find((x) => x.name.endsWith("Vertex_should_send_text_in_async_session"));
    const frame = s?.frames.filter((f) => f.dir === "server")[1];
    const result = decodeServerFrame(frame?.text ?? "", createDecoderState());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [event] = result.events;
    expect(event?.type).toBe("audio_delta");
    if (event?.type !== "audio_delta") return;
    // The recorded base64 starts "AQAAAAAA…": bytes 01 00 00 00 …
    expect(Array.from(event.pcm.subarray(0, 4))).toEqual([1, 0, 0, 0]);
  });
});
