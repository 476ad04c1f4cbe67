/**
 * OpenAI GPT-Live (`wss://api.openai.com/v1/live/sessions`) wire messages, as zod schemas:
 * the client events liveline sends (strict: the service refuses a field it does not know with
 * `unknown_parameter`, so a stray field is a bug here, caught before it is sent) and the server
 * events it reads (lenient: fields the service adds are dropped, not refused; every field the
 * adapter uses is typed and required as the SDK types say).
 *
 * Shapes from the official SDK's generated types, `openai` 7.59.0
 * `resources/live/live.d.ts` (schemas and types carry its interface names), checked against
 * the brief /work/shared/GPT-LIVE.md. Events liveline neither sends nor reads are left out:
 * audio fixtures, Decisions (`decision.*`), and the sideband-only `transport.*` events and
 * reflected `session.input_audio.append`. `readServerEvent` reports those, and any type the
 * service adds later, as unknown, not as an error.
 *
 * Where the brief and the SDK types differ (the SDK types win):
 * - G.711 formats carry a rate as well: `{type: "audio/pcmu" | "audio/pcma", rate}` with
 *   `rate` required (8000); the brief names only the type, "at 8000".
 * - Delegation has a third owner in the SDK, `{type: "decisions", decisions: {model,
 *   questions}}`, and every delegation config takes `acknowledgement_delay_ms`;
 *   `session.delegation.created`'s `target` can be `decisions`, and its `delegation` has
 *   `type: "delegation"`. The brief has client | responses only.
 * - A function tool needs only `type` and `name`; `description`, `parameters` and `strict`
 *   are optional and nullable. Beside `web_search` the SDK lists more hosted tools
 *   (file_search, code_interpreter, shell, image_generation, mcp, custom, namespace,
 *   tool_search, programmatic_tool_calling, computer, apply_patch), most typed as a bare
 *   `{type}`; liveline admits function and web_search only.
 * - `response.event`'s `delegation_id` is optional and nullable ("null or omitted when the
 *   event cannot be correlated with a delegation"); the brief shows it always present.
 * - A non-null `delegation_id` on `session.{instructions,thinking,commentary}.append` is
 *   refused under Responses delegation (only client delegations take one); the brief says
 *   only that the key is required.
 * - `session.start`'s `session` also takes `client` (WebRTC data-channel permissions),
 *   `store` and `triggers` (Decisions); `instructions` is nullable; the voice may be a custom
 *   voice `{id}`. `safety_identifier` (a stable id of the end user, for the service's abuse
 *   detection) is on both since 7.59.0 (7.57.0 had it on WebRTC's config only).
 * - The initial history's 8,192 tokens is a configurable limit (that is its default).
 * - `error.error` carries its own `client_event_id?` beside the event's.
 * - `session.usage.updated` may also carry `context_window: {usage_ratio}`.
 * - `session.output_audio.delta` has no `event_id` (every other server event has one) and
 *   optional `start_ms`/`end_ms` (sideband reflections only).
 * - `response.item.create`'s function_call_output types `call_id` as optional and nullable
 *   (it is the Responses API's generic input item); the brief, and liveline, always send it.
 * - Server events the brief does not mention: `info`, `session.input_audio.muted`/`unmuted`
 *   (acks of `session.input_audio.mute`/`unmute`, client events it does not list either),
 *   audio fixtures, `decision.*`, sideband `transport.*`.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------
// Client events (what liveline sends): strict, only the SDK's fields
// ---------------------------------------------------------------------------

/** Correlates a command with a server event's client_event_id or error.client_event_id. */
const ClientEventId = z.string().nullable().optional();

/** Raw mono PCM16 LE; the WebSocket takes 24 kHz or 16 kHz. */
export const AudioPCM = z
  .object({ type: z.literal("audio/pcm"), rate: z.literal([24000, 16000]) })
  .strict();
/** G.711 μ-law. The SDK types rate as a number but requires it; G.711 is 8000 Hz. */
export const AudioPCMU = z
  .object({ type: z.literal("audio/pcmu"), rate: z.literal(8000) })
  .strict();
/** G.711 A-law, 8000 Hz. */
export const AudioPCMA = z
  .object({ type: z.literal("audio/pcma"), rate: z.literal(8000) })
  .strict();

