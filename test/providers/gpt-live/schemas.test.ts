/**
 * The GPT-Live wire schemas against the official SDK's types (openai 7.57.0,
 * resources/live/live.d.ts). Every example below is checked by tsc to be SDK-shaped
 * (`satisfies`), and every client event type liveline sends must be one the SDK accepts
 * (the expectTypeOf lines: npm run typecheck fails if the SDK's shapes move away).
 */
import type * as Live from "openai/resources/live/live";
import type * as Responses from "openai/resources/responses/responses";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import * as gptLive from "../../../src/providers/gpt-live/schemas.js";
import {
  functionCallOf,
  KNOWN_SERVER_TYPES,
  readClientEvent,
  readServerEvent,
} from "../../../src/providers/gpt-live/schemas.js";

// ---------------------------------------------------------------------------
// Compile time: what liveline can send, the SDK's types accept, and it has no field the
// SDK lacks (npm run typecheck fails otherwise; vitest does not check types).
// ---------------------------------------------------------------------------

type AllKeys<T> = T extends unknown ? keyof T : never;
type ObjectsOf<S> = Exclude<Extract<S, object>, readonly unknown[]>;
type ElementsOf<S> = Extract<S, readonly unknown[]>[number];
type Members<S, K extends PropertyKey> = S extends unknown
  ? K extends keyof S
    ? S[K]
    : never
  : never;
/**
 * The keys of Ours, at any depth, that no member of the SDK's type has at that place (never
 * when there are none). Structural typing lets extra keys through toExtend; this does not.
 */
type Extra<Ours, Sdk> = Ours extends readonly (infer E)[]
  ? Extra<E, ElementsOf<Sdk>>
  : Ours extends object
    ? {
        [K in keyof Ours]-?: K extends AllKeys<ObjectsOf<Sdk>>
          ? Extra<Ours[K], Members<ObjectsOf<Sdk>, K>>
          : K;
      }[keyof Ours]
    : never;

expectTypeOf<Extra<gptLive.LiveClientEvent, Live.ClientEvent>>().toBeNever();
expectTypeOf<gptLive.SessionStartEvent>().toExtend<Live.SessionStartEvent>();
expectTypeOf<gptLive.SessionUpdateEvent>().toExtend<Live.SessionUpdateEvent>();
expectTypeOf<gptLive.InputAudioAppendEvent>().toExtend<Live.InputAudioAppendEvent>();
expectTypeOf<gptLive.InputAudioMuteEvent>().toExtend<Live.InputAudioMuteEvent>();
expectTypeOf<gptLive.InputAudioUnmuteEvent>().toExtend<Live.InputAudioUnmuteEvent>();
expectTypeOf<gptLive.InstructionsAppendEvent>().toExtend<Live.InstructionsAppendEvent>();
expectTypeOf<gptLive.ThinkingAppendEvent>().toExtend<Live.ThinkingAppendEvent>();
expectTypeOf<gptLive.CommentaryAppendEvent>().toExtend<Live.CommentaryAppendEvent>();
expectTypeOf<gptLive.ResponseItemCreateEvent>().toExtend<Live.ResponseItemCreateEvent>();
expectTypeOf<gptLive.ResponseCreateEvent>().toExtend<Live.ResponseCreateEvent>();
expectTypeOf<gptLive.SessionCloseEvent>().toExtend<Live.SessionCloseEvent>();
expectTypeOf<gptLive.LiveClientEvent>().toExtend<Live.ClientEvent>();
expectTypeOf<gptLive.ResponseFunctionToolCall>().toExtend<Responses.ResponseFunctionToolCall>();

// ---------------------------------------------------------------------------
// Client events
// ---------------------------------------------------------------------------

const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "Current weather for a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
} satisfies Live.FunctionTool;

const sessionStart = {
  type: "session.start",
  event_id: "start_1",
  session: {
    model: "gpt-live-1",
    instructions: "You are a friendly receptionist. Keep answers short.",
    input: [
      {
        type: "message",
        role: "developer",
        content: [{ type: "input_text", text: "Caller: Ana." }],
      },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Hi, it's Ana." }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi Ana!" }] },
    ],
    audio: { format: { type: "audio/pcm", rate: 24000 }, output: { voice: "marin" } },
    delegation: {
      type: "responses",
      acknowledgement_delay_ms: 400,
      responses: {
        model: "gpt-5.1",
        instructions: "Call tools to answer; reply in one sentence.",
        tools: [weatherTool, { type: "web_search" }],
        tool_choice: "auto",
        parallel_tool_calls: false,
        reasoning: { effort: "low" },
        max_output_tokens: 1024,
      },
    },
    store: false,
  },
} satisfies Live.SessionStartEvent;

