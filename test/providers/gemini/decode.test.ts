import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createDecoderState,
  type DecoderState,
  decodeBySchema,
  decodeServerFrame,
} from "../../../src/providers/gemini/decode.js";
import { durationToMs } from "../../../src/providers/gemini/duration.js";
import { summarize } from "./summarize.js";

function decode(msg: unknown, state: DecoderState = createDecoderState()) {
  return decodeServerFrame(JSON.stringify(msg), state);
}

function events(msg: unknown, state: DecoderState = createDecoderState()) {
  const result = decode(msg, state);
  if (!result.ok) throw new Error(result.error.message);
  return summarize(result.events);
}

const call = { id: "c-1", name: "lookup", args: { q: "x" } };
const asPart = (c: object) => ({ serverContent: { modelTurn: { parts: [{ functionCall: c }] } } });
const asToolCall = (c: object) => ({ toolCall: { functionCalls: [c] } });
const toolCallEvent = (calls: object[]) => ({ type: "tool_call", calls });

describe("one call delivered twice (modelTurn part and toolCall)", () => {
  it("part first, then toolCall: one tool_call event", () => {
    const state = createDecoderState();
    expect(events(asPart(call), state)).toEqual([toolCallEvent([call])]);
    expect(events(asToolCall(call), state)).toEqual([]);
  });

  it("toolCall first, then part: one tool_call event", () => {
    const state = createDecoderState();
    expect(events(asToolCall(call), state)).toEqual([toolCallEvent([call])]);
    expect(events(asPart(call), state)).toEqual([]);
  });

  it("a different id is a different call", () => {
    const state = createDecoderState();
    events(asToolCall(call), state);
    expect(events(asToolCall({ ...call, id: "c-2" }), state)).toEqual([
      toolCallEvent([{ ...call, id: "c-2" }]),
    ]);
  });

  it("id-less twins on both channels in one turn are one call (args key order ignored)", () => {
    const state = createDecoderState("t");
    const anon = { name: "lookup", args: { a: 1, b: 2 } };
    expect(events(asPart(anon), state)).toEqual([
      toolCallEvent([{ id: "t-1-lookup", name: "lookup", args: { a: 1, b: 2 } }]),
    ]);
    expect(events(asToolCall({ name: "lookup", args: { b: 2, a: 1 } }), state)).toEqual([]);
  });

  it("two id-less identical calls on the same channel are two calls with distinct ids", () => {
    const state = createDecoderState("t");
    const anon = { name: "ping" };
    expect(events({ toolCall: { functionCalls: [anon, anon] } }, state)).toEqual([
      toolCallEvent([
        { id: "t-1-ping", name: "ping", args: {} },
        { id: "t-2-ping", name: "ping", args: {} },
      ]),
    ]);
  });

  it("after turnComplete an id-less call is new even if it equals an earlier one", () => {
    const state = createDecoderState("t");
    events(asPart({ name: "ping" }), state);
    events({ serverContent: { turnComplete: true } }, state);
    expect(events(asToolCall({ name: "ping" }), state)).toEqual([
      toolCallEvent([{ id: "t-2-ping", name: "ping", args: {} }]),
    ]);
  });

  it("synthetic ids are deterministic for the same input sequence", () => {
    const run = () => {
      const state = createDecoderState("conn7");
      return [asToolCall({ name: "a" }), asToolCall({ name: "b", args: { x: 1 } })].flatMap((m) =>
        events(m, state),
      );
    };
    expect(run()).toEqual(run());
    expect(run()).toEqual([
      toolCallEvent([{ id: "conn7-1-a", name: "a", args: {} }]),
      toolCallEvent([{ id: "conn7-2-b", name: "b", args: { x: 1 } }]),
    ]);
  });
});