/** One format both ways, chosen at session.start (WebSocket only) and fixed after it. */
export const AudioFormat = z.discriminatedUnion("type", [AudioPCM, AudioPCMU, AudioPCMA]);

/** A built-in voice by name, or a custom voice by id. Fixed after session.start. */
const Voice = z.union([z.string().min(1), z.object({ id: z.string().min(1) }).strict()]);

/** Where format and voice live: `audio.format` beside `audio.output.voice`. */
const SessionAudio = z
  .object({
    format: AudioFormat.optional(),
    output: z.object({ voice: Voice.optional() }).strict().optional(),
  })
  .strict();

/** Text for a developer or user history message (part type optional in the SDK). */
const InitialInputText = z
  .object({ text: z.string(), type: z.literal("input_text").optional() })
  .strict();

const InitialItemFields = {
  id: z.string().nullable().optional(),
  status: z.enum(["incomplete", "completed"]).nullable().optional(),
  type: z.literal("message").optional(),
};

/**
 * A text message of the history given at startup. Exactly one text part each: the service
 * takes one, as the SDK's docs say.
 */
export const InitialItem = z.discriminatedUnion("role", [
  z
    .object({
      role: z.literal("developer"),
      content: z.array(InitialInputText).length(1),
      ...InitialItemFields,
    })
    .strict(),
  z
    .object({
      role: z.literal("user"),
      content: z.array(InitialInputText).length(1),
      ...InitialItemFields,
    })
    .strict(),
  z
    .object({
      role: z.literal("assistant"),
      content: z
        .array(
          z.union([
            z.object({ text: z.string(), type: z.literal("text").optional() }).strict(),
            z.object({ text: z.string(), type: z.literal("output_text") }).strict(),
          ]),
        )
        .length(1),
      ...InitialItemFields,
    })
    .strict(),
]);

/** A function the Responses backend may call; liveline runs it and returns the output. */
export const FunctionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .strict();

/** The hosted web search. The SDK's other hosted tools are bare `{type}`s liveline never sends. */
const WebSearchTool = z.object({ type: z.literal("web_search") }).strict();

const DelegationTool = z.discriminatedUnion("type", [FunctionTool, WebSearchTool]);

const FunctionToolChoice = z
  .object({ type: z.literal("function"), name: z.string().min(1) })
  .strict();

/** Which tool the backend uses: a mode, one tool, or a set of allowed tools. */
const ToolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  FunctionToolChoice,
  WebSearchTool,
  z
    .object({
      type: z.literal("allowed_tools"),
      tools: z.array(z.discriminatedUnion("type", [FunctionToolChoice, WebSearchTool])),
      mode: z.enum(["none", "auto", "required"]).nullable().optional(),
    })
    .strict(),
]);

const ResponsesDelegationFields = {
  model: z.string().min(1),
  instructions: z.string().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  reasoning: z
    .object({
      effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).nullable().optional(),
      summary: z.enum(["concise", "detailed", "auto"]).nullable().optional(),
    })
    .strict()
    .nullable()
    .optional(),
  service_tier: z
    .enum(["auto", "default", "fast_tier_temp_pilot", "flex", "priority", "ultrafast"])
    .nullable()
    .optional(),
  text: z
    .object({ verbosity: z.enum(["low", "medium", "high"]).nullable().optional() })
    .strict()
    .nullable()
    .optional(),
  tool_choice: ToolChoice.optional(),
  tools: z.array(DelegationTool).optional(),
};

/** The backend model, its own prompt and its tools (`session.delegation.responses`). */
export const ResponsesDelegationConfig = z.object(ResponsesDelegationFields).strict();

/** A sparse update of it: omitted settings keep their values. */
export const ResponsesDelegationUpdateConfig = ResponsesDelegationConfig.partial();

/** Delay before an automatic spoken acknowledgement of a delegation. */
const AcknowledgementDelayMs = z.number().int().nonnegative().optional();

/** Delegated tasks come to liveline (`session.delegation.created`, answered by appends). */
export const ClientDelegation = z
  .object({ type: z.literal("client"), acknowledgement_delay_ms: AcknowledgementDelayMs })
  .strict();

/** Delegated tasks go to a Responses backend run by the session; its events come wrapped. */
export const ResponsesDelegation = z
  .object({
    type: z.literal("responses"),
    responses: ResponsesDelegationConfig,
    acknowledgement_delay_ms: AcknowledgementDelayMs,
  })
  .strict();

const DecisionInstructionPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input_text"), text: z.string() }).strict(),
  z
    .object({
      type: z.literal("input_image"),
      image_url: z.string(),
      detail: z.enum(["low", "high", "auto", "original"]).nullable().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("input_json"),
      data: z.union([
        z.record(z.string(), z.unknown()),
        z.array(z.record(z.string(), z.unknown())),
      ]),
    })
    .strict(),
]);
const DecisionInstructions = z.union([z.string(), z.array(DecisionInstructionPart)]);

/** A Decision API question: a choice, a yes/no predicate, or a score on levels. */
export const DecisionQuestion = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("choice"),
      choices: z.array(
        z
          .object({
            value: z.union([z.string(), z.boolean()]),
            description: z.string().optional(),
          })
          .strict(),
      ),
      instructions: DecisionInstructions,
      name: z.string().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("predicate"),
      instructions: DecisionInstructions,
      name: z.string().optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("score"),
      levels: z.array(z.object({ label: z.string(), description: z.string().optional() }).strict()),
      instructions: DecisionInstructions,
      name: z.string().optional(),
    })
    .strict(),
]);

export const DecisionsDelegationConfig = z
  .object({ model: z.string().min(1), questions: z.array(DecisionQuestion) })
  .strict();

/** Delegated tasks go to the Decision API. In the SDK; liveline does not use it. */
export const DecisionsDelegation = z
  .object({
    type: z.literal("decisions"),
    decisions: DecisionsDelegationConfig,
    acknowledgement_delay_ms: AcknowledgementDelayMs,
  })
  .strict();

/** Decision questions evaluated on each transcript delta of one kind. */
export const DecisionTrigger = z
  .object({
    type: z.literal("decisions"),
    event_type: z.enum(["session.input_transcript.delta", "session.output_transcript.delta"]),
    decisions: z.object({ questions: z.array(DecisionQuestion) }).strict(),
  })
  .strict();

/** Event permissions of an untrusted WebRTC frontend's data channel (startup only). */
export const ClientConfig = z
  .object({
    data_channel: z
      .object({
        allowed_client_events: z.union([z.literal("all"), z.array(z.string())]).optional(),
        allowed_server_events: z
          .union([
            z.literal("all"),
            z.array(z.object({ type: z.string(), response_event: z.string().optional() }).strict()),
          ])
          .optional(),
      })
      .strict(),
  })
  .strict();

/**
 * A WebSocket session's startup config. The model is named here, not in the URL; everything
 * but `delegation` and `triggers` is fixed once the session has started.
 */
export const SessionConfig = z
  .object({
    model: z.string().min(1),
    audio: SessionAudio.optional(),
    client: ClientConfig.optional(),
    // Omitted or null: tasks are delegated to liveline (client).
    delegation: z
      .discriminatedUnion("type", [ClientDelegation, ResponsesDelegation, DecisionsDelegation])
      .nullable()
      .optional(),
    input: z.array(InitialItem).max(128).optional(),
    instructions: z.string().nullable().optional(),
    safety_identifier: z.string().nullable().optional(),
    store: z.boolean().optional(),
    triggers: z.array(DecisionTrigger).optional(),
  })
  .strict();

/** The first event on a primary WebSocket; nothing else is sent before session.started. */
export const SessionStartEvent = z
  .object({ type: z.literal("session.start"), session: SessionConfig, event_id: ClientEventId })
  .strict();

/**
 * What session.update may change: only delegation settings (the type must stay) and
 * triggers; anything else is `immutable_field_update`.
 */
export const SessionUpdateConfig = z
  .object({
    delegation: z
      .discriminatedUnion("type", [
        ClientDelegation,
        z
          .object({
            type: z.literal("responses"),
            responses: ResponsesDelegationUpdateConfig.optional(),
            acknowledgement_delay_ms: AcknowledgementDelayMs,
          })
          .strict(),
        z
          .object({
            type: z.literal("decisions"),
            decisions: DecisionsDelegationConfig.partial().optional(),
            acknowledgement_delay_ms: AcknowledgementDelayMs,
          })
          .strict(),
      ])
      .nullable()
      .optional(),
    triggers: z.array(DecisionTrigger).optional(),
  })
  .strict();