const clientExamples = {
  "session.start (Responses delegation, full)": sessionStart,
  "session.start (model only)": {
    type: "session.start",
    session: { model: "gpt-live-1" },
  } satisfies Live.SessionStartEvent,
  "session.start (phone audio, client delegation)": {
    type: "session.start",
    session: {
      model: "gpt-live-1",
      audio: { format: { type: "audio/pcmu", rate: 8000 }, output: { voice: { id: "voice_1" } } },
      delegation: { type: "client" },
    },
  } satisfies Live.SessionStartEvent,
  "session.start (A-law)": {
    type: "session.start",
    session: { model: "gpt-live-1", audio: { format: { type: "audio/pcma", rate: 8000 } } },
  } satisfies Live.SessionStartEvent,
  "session.start (16 kHz PCM, null delegation and instructions)": {
    type: "session.start",
    session: {
      model: "gpt-live-1",
      audio: { format: { type: "audio/pcm", rate: 16000 } },
      delegation: null,
      instructions: null,
    },
  } satisfies Live.SessionStartEvent,
  "session.update": {
    type: "session.update",
    event_id: "upd_1",
    session: {
      delegation: {
        type: "responses",
        responses: { tools: [weatherTool], instructions: "Be terse." },
      },
    },
  } satisfies Live.SessionUpdateEvent,
  "session.input_audio.append": {
    type: "session.input_audio.append",
    audio: "AAAAAA==",
  } satisfies Live.InputAudioAppendEvent,
  "session.input_audio.mute": {
    type: "session.input_audio.mute",
  } satisfies Live.InputAudioMuteEvent,
  "session.input_audio.unmute": {
    type: "session.input_audio.unmute",
    event_id: null,
  } satisfies Live.InputAudioUnmuteEvent,
  "session.instructions.append": {
    type: "session.instructions.append",
    content: "The caller is a VIP.",
    delegation_id: null,
  } satisfies Live.InstructionsAppendEvent,
  "session.thinking.append": {
    type: "session.thinking.append",
    content: "Still looking up the booking.",
    delegation_id: "del_123",
    event_id: "think_1",
  } satisfies Live.ThinkingAppendEvent,
  "session.commentary.append": {
    type: "session.commentary.append",
    content: "The table is booked for 8 pm.",
    delegation_id: "del_123",
  } satisfies Live.CommentaryAppendEvent,
  "response.item.create (function_call_output)": {
    type: "response.item.create",
    item: { type: "function_call_output", call_id: "call_1", output: '{"temp_c":21}' },
  } satisfies Live.ResponseItemCreateEvent,
  "response.item.create (user message)": {
    type: "response.item.create",
    event_id: "item_1",
    item: {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "What's in this photo?" },
        { type: "input_image", detail: "auto", image_url: "data:image/png;base64,AAAA" },
      ],
    },
  } satisfies Live.ResponseItemCreateEvent,
  "response.create": { type: "response.create" } satisfies Live.ResponseCreateEvent,
  "session.close": { type: "session.close", event_id: "bye" } satisfies Live.SessionCloseEvent,
} satisfies Record<string, Live.ClientEvent>;

const clientCases = Object.entries(clientExamples);

