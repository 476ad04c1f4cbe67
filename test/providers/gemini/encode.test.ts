import { describe, expect, it } from "vitest";
import { z } from "zod";
import { base64ToBytes } from "../../../src/providers/base64.js";
import {
  encodeCommand,
  encodeRebuiltContext,
  encodeSetup,
  SEED_ARGS_MAX_CHARS,
  SEED_OUTCOME_MAX_CHARS,
  SEED_RESUME_NOTE,
} from "../../../src/providers/gemini/encode.js";
import { ClientMessage } from "../../../src/providers/gemini/schemas.js";
import {
  sanitizeJsonSchema,
  toolDeclaration,
} from "../../../src/providers/gemini/tool-declaration.js";
import type {
  ModelCapabilities,
  RebuiltContext,
  ToolResponse,
} from "../../../src/vocabulary/model.js";
import { loadSession } from "./fixtures.js";

const withScheduling: ModelCapabilities = {
  nonBlockingCalls: true,
  resultScheduling: true,
  turnCompleteWaitsForResults: false,
  silentHonoured: true,
  responsesOnRequest: false,
};
const noScheduling: ModelCapabilities = { ...withScheduling, resultScheduling: false };

/** The n-th client frame of a recorded session, parsed. */
function recordedClient(dir: "recorded" | "recorded-vertex", stem: string, n: number) {
  const frame = loadSession(dir, stem).frames.filter((f) => f.dir === "client")[n];
  if (frame === undefined) throw new Error(`no client frame ${n} in ${stem}`);
  return { text: frame.text.trimEnd(), msg: JSON.parse(frame.text) as Record<string, unknown> };
}

function valid(msg: unknown): boolean {
  return ClientMessage.safeParse(msg).success;
}

describe("encodeCommand has the recorded shapes", () => {
  it("user_text equals the recorded clientContent (Developer API and Vertex)", () => {
    const [msg] = encodeCommand(
      { type: "user_text", text: "Hello what should we talk about?" },
      noScheduling,
    );
    expect(msg).toEqual(
      recordedClient("recorded", "live_ML_Dev_should_send_text_in_async_session", 1).msg,
    );
    expect(msg).toEqual(
      recordedClient("recorded-vertex", "live_Vertex_should_send_text_in_async_session", 1).msg,
    );
  });

  it("audio_played sends nothing: Gemini Live cannot cut what the model said", () => {
    expect(encodeCommand({ type: "audio_played", ms: 900 }, noScheduling)).toEqual([]);
  });

  it("user_audio reproduces the recorded realtimeInput.audio frame byte for byte", () => {
    const recorded = recordedClient(
      "recorded",
      "live_ML_Dev_should_reply_to_realtime_audio_input",
      1,
    );
    const data = (recorded.msg as { realtimeInput: { audio: { data: string } } }).realtimeInput
      .audio.data;
    const pcm = base64ToBytes(data);
    expect(pcm.length).toBe(96938); // 129252 base64 chars, one "=" of padding
    const msgs = encodeCommand({ type: "user_audio", pcm }, noScheduling);
    expect(msgs.map((m) => JSON.stringify(m))).toEqual([recorded.text]);
  });

  it("audio_end → realtimeInput.audioStreamEnd", () => {
    const msgs = encodeCommand({ type: "audio_end" }, noScheduling);
    expect(msgs).toEqual([{ realtimeInput: { audioStreamEnd: true } }]);
    expect(valid(msgs[0])).toBe(true);
  });

  it("tool_responses: same keys and placement as the recorded toolResponse, result under output", () => {
    const recorded = recordedClient(
      "recorded",
      "live_ML_Dev_should_send_tool_response_with_function_responses",
      1,
    ).msg as { toolResponse: { functionResponses: Record<string, unknown>[] } };
    const [msg] = encodeCommand(
      {
        type: "tool_responses",
        responses: [{ callId: "function-call-1", name: "getStatus", result: { mood: "happy" } }],
      },
      withScheduling,
    );
    expect(msg).toEqual({
      toolResponse: {
        functionResponses: [
          { id: "function-call-1", name: "getStatus", response: { output: { mood: "happy" } } },
        ],
      },
    });
    const ours = (msg as typeof recorded).toolResponse.functionResponses[0] ?? {};
    expect(Object.keys(ours).sort()).toEqual(
      Object.keys(recorded.toolResponse.functionResponses[0] ?? {}).sort(),
    );
    expect(valid(msg)).toBe(true);
  });

  it("an error result goes under response.error", () => {
    expect(
      encodeCommand(
        { type: "tool_responses", responses: [{ callId: "c", name: "f", error: "timed out" }] },
        noScheduling,
      ),
    ).toEqual([
      {
        toolResponse: {
          functionResponses: [{ id: "c", name: "f", response: { error: "timed out" } }],
        },
      },
    ]);
  });

  it("no responses → no frame", () => {
    expect(encodeCommand({ type: "tool_responses", responses: [] }, withScheduling)).toEqual([]);
  });

  it("nudge is a completed user turn with the text", () => {
    expect(encodeCommand({ type: "nudge", text: "Please continue." }, noScheduling)).toEqual([
      {
        clientContent: {
          turns: [{ role: "user", parts: [{ text: "Please continue." }] }],
          turnComplete: true,
        },
      },
    ]);
  });
});