export const SessionUpdateEvent = z
  .object({
    type: z.literal("session.update"),
    session: SessionUpdateConfig,
    event_id: ClientEventId,
  })
  .strict();

/** Base64 audio in the session's format, no container header. No ack, no commit. */
export const InputAudioAppendEvent = z
  .object({
    type: z.literal("session.input_audio.append"),
    audio: z.string(),
    event_id: ClientEventId,
  })
  .strict();

/** Mutes the microphone only (the model hears silence); acked by session.input_audio.muted. */
export const InputAudioMuteEvent = z
  .object({ type: z.literal("session.input_audio.mute"), event_id: ClientEventId })
  .strict();

export const InputAudioUnmuteEvent = z
  .object({ type: z.literal("session.input_audio.unmute"), event_id: ClientEventId })
  .strict();

/**
 * Context appended mid-session (≤ 500 tokens). `delegation_id` is required even when null:
 * the service refuses an append without the key. Null for general context (and always under
 * Responses delegation); a client delegation's id to answer it.
 */
const ContextAppendFields = {
  content: z.string(),
  delegation_id: z.string().min(1).nullable(),
  event_id: ClientEventId,
};

/** Developer instructions; they stay in history and can interrupt speech in progress. */
export const InstructionsAppendEvent = z
  .object({ type: z.literal("session.instructions.append"), ...ContextAppendFields })
  .strict();

/** Silent context: informs later speech without asking for any. */
export const ThinkingAppendEvent = z
  .object({ type: z.literal("session.thinking.append"), ...ContextAppendFields })
  .strict();

/** Speakable context: a result the model should tell the user. */
export const CommentaryAppendEvent = z
  .object({ type: z.literal("session.commentary.append"), ...ContextAppendFields })
  .strict();

const InputContent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input_text"), text: z.string() }).strict(),
  z
    .object({
      type: z.literal("input_image"),
      detail: z.enum(["low", "high", "auto", "original"]),
      image_url: z.string().nullable().optional(),
      file_id: z.string().nullable().optional(),
    })
    .strict(),
]);

/** Typed text or an image for the Responses backend (the SDK's EasyInputMessage). */
export const EasyInputMessage = z
  .object({
    type: z.literal("message").optional(),
    role: z.enum(["user", "developer"]),
    content: z.union([z.string(), z.array(InputContent).min(1)]),
  })
  .strict();

/**
 * A tool's result for the Responses backend. `call_id` is required here though the SDK's
 * generic input item has it optional: an output without its call pairs with nothing.
 */
export const FunctionCallOutput = z
  .object({
    type: z.literal("function_call_output"),
    call_id: z.string().min(1),
    output: z.string(),
  })
  .strict();

/** The input items liveline gives the backend (the SDK's ResponseInputItem, narrowed). */
export const ResponseInputItem = z.union([FunctionCallOutput, EasyInputMessage]);

/**
 * Appends an item to the backend conversation. No ack, and nothing happens until
 * response.create. No `delegation_id`: the SDK has none on this event (nor on
 * response.create); the backend conversation is the session's one.
 */
export const ResponseItemCreateEvent = z
  .object({
    type: z.literal("response.item.create"),
    item: ResponseInputItem,
    event_id: ClientEventId,
  })
  .strict();

/** Continues the backend after tool outputs (appending alone does not). */
export const ResponseCreateEvent = z
  .object({ type: z.literal("response.create"), event_id: ClientEventId })
  .strict();

/** Asks the service to end the session; it answers with session.closed. */
export const SessionCloseEvent = z
  .object({ type: z.literal("session.close"), event_id: ClientEventId })
  .strict();

export const LiveClientEvent = z.discriminatedUnion("type", [
  SessionStartEvent,
  SessionUpdateEvent,
  InputAudioAppendEvent,
  InputAudioMuteEvent,
  InputAudioUnmuteEvent,
  InstructionsAppendEvent,
  ThinkingAppendEvent,
  CommentaryAppendEvent,
  ResponseItemCreateEvent,
  ResponseCreateEvent,
  SessionCloseEvent,
]);

// ---------------------------------------------------------------------------
// Server events (what liveline reads): fields the service adds are dropped
// ---------------------------------------------------------------------------