describe("client events liveline sends", () => {
  it.each(clientCases)("%s parses as it is", (_, example) => {
    expect(readClientEvent(JSON.stringify(example))).toEqual({ ok: true, message: example });
  });

  it.each(clientCases)("%s with an extra field is refused", (_, example) => {
    expect(readClientEvent(JSON.stringify({ ...example, extra: true }))).toEqual({
      ok: false,
      problem: 'message: Unrecognized key: "extra"',
    });
  });

  it("each schema takes its own event and refuses an extra field", () => {
    const own: [z.ZodType, object][] = [
      [gptLive.SessionStartEvent, clientExamples["session.start (model only)"]],
      [gptLive.SessionUpdateEvent, clientExamples["session.update"]],
      [gptLive.InputAudioAppendEvent, clientExamples["session.input_audio.append"]],
      [gptLive.InputAudioMuteEvent, clientExamples["session.input_audio.mute"]],
      [gptLive.InputAudioUnmuteEvent, clientExamples["session.input_audio.unmute"]],
      [gptLive.InstructionsAppendEvent, clientExamples["session.instructions.append"]],
      [gptLive.ThinkingAppendEvent, clientExamples["session.thinking.append"]],
      [gptLive.CommentaryAppendEvent, clientExamples["session.commentary.append"]],
      [
        gptLive.ResponseItemCreateEvent,
        clientExamples["response.item.create (function_call_output)"],
      ],
      [gptLive.ResponseCreateEvent, clientExamples["response.create"]],
      [gptLive.SessionCloseEvent, clientExamples["session.close"]],
    ];
    for (const [schema, example] of own) {
      expect(schema.safeParse(example).success).toBe(true);
      expect(schema.safeParse({ ...example, extra: 1 }).success).toBe(false);
    }
  });

  const refused: [string, unknown, string][] = [
    [
      "voice where Realtime has it",
      { type: "session.start", session: { model: "gpt-live-1", voice: "marin" } },
      'session: Unrecognized key: "voice"',
    ],
    [
      "Realtime's audio.input.format",
      {
        type: "session.start",
        session: {
          model: "gpt-live-1",
          audio: { input: { format: { type: "audio/pcm", rate: 24000 } } },
        },
      },
      'session.audio: Unrecognized key: "input"',
    ],
    [
      "PCM at 8000 Hz",
      {
        type: "session.start",
        session: { model: "gpt-live-1", audio: { format: { type: "audio/pcm", rate: 8000 } } },
      },
      "session.audio.format.rate: Invalid option: expected one of 24000|16000",
    ],
    [
      "μ-law without its rate",
      {
        type: "session.start",
        session: { model: "gpt-live-1", audio: { format: { type: "audio/pcmu" } } },
      },
      "session.audio.format.rate: Invalid input: expected 8000",
    ],
    [
      "a session without a model",
      { type: "session.start", session: {} },
      "session.model: Invalid input: expected string, received undefined",
    ],
    [
      "a history message with two text parts",
      {
        type: "session.start",
        session: {
          model: "gpt-live-1",
          input: [
            {
              role: "user",
              content: [{ text: "a" }, { text: "b" }],
            },
          ],
        },
      },
      "session.input.0.content: Too big: expected array to have exactly 1 items",
    ],
    [
      "a function tool with an unknown field",
      {
        type: "session.start",
        session: {
          model: "gpt-live-1",
          delegation: {
            type: "responses",
            responses: { model: "gpt-5.1", tools: [{ ...weatherTool, behavior: "BLOCKING" }] },
          },
        },
      },
      'session.delegation.responses.tools.0: Unrecognized key: "behavior"',
    ],
    [
      "Responses delegation without its backend model",
      {
        type: "session.start",
        session: { model: "gpt-live-1", delegation: { type: "responses", responses: {} } },
      },
      "session.delegation.responses.model: Invalid input: expected string, received undefined",
    ],
    [
      "session.update of the instructions (immutable)",
      { type: "session.update", session: { instructions: "new" } },
      'session: Unrecognized key: "instructions"',
    ],
    [
      "an append without the delegation_id key",
      { type: "session.instructions.append", content: "hello" },
      "delegation_id: Invalid input: expected string, received undefined",
    ],
    [
      "response.item.create with a delegation_id (the SDK has none)",
      {
        type: "response.item.create",
        delegation_id: "del_1",
        item: { type: "function_call_output", call_id: "call_1", output: "{}" },
      },
      'message: Unrecognized key: "delegation_id"',
    ],
    [
      "a function_call_output without its call_id",
      { type: "response.item.create", item: { type: "function_call_output", output: "{}" } },
      "item.call_id: Invalid input: expected string, received undefined",
    ],
    [
      "response.create with a delegation_id (the SDK has none)",
      { type: "response.create", delegation_id: "del_1" },
      'message: Unrecognized key: "delegation_id"',
    ],
  ];

  it.each(refused)("refuses %s, saying where", (_, event, problem) => {
    expect(readClientEvent(JSON.stringify(event))).toEqual({ ok: false, problem });
  });
});