describe("several events from one frame, in order", () => {
  it("text, audio, consecutive calls grouped, then turn end", () => {
    const frame = {
      serverContent: {
        modelTurn: {
          parts: [
            { text: "Let me check." },
            { inlineData: { mimeType: "audio/pcm;rate=24000", data: "AAECAw==" } },
            { functionCall: { id: "a", name: "f", args: {} } },
            { functionCall: { id: "b", name: "g" } },
            { executableCode: { language: "PYTHON", code: "print(f())" } },
            { codeExecutionResult: { outcome: "OUTCOME_OK", output: "1" } },
            { text: "thinking…", thought: true },
            { text: "" },
          ],
        },
        outputTranscription: { text: "Let me check." },
        generationComplete: true,
        turnComplete: true,
        turnCompleteReason: "NEED_MORE_INPUT",
        waitingForInput: true,
        interactionStatus: "IDLE",
      },
      usageMetadata: { totalTokenCount: 5 },
    };
    expect(events(frame)).toEqual([
      { type: "text_delta", text: "Let me check." },
      { type: "audio_delta", bytes: 4 },
      toolCallEvent([
        { id: "a", name: "f", args: {} },
        { id: "b", name: "g", args: {} },
      ]),
      { type: "transcript_delta", text: "Let me check." },
      { type: "usage", usage: { promptTokens: 0, responseTokens: 0, totalTokens: 5 } },
      { type: "generation_complete" },
      { type: "turn_complete", reason: "NEED_MORE_INPUT" },
    ]);
  });

  it("a frame with only a thought part is a sign of work, nothing to show (a slow model, not a silent one)", () => {
    const frame = {
      serverContent: { modelTurn: { parts: [{ text: "**Working on it**", thought: true }] } },
    };
    expect(events(frame)).toEqual([{ type: "working" }]);
  });

  it("audio bytes are the decoded base64", () => {
    const result = decode({
      serverContent: {
        modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm", data: "AAECAw==" } }] },
      },
    });
    expect(
      result.ok && result.events[0]?.type === "audio_delta" && Array.from(result.events[0].pcm),
    ).toEqual([0, 1, 2, 3]);
  });

  it("non-audio inlineData is not audio", () => {
    expect(
      events({
        serverContent: {
          modelTurn: { parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }] },
        },
      }),
    ).toEqual([]);
  });

  it("interrupted then turnComplete", () => {
    expect(events({ serverContent: { interrupted: true } })).toEqual([{ type: "interrupted" }]);
    expect(events({ serverContent: { interrupted: true, turnComplete: true } })).toEqual([
      { type: "interrupted" },
      { type: "turn_complete" },
    ]);
  });

  it("input transcription: text, finished flag, empty object skipped", () => {
    expect(events({ serverContent: { inputTranscription: { text: "hi" } } })).toEqual([
      { type: "input_transcript", text: "hi", finished: false },
    ]);
    expect(events({ serverContent: { inputTranscription: { finished: true } } })).toEqual([
      { type: "input_transcript", text: "", finished: true },
    ]);
    expect(events({ serverContent: { inputTranscription: {} } })).toEqual([]);
  });

  it("tool call cancellation", () => {
    expect(events({ toolCallCancellation: { ids: ["a", "b"] } })).toEqual([
      { type: "tool_call_cancellation", ids: ["a", "b"] },
    ]);
  });

  it("voiceActivity ACTIVITY_START → speech_started; end and EOS → nothing", () => {
    expect(events({ voiceActivity: { voiceActivityType: "ACTIVITY_START" } })).toEqual([
      { type: "speech_started" },
    ]);
    expect(events({ voiceActivity: { voiceActivityType: "ACTIVITY_END" } })).toEqual([]);
    expect(
      events({ voiceActivityDetectionSignal: { vadSignalType: "VAD_SIGNAL_TYPE_EOS" } }),
    ).toEqual([]);
  });

  it("usageMetadata alone (as 3.1 sends it) is a usage event, counts normalised", () => {
    expect(
      decode({
        usageMetadata: {
          promptTokenCount: 10,
          responseTokenCount: 4,
          cachedContentTokenCount: 2,
          thoughtsTokenCount: 3,
          promptTokensDetails: [
            { modality: "TEXT", tokenCount: 6 },
            { modality: "AUDIO", tokenCount: 4 },
          ],
          responseTokensDetails: [{ modality: "AUDIO", tokenCount: 4 }],
        },
      }),
    ).toEqual({
      ok: true,
      events: [
        {
          type: "usage",
          usage: {
            promptTokens: 10,
            responseTokens: 4,
            totalTokens: 14,
            cachedTokens: 2,
            thoughtsTokens: 3,
            promptByModality: { TEXT: 6, AUDIO: 4 },
            responseByModality: { AUDIO: 4 },
          },
        },
      ],
    });
  });

  it("unknown extra fields are tolerated", () => {
    expect(events({ setupComplete: { sessionId: "s", future: 1 }, alsoNew: true })).toEqual([
      { type: "setup_complete" },
    ]);
  });
});