/** Every server event but output audio has its own id and echoes the command's, if given. */
const ServerEventIds = { event_id: z.string(), client_event_id: z.string().optional() };

/**
 * The resolved session in session.started/updated/closed. `status` is left out: the SDK says
 * it is always "active", even in session.closed's final snapshot.
 */
export const SessionResource = z.object({
  id: z.string().min(1),
  expires_at: z.number(),
  model: z.string(),
  audio: z
    .object({
      format: z
        .discriminatedUnion("type", [AudioPCM.strip(), AudioPCMU.strip(), AudioPCMA.strip()])
        .optional(),
      output: z
        .object({ voice: z.union([z.string(), z.object({ id: z.string() })]).optional() })
        .optional(),
    })
    .optional(),
  delegation: z
    .object({ type: z.enum(["client", "responses", "decisions"]) })
    .nullable()
    .optional(),
  instructions: z.string().nullable().optional(),
  safety_identifier: z.string().nullable().optional(),
  store: z.boolean().optional(),
});

/** Cumulative audio seconds of the session: a total, never to be summed across updates. */
export const SessionUsage = z.object({ seconds: z.number().nonnegative() });

/** The session is running; audio may be sent from now on. */
export const SessionStartedEvent = z.object({
  type: z.literal("session.started"),
  session: SessionResource,
  ...ServerEventIds,
});

/** A session.update was accepted. */
export const SessionUpdatedEvent = z.object({
  type: z.literal("session.updated"),
  session: SessionResource,
  ...ServerEventIds,
});

export const InputAudioMutedEvent = z.object({
  type: z.literal("session.input_audio.muted"),
  ...ServerEventIds,
});

export const InputAudioUnmutedEvent = z.object({
  type: z.literal("session.input_audio.unmuted"),
  ...ServerEventIds,
});

/** Session-relative milliseconds; end is exclusive and may equal start for appended context. */
const TimelineSpan = { start_ms: z.number(), end_ms: z.number() };

/**
 * An append was accepted into the session timeline: not proof the model acted on it or
 * spoke it.
 */
export const InstructionsAppendedEvent = z.object({
  type: z.literal("session.instructions.appended"),
  ...TimelineSpan,
  ...ServerEventIds,
});

export const ThinkingAppendedEvent = z.object({
  type: z.literal("session.thinking.appended"),
  ...TimelineSpan,
  ...ServerEventIds,
});

export const CommentaryAppendedEvent = z.object({
  type: z.literal("session.commentary.appended"),
  ...TimelineSpan,
  ...ServerEventIds,
});

/**
 * Model speech, base64 in the session's format. No event_id and no "done" event: nothing
 * marks the end of a spoken reply. start_ms/end_ms come on sideband reflections only.
 */
export const OutputAudioDeltaEvent = z.object({
  type: z.literal("session.output_audio.delta"),
  delta: z.string(),
  start_ms: z.number().optional(),
  end_ms: z.number().optional(),
});

/** A fragment of what the user said; no item ids, no completed event. */
export const InputTranscriptDeltaEvent = z.object({
  type: z.literal("session.input_transcript.delta"),
  delta: z.string(),
  ...TimelineSpan,
  ...ServerEventIds,
});

/** A fragment of what the model said, placed on the session timeline. */
export const OutputTranscriptDeltaEvent = z.object({
  type: z.literal("session.output_transcript.delta"),
  delta: z.string(),
  ...TimelineSpan,
  ...ServerEventIds,
});

/**
 * The model handed a task off. Metadata only (no task text): with client delegation
 * liveline answers with an append carrying this id; with Responses delegation the work
 * arrives as response.event.
 */
export const DelegationCreatedEvent = z.object({
  type: z.literal("session.delegation.created"),
  offset_ms: z.number(),
  delegation: z.object({
    id: z.string().min(1),
    target: z.enum(["client", "responses", "decisions"]),
    response_id: z.string().optional(),
  }),
  ...ServerEventIds,
});

/** A finished function call of the backend: liveline runs it and returns its output. */
export const ResponseFunctionToolCall = z.object({
  type: z.literal("function_call"),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  id: z.string().optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
});

/**
 * Any other output item (message, reasoning, web search…), passed through unread. Refuses
 * `function_call` (aborting) so a malformed call is an error, not an "other" item.
 */
