/**
 * The OpenAI Realtime family: one adapter, each service's differences as data. Each
 * service's frames are checked against the simulator's face for that service (written from
 * the service's own sources, strict where it is), and against the others' as controls: a
 * frame in another service's shape is refused.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { azureEndpoint, azureProvider, azureUrl } from "../../../src/providers/azure/provider.js";
import { OpenAIRealtimeAdapter } from "../../../src/providers/openai/adapter.js";
import {
  AZURE_OPENAI_REALTIME,
  AZURE_VOICE_LIVE,
  OPENAI_REALTIME,
  type RealtimeService,
  XAI_REALTIME,
} from "../../../src/providers/openai/services.js";
import { xaiEndpoint, xaiProvider } from "../../../src/providers/xai/provider.js";
import type { FaceDialectName } from "../../../src/simulator/openai/dialects.js";
import type { ModelEvent } from "../../../src/vocabulary/model.js";
import type { AudioEncoding, DecodeResult } from "../../../src/vocabulary/provider-adapter.js";
import { type Msg, OaiDriver, said } from "../../simulator/openai-driver.js";

const agent = {
  systemInstruction: "Be brief.",
  voice: "alloy",
  language: "de-DE",
  tools: [
    {
      name: "lookup_faq",
      description: "Look up the FAQ.",
      args: z.object({ topic: z.string() }),
      followUp: "speak" as const,
    },
  ],
};
const adapter = (service: RealtimeService, audio: AudioEncoding = "pcm16") =>
  new OpenAIRealtimeAdapter({ model: "m1", agent, service, audio, modality: "text" });
const events = (r: DecodeResult): ModelEvent[] => (r.ok ? r.events : []);
const errorOf = (msgs: Msg[]) =>
  (msgs.find((m) => m.type === "error")?.error as { code?: string; param?: string } | undefined) ??
  null;
/** What a face answers to the adapter's session.update. */
const faceAnswer = (dialect: FaceDialectName, frame: string) =>
  new OaiDriver({}, dialect).feed({ type: "frame", text: frame });

const SERVICES: [RealtimeService, FaceDialectName][] = [
  [OPENAI_REALTIME, "openai"],
  [AZURE_OPENAI_REALTIME, "openai"],
  [XAI_REALTIME, "xai"],
  [AZURE_VOICE_LIVE, "voice-live"],
];