describe("scheduling placement", () => {
  const responses: ToolResponse[] = [
    { callId: "a", name: "chips", result: { ok: true }, scheduling: "silent" },
    { callId: "b", name: "search", result: { hits: 3 }, scheduling: "when_idle" },
    { callId: "c", name: "alert", result: {}, scheduling: "interrupt" },
    { callId: "d", name: "blocking", result: {} },
  ];

  it("beside `response` (proto placement) when the model supports it and a value is set", () => {
    const [msg] = encodeCommand({ type: "tool_responses", responses }, withScheduling);
    expect(msg).toEqual({
      toolResponse: {
        functionResponses: [
          { id: "a", name: "chips", response: { output: { ok: true } }, scheduling: "SILENT" },
          { id: "b", name: "search", response: { output: { hits: 3 } }, scheduling: "WHEN_IDLE" },
          { id: "c", name: "alert", response: { output: {} }, scheduling: "INTERRUPT" },
          { id: "d", name: "blocking", response: { output: {} } },
        ],
      },
    });
    expect(JSON.stringify(msg)).not.toContain('"response":{"scheduling"');
    expect(valid(msg)).toBe(true);
  });

  it("absent when the endpoint has no scheduling (Vertex, 3.1)", () => {
    const [msg] = encodeCommand({ type: "tool_responses", responses }, noScheduling);
    expect(JSON.stringify(msg)).not.toContain("scheduling");
  });
});