// ---------------------------------------------------------------------------
// Server events
// ---------------------------------------------------------------------------

const resolvedSession = {
  id: "live_68f1c0ffee",
  expires_at: 1_795_000_000,
  model: "gpt-live-1",
  status: "active",
  audio: { format: { type: "audio/pcm", rate: 24000 }, output: { voice: "marin" } },
  delegation: {
    type: "responses",
    responses: { model: "gpt-5.1", tools: [weatherTool] },
  },
  input: [],
  instructions: "You are a friendly receptionist.",
  store: false,
} satisfies Live.SessionResource;

/** What liveline keeps of it: status and the backend config are not read. */
const resolvedSessionRead = {
  id: "live_68f1c0ffee",
  expires_at: 1_795_000_000,
  model: "gpt-live-1",
  audio: { format: { type: "audio/pcm", rate: 24000 }, output: { voice: "marin" } },
  delegation: { type: "responses" },
  instructions: "You are a friendly receptionist.",
  store: false,
};

const functionCallDone = {
  type: "response.output_item.done",
  output_index: 0,
  sequence_number: 7,
  item: {
    id: "fc_1",
    type: "function_call",
    status: "completed",
    call_id: "call_1",
    name: "get_weather",
    arguments: '{"city":"Paris"}',
  },
} satisfies Responses.ResponseOutputItemDoneEvent;

type ServerCase = { example: Live.ServerEvent; read?: object };