describe("each service's session.update, against its face", () => {
  it.each(SERVICES)(
    "%s: taken by its own face, as set up and as a handoff's update",
    (service, dialect) => {
      for (const audio of ["pcm16", "g711_ulaw"] as const) {
        const a = adapter(service, audio);
        for (const frame of [a.setupFrame({ seeded: false }), ...(a.updateAgent?.(agent) ?? [])]) {
          const answer = faceAnswer(dialect, frame);
          expect(errorOf(answer), `${service.name} ${audio}: ${frame}`).toBeNull();
          expect(answer.map((m) => m.type)).toEqual(["session.updated"]);
        }
      }
    },
  );

  it("control: each shape is refused by the faces of the other shapes", () => {
    const ga = adapter(OPENAI_REALTIME).setupFrame({ seeded: false });
    const xai = adapter(XAI_REALTIME).setupFrame({ seeded: false });
    const flat = adapter(AZURE_VOICE_LIVE).setupFrame({ seeded: false });
    // GA's `type: "realtime"` and model are unknown to xAI and Voice Live; GA requires its
    // type; xAI's turn detection takes no create_response.
    for (const [dialect, frame] of [
      ["xai", ga],
      ["voice-live", ga],
      ["openai", xai],
      ["openai", flat],
      ["voice-live", xai],
      ["xai", flat],
    ] as const)
      expect(errorOf(faceAnswer(dialect, frame)), `${dialect} ← ${frame}`).toMatchObject({
        code: expect.stringMatching(/^(unknown_parameter|invalid_value)$/),
        param: expect.stringMatching(/^session\./),
      });
  });

  it("the model is in OpenAI's session.update only; xAI and Azure name it in the URL", () => {
    const session = (s: RealtimeService) =>
      JSON.parse(adapter(s).setupFrame({ seeded: false })).session;
    expect(session(OPENAI_REALTIME).model).toBe("m1");
    for (const s of [AZURE_OPENAI_REALTIME, XAI_REALTIME, AZURE_VOICE_LIVE])
      expect(session(s).model, s.name).toBeUndefined();
    // Azure OpenAI is OpenAI's wire otherwise, byte for byte.
    const { model: _model, ...openai } = session(OPENAI_REALTIME);
    expect(session(AZURE_OPENAI_REALTIME)).toEqual(openai);
    expect(
      xaiEndpoint(
        { XAI_API_KEY: "xai-key-1", XAI_MODEL: undefined, XAI_REALTIME_URL: undefined },
        "grok-voice-latest",
      ),
    ).toEqual({
      url: "wss://api.x.ai/v1/realtime?model=grok-voice-latest",
      headers: { Authorization: "Bearer xai-key-1" },
    });
  });

  it("xAI and Voice Live are told the client's 16 kHz; OpenAI's 24 kHz audio is resampled", () => {
    const pcm = new Uint8Array(640);
    const appended = (s: RealtimeService) =>
      atob(JSON.parse(adapter(s).encode({ type: "user_audio", pcm })[0]!).audio).length;
    expect(appended(OPENAI_REALTIME)).toBe(960);
    expect(appended(XAI_REALTIME)).toBe(640);
    expect(appended(AZURE_VOICE_LIVE)).toBe(640);
    const xai = JSON.parse(adapter(XAI_REALTIME).setupFrame({ seeded: false })).session;
    expect(xai.audio).toEqual({
      input: {
        format: { type: "audio/pcm", rate: 16000 },
        transcription: { language_hint: "de-DE" },
      },
      output: { format: { type: "audio/pcm", rate: 24000 } },
    });
    const flat = JSON.parse(adapter(AZURE_VOICE_LIVE).setupFrame({ seeded: false })).session;
    expect(flat).toMatchObject({ input_audio_format: "pcm16", input_audio_sampling_rate: 16000 });
    // The face hears 16 kHz audio as such: 100 ms of it is a commit's minimum.
    const face = new OaiDriver({}, "xai");
    face.send(JSON.parse(adapter(XAI_REALTIME).setupFrame({ seeded: false })));
    face.send({ type: "input_audio_buffer.append", audio: btoa("\0".repeat(3200)) });
    expect(errorOf(face.send({ type: "input_audio_buffer.commit" }))).toBeNull();
  });

  it("a barge-in's truncation goes where the service has it (not to xAI, whose face refuses it)", () => {
    const played = (s: RealtimeService) => {
      const a = adapter(s);
      a.decode(
        JSON.stringify({
          type: "response.output_audio.delta",
          response_id: "r",
          item_id: "i",
          // A second of 24 kHz PCM16: the user heard 300 ms of it, so the item is cut there.
          delta: btoa("\0".repeat(48_000)),
        }),
      );
      return a.encode({ type: "audio_played", ms: 300 });
    };
    expect(played(OPENAI_REALTIME).map((f) => JSON.parse(f).type)).toEqual([
      "conversation.item.truncate",
    ]);
    expect(played(XAI_REALTIME)).toEqual([]);
    // Control: the xAI face refuses the truncation OpenAI's adapter would send.
    const truncate = played(OPENAI_REALTIME)[0]!;
    expect(errorOf(faceAnswer("xai", truncate))).toMatchObject({ code: "invalid_event" });
  });
});

describe("each service's server events, read by the one adapter", () => {
  it("Voice Live's original event names are read as their GA names; OpenAI's adapter ignores them (control)", () => {
    const beta = [
      { type: "response.audio_transcript.delta", response_id: "r", item_id: "i", delta: "Hi" },
      { type: "response.text.delta", response_id: "r", item_id: "i", delta: "there" },
      { type: "response.audio.delta", response_id: "r", item_id: "i", delta: "AAAA" },
    ];
    const read = (s: RealtimeService) =>
      beta.flatMap((e) => events(adapter(s).decode(JSON.stringify(e)))).map((e) => e.type);
    expect(read(AZURE_VOICE_LIVE)).toEqual(["transcript_delta", "text_delta", "audio_delta"]);
    expect(read(OPENAI_REALTIME)).toEqual([]);
  });

  it("xAI's call event without ids, and an empty usage, are read (no protocol error)", () => {
    const a = adapter(XAI_REALTIME);
    a.decode(
      JSON.stringify({ type: "response.created", response: { id: "r1", status: "in_progress" } }),
    );
    const call = a.decode(
      JSON.stringify({
        type: "response.function_call_arguments.done",
        call_id: "c1",
        name: "lookup_faq",
        arguments: '{"topic":"hours"}',
      }),
    );
    expect(call.ok).toBe(true);
    const done = a.decode(
      JSON.stringify({
        type: "response.done",
        response: { id: "r1", status: "completed", usage: {} },
      }),
    );
    expect(events(done)).toEqual([
      { type: "tool_call", calls: [{ id: "c1", name: "lookup_faq", args: { topic: "hours" } }] },
      { type: "turn_complete" },
    ]);
  });

  it("a round trip through each face: setup, a line, its answer in the face's own names", () => {
    for (const [service, dialect] of SERVICES) {
      const a = adapter(service);
      const face = new OaiDriver({}, dialect);
      const heard: ModelEvent[] = [];
      const deliver = (frames: string[]) => {
        for (const frame of frames)
          for (const msg of face.feed({ type: "frame", text: frame })) {
            const r = a.decode(JSON.stringify(msg));
            expect(r.ok, `${service.name}: ${JSON.stringify(msg)}`).toBe(true);
            heard.push(...events(r));
            if (r.ok) deliver(r.send ?? []);
          }
      };
      for (const msg of face.out) heard.push(...events(a.decode(JSON.stringify(msg))));
      deliver([a.setupFrame({ seeded: false })]);
      deliver(a.encode({ type: "user_text", text: "what are your hours" }));
      const words = heard.flatMap((e) =>
        e.type === "text_delta" || e.type === "transcript_delta" ? [e.text] : [],
      );
      expect(heard[0], service.name).toEqual({ type: "setup_complete" });
      expect(words.join(""), service.name).toContain("liveline simulator");
      expect(heard.at(-1), service.name).toEqual({ type: "turn_complete" });
    }
  });
});