describe("encodeSetup", () => {
  it("a session's voice and language go to speechConfig (SpeechConfig: voice_config, language_code)", () => {
    const { setup } = encodeSetup({ model: "m", voiceName: "Puck", languageCode: "de-DE" });
    expect(setup.generationConfig).toMatchObject({
      speechConfig: {
        voiceConfig: { prebuiltVoiceConfig: { voiceName: "Puck" } },
        languageCode: "de-DE",
      },
    });
    expect(valid({ setup })).toBe(true);
    const none = encodeSetup({ model: "m" }).setup;
    expect(JSON.stringify(none)).not.toContain("speechConfig");
  });

  const weather = z.object({
    location: z.string().describe("The city and state, e.g. San Francisco, CA"),
    unit: z.enum(["celsius", "fahrenheit"]).optional(),
  });

  it("function declarations sit where the recorded setup has them, with the same properties", () => {
    const recorded = recordedClient("recorded", "live_ML_Dev_should_send_tool_response", 0).msg as {
      setup: {
        tools: {
          functionDeclarations: {
            name: string;
            description: string;
            parameters: { properties: object; required: string[] };
          }[];
        }[];
      };
    };
    const rec = recorded.setup.tools[0]?.functionDeclarations[0];
    const { setup } = encodeSetup({
      model: "gemini-live-2.5-flash-preview",
      declarations: [toolDeclaration("get_current_weather", rec?.description ?? "", weather)],
    });
    const ours = setup.tools?.[0]?.functionDeclarations?.[0];
    expect(ours?.name).toBe(rec?.name);
    expect(ours?.description).toBe("Get the current weather in a given location");
    expect(ours?.parametersJsonSchema).toEqual({
      type: "object",
      properties: {
        location: { type: "string", description: "The city and state, e.g. San Francisco, CA" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["location"],
    });
    const schema = ours?.parametersJsonSchema as { properties: object; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(Object.keys(rec?.parameters.properties ?? {}));
    expect(schema.required).toEqual(rec?.parameters.required);
    expect(setup.model).toBe("models/gemini-live-2.5-flash-preview");
    expect(valid({ setup })).toBe(true);
  });

  it("model: bare id gets models/, Vertex resource path is kept; modalities as recorded", () => {
    const vertex = recordedClient(
      "recorded-vertex",
      "live_Vertex_should_send_text_in_async_session",
      0,
    ).msg as { setup: { model: string; generationConfig: unknown } };
    const ours = encodeSetup({ model: vertex.setup.model }).setup;
    expect(ours.model).toBe(
      "projects/REDACTED/locations/REDACTED/publishers/google/models/gemini-2.0-flash-live-preview-04-09",
    );
    expect(ours.generationConfig).toEqual(vertex.setup.generationConfig);

    const dev = recordedClient("recorded", "live_ML_Dev_should_reply_to_realtime_text_input", 0)
      .msg as {
      setup: { model: string; generationConfig: unknown };
    };
    const text = encodeSetup({
      model: "gemini-live-2.5-flash-preview",
      responseModality: "TEXT",
    }).setup;
    expect(text.model).toBe(dev.setup.model);
    expect(text.generationConfig).toEqual(dev.setup.generationConfig);
    expect(encodeSetup({ model: "models/x" }).setup.model).toBe("models/x");
  });

  it("full option set: transcription, resumption, compression (int64 as strings), tools", () => {
    const msg = encodeSetup({
      model: "gemini-2.5-flash-native-audio-preview-12-2025",
      systemInstruction: "Be brief.",
      voiceName: "Puck",
      tools: [
        {
          name: "show_chips",
          description: "Show suggestion chips",
          parameters: { $schema: "x", type: "object", additionalProperties: false, properties: {} },
          behavior: "NON_BLOCKING",
        },
      ],
      resumptionHandle: "h-1",
      contextWindowCompression: { triggerTokens: 25600, targetTokens: 12800 },
      initialHistoryInClientContent: true,
    });
    expect(msg).toEqual({
      setup: {
        model: "models/gemini-2.5-flash-native-audio-preview-12-2025",
        generationConfig: {
          responseModalities: ["AUDIO"],
          speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: "Puck" } } },
        },
        systemInstruction: { parts: [{ text: "Be brief." }] },
        tools: [
          {
            functionDeclarations: [
              {
                name: "show_chips",
                description: "Show suggestion chips",
                parametersJsonSchema: { type: "object", properties: {} },
                behavior: "NON_BLOCKING",
              },
            ],
          },
        ],
        inputAudioTranscription: {},
        outputAudioTranscription: {},
        sessionResumption: { handle: "h-1" },
        contextWindowCompression: {
          slidingWindow: { targetTokens: "12800" },
          triggerTokens: "25600",
        },
        historyConfig: { initialHistoryInClientContent: true },
      },
    });
    expect(valid(msg)).toBe(true);
  });

  it("defaults: AUDIO, transcription on, empty sessionResumption, no tools, no compression", () => {
    expect(encodeSetup({ model: "m" })).toEqual({
      setup: {
        model: "models/m",
        generationConfig: { responseModalities: ["AUDIO"] },
        inputAudioTranscription: {},
        outputAudioTranscription: {},
        sessionResumption: {},
      },
    });
    expect(
      encodeSetup({ model: "m", contextWindowCompression: {} }).setup.contextWindowCompression,
    ).toEqual({
      slidingWindow: {},
    });
  });
});