describe("goAway and resumption", () => {
  it.each([
    ["10s", 10000],
    ["1.5s", 1500],
    ["50s", 50000],
    ["0.000340s", 0],
  ])("goAway timeLeft %s → %i ms", (timeLeft, ms) => {
    expect(events({ goAway: { timeLeft } })).toEqual([{ type: "go_away", timeLeftMs: ms }]);
  });

  it("goAway without timeLeft means now", () => {
    expect(events({ goAway: {} })).toEqual([{ type: "go_away", timeLeftMs: 0 }]);
  });

  it("a malformed duration is a protocol error", () => {
    expect(decode({ goAway: { timeLeft: 10 } }).ok).toBe(false);
    expect(decode({ goAway: { timeLeft: "10m" } }).ok).toBe(false);
    expect(durationToMs("ten")).toBeUndefined();
  });

  it("not resumable while generating: empty handle dropped, absent resumable is false", () => {
    expect(events({ sessionResumptionUpdate: { newHandle: "", resumable: false } })).toEqual([
      { type: "resumption_update", resumable: false },
    ]);
    expect(events({ sessionResumptionUpdate: {} })).toEqual([
      { type: "resumption_update", resumable: false },
    ]);
    expect(events({ sessionResumptionUpdate: { newHandle: "h", resumable: "false" } })).toEqual([
      { type: "resumption_update", handle: "h", resumable: false },
    ]);
  });
});

describe("errors are results, never throws", () => {
  it.each([
    ["not JSON", "invalid json", /not JSON/],
    ["a JSON array", "[1,2]", /not a Gemini Live server message/],
    ["JSON null", "null", /not a Gemini Live server message/],
    ["no known field", '{"hello":1}', /no known server message field/],
    [
      "a wrong field type",
      '{"serverContent":{"modelTurn":{"parts":"x"}}}',
      /serverContent\.modelTurn\.parts/,
    ],
    [
      "a call without name",
      '{"toolCall":{"functionCalls":[{"id":"x"}]}}',
      /toolCall\.functionCalls\.0\.name/,
    ],
  ])("%s", (_label, frame, message) => {
    const result = decodeServerFrame(frame, createDecoderState());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe("protocol_error");
    expect(result.error.message).toMatch(message);
  });

  it("invalid UTF-8 in a binary frame", () => {
    const result = decodeServerFrame(new Uint8Array([0x7b, 0xff, 0x7d]), createDecoderState());
    expect(result).toEqual({
      ok: false,
      error: { code: "protocol_error", message: "binary frame is not valid UTF-8" },
    });
  });

  it("invalid base64 audio fails the frame and leaves the decoder state untouched", () => {
    const state = createDecoderState();
    const frame = {
      serverContent: {
        modelTurn: {
          parts: [
            { functionCall: { id: "x", name: "f" } },
            { inlineData: { mimeType: "audio/pcm", data: "%%%" } },
          ],
        },
      },
    };
    expect(decode(frame, state).ok).toBe(false);
    expect(state.seenCallIds.size).toBe(0);
    // The same call delivered again (e.g. as toolCall) is still emitted.
    expect(events(asToolCall({ id: "x", name: "f" }), state)).toEqual([
      toolCallEvent([{ id: "x", name: "f", args: {} }]),
    ]);
  });
});