const serverExamples: Record<string, ServerCase> = {
  "session.started": {
    example: {
      type: "session.started",
      event_id: "evt_1",
      client_event_id: "start_1",
      session: resolvedSession,
    } satisfies Live.SessionStartedEvent,
    read: {
      type: "session.started",
      event_id: "evt_1",
      client_event_id: "start_1",
      session: resolvedSessionRead,
    },
  },
  "session.updated": {
    example: {
      type: "session.updated",
      event_id: "evt_2",
      session: resolvedSession,
    } satisfies Live.SessionUpdatedEvent,
    read: { type: "session.updated", event_id: "evt_2", session: resolvedSessionRead },
  },
  "session.input_audio.muted": {
    example: {
      type: "session.input_audio.muted",
      event_id: "evt_3",
    } satisfies Live.InputAudioMutedEvent,
  },
  "session.input_audio.unmuted": {
    example: {
      type: "session.input_audio.unmuted",
      event_id: "evt_4",
      client_event_id: "unmute_1",
    } satisfies Live.InputAudioUnmutedEvent,
  },
  "session.instructions.appended": {
    example: {
      type: "session.instructions.appended",
      event_id: "evt_5",
      start_ms: 12_000,
      end_ms: 12_000,
    } satisfies Live.InstructionsAppendedEvent,
  },
  "session.thinking.appended": {
    example: {
      type: "session.thinking.appended",
      event_id: "evt_6",
      start_ms: 12_040,
      end_ms: 12_040,
      client_event_id: "think_1",
    } satisfies Live.ThinkingAppendedEvent,
  },
  "session.commentary.appended": {
    example: {
      type: "session.commentary.appended",
      event_id: "evt_7",
      start_ms: 13_000,
      end_ms: 13_000,
    } satisfies Live.CommentaryAppendedEvent,
  },
  "session.output_audio.delta": {
    example: {
      type: "session.output_audio.delta",
      delta: "AAAAAAAA",
    } satisfies Live.OutputAudioDeltaEvent,
  },
  "session.input_transcript.delta": {
    example: {
      type: "session.input_transcript.delta",
      event_id: "evt_8",
      delta: "What's the weather",
      start_ms: 1_200,
      end_ms: 2_480,
    } satisfies Live.InputTranscriptDeltaEvent,
  },
  "session.output_transcript.delta": {
    example: {
      type: "session.output_transcript.delta",
      event_id: "evt_9",
      delta: "Let me check.",
      start_ms: 2_900,
      end_ms: 3_650,
    } satisfies Live.OutputTranscriptDeltaEvent,
  },
  "session.delegation.created": {
    example: {
      type: "session.delegation.created",
      event_id: "evt_10",
      offset_ms: 3_650,
      delegation: { id: "del_1", type: "delegation", target: "responses", response_id: "resp_1" },
    } satisfies Live.DelegationCreatedEvent,
    read: {
      type: "session.delegation.created",
      event_id: "evt_10",
      offset_ms: 3_650,
      delegation: { id: "del_1", target: "responses", response_id: "resp_1" },
    },
  },
  "response.event (function call done)": {
    example: {
      type: "response.event",
      event_id: "evt_11",
      delegation_id: "del_1",
      event: functionCallDone,
    } satisfies Live.ResponseEvent,
  },
  "response.event (another nested event, no delegation)": {
    example: {
      type: "response.event",
      event_id: "evt_12",
      delegation_id: null,
      event: {
        type: "response.output_text.delta",
        item_id: "msg_1",
        output_index: 1,
        content_index: 0,
        delta: "It is",
        sequence_number: 9,
        logprobs: [],
      } satisfies Responses.ResponseTextDeltaEvent,
    } satisfies Live.ResponseEvent,
    // The text the voice is to say is read (how much of it the voice has said), the rest dropped.
    read: {
      type: "response.event",
      event_id: "evt_12",
      delegation_id: null,
      event: { type: "response.output_text.delta", delta: "It is", sequence_number: 9 },
    },
  },
  "session.usage.updated": {
    example: {
      type: "session.usage.updated",
      event_id: "evt_13",
      usage: { seconds: 42.5 },
      context_window: { usage_ratio: 0.12 },
    } satisfies Live.SessionUsageUpdatedEvent,
  },
  "session.closed": {
    example: {
      type: "session.closed",
      event_id: "evt_14",
      client_event_id: "bye",
      reason: "close_requested",
      session: resolvedSession,
      usage: { seconds: 61 },
    } satisfies Live.SessionClosedEvent,
    read: {
      type: "session.closed",
      event_id: "evt_14",
      client_event_id: "bye",
      reason: "close_requested",
      session: resolvedSessionRead,
      usage: { seconds: 61 },
    },
  },
  error: {
    example: {
      type: "error",
      event_id: "evt_15",
      client_event_id: "start_1",
      error: {
        type: "invalid_request_error",
        code: "unknown_parameter",
        message: "Unknown parameter: 'session.voice'.",
        param: "session.voice",
        client_event_id: "start_1",
      },
    } satisfies Live.ErrorEvent,
  },
  info: {
    example: {
      type: "info",
      event_id: "evt_16",
      code: "data_channel_permissions",
      message: "Data channel permissions applied.",
    } satisfies Live.InfoEvent,
  },
};

const serverCases = Object.entries(serverExamples);