export const OtherOutputItem = z.looseObject({
  type: z
    .string()
    .refine((t) => t !== "function_call", { message: "a malformed function_call", abort: true }),
});

/** The one nested Responses event liveline acts on: an output item is complete. */
export const ResponseOutputItemDoneEvent = z.object({
  type: z.literal("response.output_item.done"),
  item: z.union([ResponseFunctionToolCall, OtherOutputItem]),
  // The Live SDK types the nested event as an open record; these come from Responses.
  output_index: z.number().optional(),
  sequence_number: z.number().optional(),
});

/**
 * The nested event that ends a backend response: its snapshot carries the backend's token
 * usage (GPT-LIVE.md, "backend token usage arrives in response.event"), read leniently
 * (BackendUsage in the adapter): a snapshot liveline cannot read costs the usage, not the call.
 */
export const ResponseEndEvent = z.object({
  type: z.enum(["response.completed", "response.failed", "response.incomplete"]),
  response: z.looseObject({ id: z.string().optional(), usage: z.unknown().optional() }),
  sequence_number: z.number().optional(),
});

/**
 * A backend response begins: its snapshot's `id` tells a response delivered again from a new
 * one (read leniently: without it, the response is known by its delegation).
 */
export const ResponseCreatedEvent = z.object({
  type: z.literal("response.created"),
  response: z.looseObject({ id: z.string().optional() }).optional(),
  sequence_number: z.number().optional(),
});

/** A piece of the backend's text: what the voice is to say (read to know when it has). */
export const ResponseOutputTextDeltaEvent = z.object({
  type: z.literal("response.output_text.delta"),
  delta: z.string(),
  sequence_number: z.number().optional(),
});

/** A Responses usage block (input, output and total tokens; cached input where given). */
export const BackendUsage = z.looseObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  input_tokens_details: z.looseObject({ cached_tokens: z.number().int().optional() }).optional(),
});

/** Every other nested Responses event, kept as its type only (for counting and logs). */
export const OtherResponseStreamEvent = z.object({
  type: z
    .string()
    .refine(
      (t) =>
        t !== "response.output_item.done" &&
        t !== "response.created" &&
        t !== "response.output_text.delta",
      {
        message: "a malformed response.output_item.done, created or output_text.delta",
        abort: true,
      },
    ),
});

/**
 * The nested Responses streaming event. The SDK tells clients to tolerate new types, so
 * any type parses; only the ones liveline acts on are checked.
 */
export const ResponseStreamEvent = z.union([
  ResponseOutputItemDoneEvent,
  ResponseEndEvent,
  ResponseCreatedEvent,
  ResponseOutputTextDeltaEvent,
  OtherResponseStreamEvent,
]);

/** A Responses backend event, wrapped; delegation_id ties it to its delegation when known. */
export const ResponseEvent = z.object({
  type: z.literal("response.event"),
  event: ResponseStreamEvent,
  delegation_id: z.string().nullable().optional(),
  ...ServerEventIds,
});

/** Audio usage so far (cumulative) and, when known, how full the context window is. */
export const SessionUsageUpdatedEvent = z.object({
  type: z.literal("session.usage.updated"),
  usage: SessionUsage,
  context_window: z.object({ usage_ratio: z.number() }).optional(),
  ...ServerEventIds,
});

/** The session is over and finalized: why, its last snapshot and its final usage. */
export const SessionClosedEvent = z.object({
  type: z.literal("session.closed"),
  reason: z.enum(["close_requested", "expired", "content", "remote_hangup", "connection_lost"]),
  session: SessionResource,
  usage: SessionUsage,
  ...ServerEventIds,
});

/** The SDK's `Error`, renamed so it does not shadow the global. */
export const LiveError = z.object({
  type: z.string(),
  code: z.string(),
  message: z.string(),
  param: z.string().optional(),
  client_event_id: z.string().optional(),
});

/** A refused command (e.g. `unknown_parameter`), an admission failure, a moderation cut. */
export const ErrorEvent = z.object({
  type: z.literal("error"),
  error: LiveError,
  ...ServerEventIds,
});

/** A notice, not a failure (e.g. `data_channel_permissions`). */
export const InfoEvent = z.object({
  type: z.literal("info"),
  code: z.string(),
  message: z.string(),
  ...ServerEventIds,
});