describe("binary frames", () => {
  it("Uint8Array, ArrayBuffer and a Uint8Array view into a larger buffer decode like text", () => {
    const msg = {
      serverContent: { modelTurn: { parts: [{ text: "héllo ✓" }] }, turnComplete: true },
    };
    const text = JSON.stringify(msg);
    const bytes = new TextEncoder().encode(text);
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    const expected = decodeServerFrame(text, createDecoderState());
    expect(expected).toEqual({
      ok: true,
      events: [{ type: "text_delta", text: "héllo ✓" }, { type: "turn_complete" }],
    });
    expect(decodeServerFrame(bytes, createDecoderState())).toEqual(expected);
    expect(decodeServerFrame(bytes.slice().buffer, createDecoderState())).toEqual(expected);
    expect(decodeServerFrame(padded.subarray(4, 4 + bytes.length), createDecoderState())).toEqual(
      expected,
    );
  });
});

describe("the audio-only fast decode", () => {
  // Each extra key sends a frame to the schema by itself: mostly absent, so that most frames
  // are the shape or one near miss of it (present 5 times in 6, three extras left 1 frame in
  // 216 for a fast path, and a broken one went unnoticed in 2 runs of 3).
  const rarely = <T>(arb: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: arb, weight: 1 });
  const audio = (extra: Record<string, unknown> = {}) => ({
    serverContent: {
      modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data: "AAEC" } }] },
    },
    ...extra,
  });

  it("decodes exactly what the schema decodes, for the audio shape and every near miss", () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 4 }),
      fc.constantFrom("audio/pcm", "text/plain", "AAEC", "!!", ""),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant({}),
      fc.constant([]),
    );
    const frame = fc.record({
      topExtra: rarely(fc.constantFrom("usageMetadata", "setupComplete", "goAway")),
      contentExtra: rarely(fc.constantFrom("turnComplete", "interrupted", "outputTranscription")),
      role: fc.option(value),
      parts: fc.integer({ min: 0, max: 2 }),
      partExtra: rarely(fc.constantFrom("text", "thought", "functionCall")),
      mimeType: fc.oneof(fc.constantFrom("audio/pcm;rate=24000", "audio/x"), value),
      data: fc.oneof(fc.constantFrom("AAEC", "AAECAw==", "%%%"), value),
    });
    fc.assert(
      fc.property(frame, (f) => {
        const blob: Record<string, unknown> = { mimeType: f.mimeType, data: f.data };
        const part: Record<string, unknown> = { inlineData: blob };
        if (f.partExtra !== null) part[f.partExtra] = f.partExtra === "thought" ? false : {};
        const turn: Record<string, unknown> = {
          parts: Array.from({ length: f.parts }, () => part),
        };
        if (f.role !== null) turn.role = f.role;
        const content: Record<string, unknown> = { modelTurn: turn };
        if (f.contentExtra !== null)
          content[f.contentExtra] = f.contentExtra === "outputTranscription" ? { text: "x" } : true;
        const msg: Record<string, unknown> = { serverContent: content };
        if (f.topExtra !== null) msg[f.topExtra] = {};
        const json = JSON.parse(JSON.stringify(msg)) as unknown;
        const fast = decodeServerFrame(JSON.stringify(msg), createDecoderState());
        const bySchema = decodeBySchema(json, createDecoderState());
        expect(fast.ok).toBe(bySchema.ok);
        if (fast.ok && bySchema.ok) expect(fast.events).toEqual(bySchema.events);
      }),
      { numRuns: 2000 },
    );
  });

  it("decodes a frame holding only the user's transcription by hand exactly as the schema does", () => {
    const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
    const frame = fc.record({
      text: fc.option(fc.oneof(fc.string(), value)),
      finished: fc.option(fc.oneof(fc.boolean(), value)),
      inputExtra: rarely(fc.constantFrom("languageCode", "confidence")),
      contentExtra: rarely(fc.constantFrom("turnComplete", "interrupted", "generationComplete")),
      topExtra: rarely(fc.constantFrom("usageMetadata", "goAway")),
    });
    fc.assert(
      fc.property(frame, (f) => {
        const input: Record<string, unknown> = {};
        if (f.text !== null) input.text = f.text;
        if (f.finished !== null) input.finished = f.finished;
        if (f.inputExtra !== null) input[f.inputExtra] = "x";
        const content: Record<string, unknown> = { inputTranscription: input };
        if (f.contentExtra !== null) content[f.contentExtra] = true;
        const msg: Record<string, unknown> = { serverContent: content };
        if (f.topExtra !== null) msg[f.topExtra] = {};
        const fast = decodeServerFrame(JSON.stringify(msg), createDecoderState());
        const bySchema = decodeBySchema(JSON.parse(JSON.stringify(msg)), createDecoderState());
        expect(fast.ok).toBe(bySchema.ok);
        if (fast.ok && bySchema.ok) expect(fast.events).toEqual(bySchema.events);
      }),
      { numRuns: 2000 },
    );
  });

  // A property over many frames: a loaded machine can take longer than vitest's default 5 s.
  it("decodes a frame of the model's words and turn markers by hand exactly as the schema does", {
    timeout: 60_000,
  }, () => {
    const value = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant({}),
      fc.constant([]),
    );
    const part = fc.oneof(
      fc.record({ text: fc.string({ maxLength: 6 }) }),
      fc.record({ text: value }),
      fc.record({ text: fc.string({ maxLength: 3 }), thought: fc.oneof(fc.boolean(), value) }),
      fc.record({ text: fc.string({ maxLength: 3 }), inlineData: fc.constant({}) }),
      fc.constant({}),
      value,
    );
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { freq: 2 });
    const marker = maybe(fc.oneof(fc.boolean(), value));
    const frame = fc.record({
      turn: maybe(
        fc.record({
          role: maybe(fc.oneof(fc.constantFrom("model", "user"), value)),
          parts: maybe(fc.oneof(fc.array(part, { maxLength: 3 }), value)),
          turnExtra: rarely(fc.constantFrom("metadata", "parts2")),
        }),
      ),
      generationComplete: marker,
      turnComplete: marker,
      interrupted: marker,
      contentExtra: rarely(fc.constantFrom("turnCompleteReason", "outputTranscription")),
      topExtra: rarely(fc.constantFrom("usageMetadata", "goAway", "toolCall")),
    });
    /** A decoder that has seen one id-less call (a turn's end forgets it): both paths must agree. */
    const seeded = () => {
      const state = createDecoderState();
      decode(asPart({ name: "lookup", args: {} }), state);
      return state;
    };
    fc.assert(
      fc.property(frame, (f) => {
        const content: Record<string, unknown> = {};
        if (f.turn !== null) {
          const turn: Record<string, unknown> = {};
          if (f.turn.role !== null) turn.role = f.turn.role;
          if (f.turn.parts !== null) turn.parts = f.turn.parts;
          if (f.turn.turnExtra !== null) turn[f.turn.turnExtra] = [];
          content.modelTurn = turn;
        }
        for (const key of ["generationComplete", "turnComplete", "interrupted"] as const)
          if (f[key] !== null) content[key] = f[key];
        if (f.contentExtra === "turnCompleteReason") content.turnCompleteReason = "X";
        if (f.contentExtra === "outputTranscription") content.outputTranscription = { text: "x" };
        const msg: Record<string, unknown> = { serverContent: content };
        if (f.topExtra !== null) msg[f.topExtra] = {};
        const fastState = seeded();
        const schemaState = seeded();
        const fast = decodeServerFrame(JSON.stringify(msg), fastState);
        const bySchema = decodeBySchema(JSON.parse(JSON.stringify(msg)), schemaState);
        expect(fast.ok).toBe(bySchema.ok);
        if (fast.ok && bySchema.ok) expect(fast.events).toEqual(bySchema.events);
        expect(fastState).toEqual(schemaState);
      }),
      { numRuns: 3000 },
    );
  });

  it("takes an audio chunk to one audio_delta", () => {
    expect(events(audio())).toEqual([{ type: "audio_delta", bytes: 3 }]);
  });
});