describe("toolDeclaration / sanitizeJsonSchema", () => {
  it("strips $schema and additionalProperties at every level but keeps properties so named", () => {
    const schema = z.object({
      nested: z.object({ additionalProperties: z.string() }),
      list: z.array(z.object({ n: z.number() })),
    });
    const decl = toolDeclaration("f", "d", schema, "BLOCKING");
    const json = JSON.stringify(decl);
    expect(json).not.toContain("$schema");
    expect(decl.behavior).toBe("BLOCKING");
    expect(decl.parametersJsonSchema).toEqual({
      type: "object",
      properties: {
        nested: {
          type: "object",
          properties: { additionalProperties: { type: "string" } },
          required: ["additionalProperties"],
        },
        list: {
          type: "array",
          items: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        },
      },
      required: ["nested", "list"],
    });
  });

  it("leaves a schema without those keys unchanged", () => {
    const s = { type: "object", properties: { a: { type: "string", enum: ["x"] } } };
    expect(sanitizeJsonSchema(s)).toEqual(s);
  });

  it("no behavior → no behavior key (BLOCKING is the proto default)", () => {
    expect("behavior" in toolDeclaration("f", "d", z.object({}))).toBe(false);
  });
});

describe("encodeRebuiltContext", () => {
  const items: RebuiltContext["items"] = [
    { role: "user", text: "Weather in Oslo?" },
    { role: "model", text: "Checking." },
    { role: "model_calls", calls: [{ id: "c1", name: "weather", args: { city: "Oslo" } }] },
    {
      role: "tool_results",
      results: [{ callId: "c1", name: "weather", result: { tempC: 3 }, scheduling: "when_idle" }],
    },
    { role: "model", text: "It is 3 degrees." },
    { role: "model_calls", calls: [{ id: "c2", name: "chips", args: {} }] },
    { role: "tool_results", results: [{ callId: "c2", name: "chips", error: "cancelled" }] },
  ];

  it("text only: calls and outcomes become readable lines, adjacent and in order, merged by role", () => {
    const msg = encodeRebuiltContext({ items });
    expect(msg).toEqual({
      clientContent: {
        turns: [
          { role: "user", parts: [{ text: "Weather in Oslo?" }] },
          {
            role: "model",
            parts: [{ text: "Checking." }, { text: '[called weather {"city":"Oslo"}]' }],
          },
          { role: "user", parts: [{ text: '[weather returned {"tempC":3}]' }] },
          {
            role: "model",
            parts: [{ text: "It is 3 degrees." }, { text: "[called chips {}]" }],
          },
          { role: "user", parts: [{ text: "[chips failed: cancelled]" }] },
        ],
        turnComplete: true,
      },
    });
    const parts = msg.clientContent.turns.flatMap((t) => t.parts ?? []);
    expect(parts.every((p) => Object.keys(p).join() === "text")).toBe(true);
    expect(valid(msg)).toBe(true);
  });

  it("ends on a user turn: a last model turn is followed by a resume note", () => {
    const msg = encodeRebuiltContext({ items: items.slice(0, 5) });
    expect(msg.clientContent.turns.at(-1)).toEqual({
      role: "user",
      parts: [{ text: SEED_RESUME_NOTE }],
    });
  });

  it("bounds long arguments and outcomes, marking the cut", () => {
    const long = "x".repeat(5000);
    const msg = encodeRebuiltContext({
      items: [
        { role: "model_calls", calls: [{ id: "a", name: "f", args: { long } }] },
        { role: "tool_results", results: [{ callId: "a", name: "f", result: { long } }] },
      ],
    });
    const [call, outcome] = msg.clientContent.turns.map((t) => t.parts?.[0]?.text ?? "");
    expect(call!.length).toBeLessThanOrEqual(SEED_ARGS_MAX_CHARS + 20);
    expect(outcome!.length).toBeLessThanOrEqual(SEED_OUTCOME_MAX_CHARS + 20);
    expect(call).toContain("…");
    expect(outcome).toContain("…");
  });

  it("empty context → no turns", () => {
    expect(encodeRebuiltContext({ items: [] })).toEqual({
      clientContent: { turns: [], turnComplete: true },
    });
  });
});

describe("ClientMessage schema", () => {
  it("rejects a frame with two oneof members, none, or a malformed one", () => {
    expect(valid({ setup: { model: "m" }, clientContent: {} })).toBe(false);
    expect(valid({})).toBe(false);
    expect(valid({ toolResponse: { functionResponses: [{ id: "x" }] } })).toBe(false);
    expect(valid({ realtimeInput: { audio: { mimeType: "audio/pcm" } } })).toBe(false);
    expect(
      valid({ toolResponse: { functionResponses: [{ name: "f", scheduling: "LATER" }] } }),
    ).toBe(false);
  });
});