export const LiveServerEvent = z.discriminatedUnion("type", [
  SessionStartedEvent,
  SessionUpdatedEvent,
  InputAudioMutedEvent,
  InputAudioUnmutedEvent,
  InstructionsAppendedEvent,
  ThinkingAppendedEvent,
  CommentaryAppendedEvent,
  OutputAudioDeltaEvent,
  InputTranscriptDeltaEvent,
  OutputTranscriptDeltaEvent,
  DelegationCreatedEvent,
  ResponseEvent,
  SessionUsageUpdatedEvent,
  SessionClosedEvent,
  ErrorEvent,
  InfoEvent,
]);

/** The server event types liveline reads; any other is skipped, not an error. */
export const KNOWN_SERVER_TYPES: ReadonlySet<string> = new Set(
  LiveServerEvent.options.map((o) => o.shape.type.value),
);

export type AudioPCM = z.infer<typeof AudioPCM>;
export type AudioPCMU = z.infer<typeof AudioPCMU>;
export type AudioPCMA = z.infer<typeof AudioPCMA>;
export type AudioFormat = z.infer<typeof AudioFormat>;
export type InitialItem = z.infer<typeof InitialItem>;
export type FunctionTool = z.infer<typeof FunctionTool>;
export type ResponsesDelegationConfig = z.infer<typeof ResponsesDelegationConfig>;
export type ResponsesDelegationUpdateConfig = z.infer<typeof ResponsesDelegationUpdateConfig>;
export type ClientDelegation = z.infer<typeof ClientDelegation>;
export type ResponsesDelegation = z.infer<typeof ResponsesDelegation>;
export type DecisionQuestion = z.infer<typeof DecisionQuestion>;
export type DecisionsDelegationConfig = z.infer<typeof DecisionsDelegationConfig>;
export type DecisionsDelegation = z.infer<typeof DecisionsDelegation>;
export type DecisionTrigger = z.infer<typeof DecisionTrigger>;
export type ClientConfig = z.infer<typeof ClientConfig>;
export type SessionConfig = z.infer<typeof SessionConfig>;
export type SessionStartEvent = z.infer<typeof SessionStartEvent>;
export type SessionUpdateConfig = z.infer<typeof SessionUpdateConfig>;
export type SessionUpdateEvent = z.infer<typeof SessionUpdateEvent>;
export type InputAudioAppendEvent = z.infer<typeof InputAudioAppendEvent>;
export type InputAudioMuteEvent = z.infer<typeof InputAudioMuteEvent>;
export type InputAudioUnmuteEvent = z.infer<typeof InputAudioUnmuteEvent>;
export type InstructionsAppendEvent = z.infer<typeof InstructionsAppendEvent>;
export type ThinkingAppendEvent = z.infer<typeof ThinkingAppendEvent>;
export type CommentaryAppendEvent = z.infer<typeof CommentaryAppendEvent>;
export type EasyInputMessage = z.infer<typeof EasyInputMessage>;
export type FunctionCallOutput = z.infer<typeof FunctionCallOutput>;
export type ResponseInputItem = z.infer<typeof ResponseInputItem>;
export type ResponseItemCreateEvent = z.infer<typeof ResponseItemCreateEvent>;
export type ResponseCreateEvent = z.infer<typeof ResponseCreateEvent>;
export type SessionCloseEvent = z.infer<typeof SessionCloseEvent>;
export type LiveClientEvent = z.infer<typeof LiveClientEvent>;
export type SessionResource = z.infer<typeof SessionResource>;
export type SessionUsage = z.infer<typeof SessionUsage>;
export type SessionStartedEvent = z.infer<typeof SessionStartedEvent>;
export type SessionUpdatedEvent = z.infer<typeof SessionUpdatedEvent>;
export type InputAudioMutedEvent = z.infer<typeof InputAudioMutedEvent>;
export type InputAudioUnmutedEvent = z.infer<typeof InputAudioUnmutedEvent>;
export type InstructionsAppendedEvent = z.infer<typeof InstructionsAppendedEvent>;
export type ThinkingAppendedEvent = z.infer<typeof ThinkingAppendedEvent>;
export type CommentaryAppendedEvent = z.infer<typeof CommentaryAppendedEvent>;
export type OutputAudioDeltaEvent = z.infer<typeof OutputAudioDeltaEvent>;
export type InputTranscriptDeltaEvent = z.infer<typeof InputTranscriptDeltaEvent>;
export type OutputTranscriptDeltaEvent = z.infer<typeof OutputTranscriptDeltaEvent>;
export type DelegationCreatedEvent = z.infer<typeof DelegationCreatedEvent>;
export type ResponseFunctionToolCall = z.infer<typeof ResponseFunctionToolCall>;
export type OtherOutputItem = z.infer<typeof OtherOutputItem>;
export type ResponseOutputItemDoneEvent = z.infer<typeof ResponseOutputItemDoneEvent>;
export type OtherResponseStreamEvent = z.infer<typeof OtherResponseStreamEvent>;
export type ResponseEndEvent = z.infer<typeof ResponseEndEvent>;
export type ResponseCreatedEvent = z.infer<typeof ResponseCreatedEvent>;
export type ResponseStreamEvent = z.infer<typeof ResponseStreamEvent>;
export type ResponseEvent = z.infer<typeof ResponseEvent>;
export type SessionUsageUpdatedEvent = z.infer<typeof SessionUsageUpdatedEvent>;
export type SessionClosedEvent = z.infer<typeof SessionClosedEvent>;
export type LiveError = z.infer<typeof LiveError>;
export type ErrorEvent = z.infer<typeof ErrorEvent>;
export type InfoEvent = z.infer<typeof InfoEvent>;
export type LiveServerEvent = z.infer<typeof LiveServerEvent>;