describe("server events liveline reads", () => {
  it("reads every server event it has a schema for, and only those", () => {
    expect([...KNOWN_SERVER_TYPES].sort()).toEqual(
      [...new Set(Object.values(serverExamples).map((c) => c.example.type))].sort(),
    );
  });

  it.each(serverCases)("%s parses", (_, { example, read }) => {
    expect(readServerEvent(JSON.stringify(example))).toEqual({
      ok: true,
      message: read ?? example,
    });
  });

  it.each(serverCases)("%s: a field the service adds is dropped, not refused", (_, c) => {
    const grown = { ...c.example, added_later: { anything: [1, 2] } };
    expect(readServerEvent(JSON.stringify(grown))).toEqual({
      ok: true,
      message: c.read ?? c.example,
    });
  });

  it("the nested function call is typed and found; other nested events carry none", () => {
    const read = readServerEvent(
      JSON.stringify(serverExamples["response.event (function call done)"]?.example),
    );
    if (!read.ok || read.message.type !== "response.event") throw new Error("not read");
    expect(read.message.delegation_id).toBe("del_1");
    expect(functionCallOf(read.message.event)).toEqual(functionCallDone.item);

    const other = readServerEvent(
      JSON.stringify(
        serverExamples["response.event (another nested event, no delegation)"]?.example,
      ),
    );
    if (!other.ok || other.message.type !== "response.event") throw new Error("not read");
    expect(functionCallOf(other.message.event)).toBeNull();
  });

  it("a finished item of another kind passes through whole, and is no function call", () => {
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "It is 21 °C.", annotations: [] }],
    } satisfies Responses.ResponseOutputMessage;
    const frame = {
      type: "response.event",
      event_id: "evt_20",
      event: { ...functionCallDone, item: message },
    } satisfies Live.ResponseEvent;
    const read = readServerEvent(JSON.stringify(frame));
    expect(read).toEqual({ ok: true, message: frame });
    if (!read.ok || read.message.type !== "response.event") throw new Error("not read");
    expect(functionCallOf(read.message.event)).toBeNull();
  });

  const malformed: [string, unknown, string][] = [
    [
      "a transcript delta with a string start_ms",
      { ...serverExamples["session.input_transcript.delta"]?.example, start_ms: "1200" },
      "start_ms: Invalid input: expected number, received string",
    ],
    [
      "session.started without the session id",
      {
        type: "session.started",
        event_id: "evt_1",
        session: { ...resolvedSession, id: undefined },
      },
      "session.id: Invalid input: expected string, received undefined",
    ],
    [
      "an error without its code",
      {
        type: "error",
        event_id: "evt_15",
        error: { type: "invalid_request_error", message: "Bad." },
      },
      "error.code: Invalid input: expected string, received undefined",
    ],
    [
      "session.closed with a reason the SDK does not list",
      { ...serverExamples["session.closed"]?.example, reason: "bored" },
      'reason: Invalid option: expected one of "close_requested"|"expired"|"content"|"remote_hangup"|"connection_lost"',
    ],
    [
      "usage seconds as a string",
      { type: "session.usage.updated", event_id: "evt_13", usage: { seconds: "42" } },
      "usage.seconds: Invalid input: expected number, received string",
    ],
    [
      "a delegation without its id",
      {
        type: "session.delegation.created",
        event_id: "evt_10",
        offset_ms: 3_650,
        delegation: { type: "delegation", target: "client" },
      },
      "delegation.id: Invalid input: expected string, received undefined",
    ],
    [
      "a nested function call without its name",
      {
        type: "response.event",
        event_id: "evt_11",
        event: { ...functionCallDone, item: { ...functionCallDone.item, name: undefined } },
      },
      "event.item.name: Invalid input: expected string, received undefined",
    ],
    [
      "a nested function call with object arguments",
      {
        type: "response.event",
        event_id: "evt_11",
        event: { ...functionCallDone, item: { ...functionCallDone.item, arguments: {} } },
      },
      "event.item.arguments: Invalid input: expected string, received object",
    ],
    [
      "a finished item that is missing",
      { type: "response.event", event_id: "evt_11", event: { type: "response.output_item.done" } },
      "event.item: Invalid input: expected object, received undefined",
    ],
    [
      "a nested event without a type",
      { type: "response.event", event_id: "evt_11", event: { delta: "x" } },
      "event.type: Invalid input: expected string, received undefined",
    ],
    [
      "an audio delta that is not a string",
      { type: "session.output_audio.delta", delta: 7 },
      "delta: Invalid input: expected string, received number",
    ],
  ];

  it.each(malformed)("%s is a protocol error saying where", (_, event, problem) => {
    expect(readServerEvent(JSON.stringify(event))).toEqual({ ok: false, problem });
  });

  it("a frame that is not JSON, not an object, or has no string type is a protocol error", () => {
    expect(readServerEvent("{nope")).toEqual({ ok: false, problem: "not JSON" });
    expect(readServerEvent("[1]")).toEqual({ ok: false, problem: "message: not a JSON object" });
    expect(readServerEvent('{"delta":"x"}')).toEqual({ ok: false, problem: "type: not a string" });
    expect(readServerEvent('{"type":3}')).toEqual({ ok: false, problem: "type: not a string" });
  });

  it.each([
    "session.output_audio.fixture.playing",
    "decision.item.created",
    "transport.dtmf.received",
    "session.something_added_next_year",
  ])("an event of type %s is reported as unknown, not an error", (type) => {
    expect(readServerEvent(JSON.stringify({ type, event_id: "evt_x", whatever: [1] }))).toEqual({
      ok: true,
      message: { type: "unknown", rawType: type },
    });
  });
});