describe("xAI's face bundles an audible answer with its calls (livekit/agents issue 6411)", () => {
  const calls = { byTurn: { 1: ["set_preference"] }, otherwise: [] };
  const setup = (dialect: FaceDialectName) => {
    const face = new OaiDriver({ calls, repeatAnswers: true }, dialect);
    // set_preference is a side effect: liveline sends its output with no response.create.
    const shaped = new OpenAIRealtimeAdapter({
      model: "m1",
      agent: {
        ...agent,
        tools: [{ ...agent.tools[0]!, name: "set_preference", followUp: "silent" as const }],
      },
      service: dialect === "xai" ? XAI_REALTIME : OPENAI_REALTIME,
      modality: "text",
    });
    face.feed({ type: "frame", text: shaped.setupFrame({ seeded: false }) });
    face.user("I prefer short answers");
    const first = face.send({ type: "response.create" });
    const call = first.find((m) => m.type === "response.function_call_arguments.done");
    return { face, first, call: call?.call_id as string };
  };

  it("the whole answer and the call in one response; a response.create after the side effect's output says it again", () => {
    const { face, first, call } = setup("xai");
    const answer = said(first);
    expect(answer).toContain("You said: “I prefer short answers”");
    expect(answer).toContain("Anything else?");
    face.output(call, '{"ok":true}');
    // The naive relay's response.create: the answer again.
    expect(said(face.send({ type: "response.create" }))).toBe(answer);
  });

  it("control: an output with no response.create (liveline's silent result) says nothing", () => {
    const { face, call } = setup("xai");
    expect(said(face.output(call, '{"ok":true}'))).toBe("");
  });

  it("control: OpenAI's face ends its response at the call and says the rest after the output", () => {
    const { face, first, call } = setup("openai");
    expect(said(first)).not.toContain("Anything else?");
    face.output(call, '{"ok":true}');
    expect(said(face.send({ type: "response.create" }))).toContain("set_preference found");
  });
});

describe("the providers' settings", () => {
  const azure = (vars: Record<string, string>) => azureProvider.vars.parse(vars);

  it("Azure OpenAI and Voice Live URLs from the resource's name; the key in api-key", () => {
    expect(
      azureEndpoint(azure({ AZURE_API_KEY: "azure-key-1", AZURE_RESOURCE: "acme" }), "rt"),
    ).toEqual({
      service: AZURE_OPENAI_REALTIME,
      endpoint: {
        url: "wss://acme.openai.azure.com/openai/v1/realtime?model=rt",
        headers: { "api-key": "azure-key-1" },
      },
    });
    const live = azureEndpoint(
      azure({ AZURE_API_KEY: "azure-key-1", AZURE_RESOURCE: "acme", AZURE_ENDPOINT: "voice-live" }),
      "gpt-realtime",
    );
    expect(live.service).toBe(AZURE_VOICE_LIVE);
    expect(live.endpoint.url).toBe(
      "wss://acme.services.ai.azure.com/voice-live/realtime?api-version=2025-10-01&model=gpt-realtime",
    );
    expect(
      azureUrl(
        azure({
          AZURE_REALTIME_URL: "wss://voice.example.com/voice-live/realtime?api-version=2025-10-01",
        }),
      ),
    ).toBe("wss://voice.example.com/voice-live/realtime?api-version=2025-10-01");
  });

  it("unavailable says which setting is missing, never a value", () => {
    expect(xaiProvider.unavailable(xaiProvider.vars.parse({}))).toMatch(/XAI_API_KEY/);
    expect(azureProvider.unavailable(azure({}))).toMatch(/AZURE_API_KEY/);
    expect(azureProvider.unavailable(azure({ AZURE_API_KEY: "azure-key-1" }))).toMatch(
      /AZURE_RESOURCE .* or AZURE_REALTIME_URL/,
    );
    expect(
      azureProvider.unavailable(azure({ AZURE_API_KEY: "azure-key-1", AZURE_RESOURCE: "acme" })),
    ).toBeNull();
    expect(() => azure({ AZURE_RESOURCE: "acme.openai.azure.com" })).toThrow();
    expect(() => azure({ AZURE_ENDPOINT: "voicelive" })).toThrow();
  });
});