// ---------------------------------------------------------------------------
// Reading frames
// ---------------------------------------------------------------------------

/** A server event type liveline does not read: skipped (and counted), never fatal. */
export type UnknownServerEvent = { type: "unknown"; rawType: string };

/** A text frame read with a schema: the message, or what is wrong with it (for logs). */
export type ReadResult<T> = { ok: true; message: T } | { ok: false; problem: string };

/**
 * "path: message" for a zod issue. In a union, the branch whose `type` matched says what
 * is wrong (the others only say the type is not theirs).
 */
function describeIssue(issue: z.core.$ZodIssue, at: readonly PropertyKey[] = []): string {
  const path = [...at, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const typeMatched = issue.errors.find(
      (branch) => !branch.some((i) => i.path.length === 1 && i.path[0] === "type"),
    );
    const first = (typeMatched ?? issue.errors[issue.errors.length - 1])?.[0];
    if (first !== undefined) return describeIssue(first, path);
  }
  const where = path.length > 0 ? path.map(String).join(".") : "message";
  return `${where}: ${issue.message}`;
}

function parseJson(text: string): ReadResult<unknown> {
  try {
    return { ok: true, message: JSON.parse(text) };
  } catch {
    return { ok: false, problem: "not JSON" };
  }
}

function readWith<T>(schema: z.ZodType<T>, json: unknown): ReadResult<T> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, problem: issue === undefined ? "message: invalid" : describeIssue(issue) };
}

/**
 * A frame from the service. A type liveline does not read is `{type: "unknown", rawType}`
 * (skip it: the service adds events); a known type that does not match its schema, or a
 * frame without a string `type`, is a protocol error with a readable problem.
 */
export function readServerEvent(text: string): ReadResult<LiveServerEvent | UnknownServerEvent> {
  const json = parseJson(text);
  if (!json.ok) return json;
  const frame = json.message;
  if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
    return { ok: false, problem: "message: not a JSON object" };
  }
  const type = "type" in frame ? frame.type : undefined;
  if (typeof type !== "string") return { ok: false, problem: "type: not a string" };
  if (!KNOWN_SERVER_TYPES.has(type))
    return { ok: true, message: { type: "unknown", rawType: type } };
  return readWith(LiveServerEvent, frame);
}

/** A frame to the service, read as a strict stand-in would take it. */
export function readClientEvent(text: string): ReadResult<LiveClientEvent> {
  const json = parseJson(text);
  return json.ok ? readWith(LiveClientEvent, json.message) : json;
}

/** The backend's function call in a nested event, if it is a finished function_call item. */
export function functionCallOf(event: ResponseStreamEvent): ResponseFunctionToolCall | null {
  if (!("item" in event)) return null;
  const call = ResponseFunctionToolCall.safeParse(event.item);
  return call.success ? call.data : null;
}
