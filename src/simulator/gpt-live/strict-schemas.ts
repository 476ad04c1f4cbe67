/**
 * The client events the GPT-Live stand-in takes, as the official SDK's generated types
 * (openai npm 7.59.0, `resources/live/live.d.ts`) state them: strict, so a field the service
 * refuses (`unknown_parameter`) is refused here too. Written from those types and the brief
 * (GPT-LIVE.md, the project's sourced brief), not from liveline's adapter: the two must not share one reading.
 */
import { z } from "zod";

const Base = { event_id: z.string().nullable().optional() };

/** One format both ways (WebSocket only): PCM16 at 24 or 16 kHz, or G.711 at 8 kHz. */
const AudioFormat = z.discriminatedUnion("type", [
  z
    .object({ type: z.literal("audio/pcm"), rate: z.union([z.literal(16000), z.literal(24000)]) })
    .strict(),
  z.object({ type: z.literal("audio/pcmu"), rate: z.literal(8000) }).strict(),
  z.object({ type: z.literal("audio/pcma"), rate: z.literal(8000) }).strict(),
]);
export type LiveAudioFormat = z.infer<typeof AudioFormat>;

const Voice = z.union([z.string(), z.object({ id: z.string() }).strict()]);

const Audio = z
  .object({
    format: AudioFormat.optional(),
    output: z.object({ voice: Voice.optional() }).strict().optional(),
  })
  .strict();

const FunctionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string().nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .strict();

/** The backend's other tools: taken as given (the simulator calls only functions). */
const OTHER_TOOLS = [
  "web_search",
  "file_search",
  "code_interpreter",
  "shell",
  "image_generation",
  "mcp",
  "custom",
  "namespace",
  "tool_search",
  "programmatic_tool_calling",
  "computer",
  "apply_patch",
] as const;
const Tool = z.discriminatedUnion("type", [
  FunctionTool,
  ...OTHER_TOOLS.map((type) => z.looseObject({ type: z.literal(type) })),
]);

const Nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();

/** `delegation.responses` at start (`model` required) and in an update (all optional). */
const responsesFields = {
  instructions: Nullable(z.string()),
  max_output_tokens: Nullable(z.number().int().positive()),
  parallel_tool_calls: Nullable(z.boolean()),
  reasoning: Nullable(
    z
      .object({
        effort: Nullable(z.enum(["none", "minimal", "low", "medium", "high", "xhigh"])),
        summary: Nullable(z.enum(["concise", "detailed", "auto"])),
      })
      .strict(),
  ),
  service_tier: Nullable(
    z.enum(["auto", "default", "fast_tier_temp_pilot", "flex", "priority", "ultrafast"]),
  ),
  text: Nullable(z.object({ verbosity: Nullable(z.enum(["low", "medium", "high"])) }).strict()),
  tool_choice: z
    .union([z.enum(["auto", "none", "required"]), z.looseObject({ type: z.string() })])
    .optional(),
  tools: z.array(Tool).optional(),
};
const ResponsesConfig = z.object({ model: z.string().min(1), ...responsesFields }).strict();
const ResponsesUpdate = z
  .object({ model: z.string().min(1).optional(), ...responsesFields })
  .strict();
export type ResponsesConfig = z.infer<typeof ResponsesConfig>;
export type ResponsesUpdate = z.infer<typeof ResponsesUpdate>;

const ackDelay = { acknowledgement_delay_ms: z.number().int().nonnegative().optional() };
const ClientDelegation = z.object({ type: z.literal("client"), ...ackDelay }).strict();
/** Decisions delegation: a valid config the simulator does not play (refused as not simulated). */
const DecisionsDelegation = z
  .object({
    type: z.literal("decisions"),
    decisions: z.record(z.string(), z.unknown()).optional(),
    ...ackDelay,
  })
  .strict();
const Delegation = z.discriminatedUnion("type", [
  ClientDelegation,
  z.object({ type: z.literal("responses"), responses: ResponsesConfig, ...ackDelay }).strict(),
  DecisionsDelegation,
]);
const DelegationUpdate = z.discriminatedUnion("type", [
  ClientDelegation,
  z
    .object({ type: z.literal("responses"), responses: ResponsesUpdate.optional(), ...ackDelay })
    .strict(),
  DecisionsDelegation,
]);

/** Start-up history: developer, user or assistant messages, exactly one text part each. */
const historyMessage = <R extends string, P extends z.ZodType>(role: R, part: P) =>
  z
    .object({
      role: z.literal(role),
      content: z.array(part).length(1),
      id: Nullable(z.string()),
      status: Nullable(z.enum(["incomplete", "completed"])),
      type: z.literal("message").optional(),
    })
    .strict();
const InputText = z.object({ text: z.string(), type: z.literal("input_text").optional() }).strict();
const InitialItem = z.discriminatedUnion("role", [
  historyMessage("developer", InputText),
  historyMessage("user", InputText),
  historyMessage(
    "assistant",
    z.union([
      z.object({ text: z.string(), type: z.literal("text").optional() }).strict(),
      z.object({ text: z.string(), type: z.literal("output_text") }).strict(),
    ]),
  ),
]);

/** Startup-only WebRTC frontend permissions: taken and ignored on a WebSocket (assumed). */
const ClientConfig = z
  .object({
    data_channel: z
      .object({
        allowed_client_events: z.union([z.literal("all"), z.array(z.string())]).optional(),
        allowed_server_events: z
          .union([z.literal("all"), z.array(z.looseObject({ type: z.string() }))])
          .optional(),
      })
      .strict(),
  })
  .strict();

/** Transcript triggers run Decisions: taken as given, never run (not simulated). */
const Triggers = z.array(z.looseObject({ type: z.literal("decisions") }));

const SessionConfig = z
  .object({
    model: z.string().min(1),
    audio: Audio.optional(),
    client: ClientConfig.optional(),
    delegation: Delegation.nullable().optional(),
    input: z.array(InitialItem).max(128).optional(),
    instructions: Nullable(z.string()),
    // A stable id of the end user, for the service's abuse detection (7.59.0): taken, not used.
    safety_identifier: Nullable(z.string()),
    store: z.boolean().optional(),
    triggers: Triggers.optional(),
  })
  .strict();
export type SessionStartConfig = z.infer<typeof SessionConfig>;

/**
 * A WebRTC session's startup config (SDK `MediaSessionConfig`): no `audio.format` (the media
 * transport negotiates one).
 */
const MediaSessionConfig = SessionConfig.omit({ audio: true }).extend({
  audio: z
    .object({ output: z.object({ voice: Voice.optional() }).strict().optional() })
    .strict()
    .optional(),
});
export type MediaStartConfig = z.infer<typeof MediaSessionConfig>;

/** `POST /v1/live/sessions` (SDK `LiveCreateParams`): the session and the browser's offer. */
export const LiveCreateParams = z
  .object({
    session: MediaSessionConfig,
    transport: z.object({ type: z.literal("webrtc"), sdp: z.string() }).strict(),
  })
  .strict();

/** The fields `session.start` sets for good: present in an update, `immutable_field_update`. */
export const IMMUTABLE_FIELDS = [
  "model",
  "audio",
  "client",
  "input",
  "instructions",
  "store",
] as const;

const SessionUpdate = z
  .object({
    delegation: DelegationUpdate.nullable().optional(),
    triggers: Triggers.optional(),
    // Set at start for good: parsed only to be refused by name (immutable_field_update).
    model: z.unknown().optional(),
    audio: z.unknown().optional(),
    client: z.unknown().optional(),
    input: z.unknown().optional(),
    instructions: z.unknown().optional(),
    store: z.unknown().optional(),
  })
  .strict();

const Append = <T extends string>(type: T) =>
  z
    .object({
      ...Base,
      type: z.literal(type),
      content: z.string(),
      // Required even when null: the key must be there (SDK: "Required, nullable").
      delegation_id: z.string().nullable(),
    })
    .strict();

const Part = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input_text"), text: z.string() }).strict(),
  z
    .object({
      type: z.literal("output_text"),
      text: z.string(),
      annotations: z.array(z.unknown()).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal("input_image"),
      image_url: Nullable(z.string()),
      file_id: Nullable(z.string()),
      detail: Nullable(z.enum(["low", "high", "auto", "original"])),
    })
    .strict(),
]);
const Message = z
  .object({
    type: z.literal("message"),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.union([z.string(), z.array(Part).min(1)]),
    id: Nullable(z.string()),
    status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
    phase: Nullable(z.enum(["commentary", "final_answer"])),
  })
  .strict();
const FunctionCallOutput = z
  .object({
    type: z.literal("function_call_output"),
    // Optional in the SDK's ResponseInputItem; without it no call is found (refused).
    call_id: Nullable(z.string()),
    output: z.union([z.string(), z.array(Part)]),
    id: Nullable(z.string()),
    name: Nullable(z.string()),
    namespace: Nullable(z.string()),
    caller: Nullable(z.looseObject({ type: z.enum(["direct", "program"]) })),
    status: Nullable(z.enum(["in_progress", "completed", "incomplete"])),
  })
  .strict();
/** A message's `type` is optional (EasyInputMessage): read as "message" when absent. */
const InputItem = z.preprocess(
  (v) => (v !== null && typeof v === "object" && !("type" in v) ? { ...v, type: "message" } : v),
  z.discriminatedUnion("type", [Message, FunctionCallOutput]),
);

/** Valid client events the simulator does not play: refused with `not_simulated`. */
export const NOT_SIMULATED = [
  "session.output_audio.fixture.play",
  "decision.create",
  "decision.item.create",
  "decision.item.delete",
] as const;

export const LiveClientEvent = z.discriminatedUnion("type", [
  z.object({ ...Base, type: z.literal("session.start"), session: SessionConfig }).strict(),
  z.object({ ...Base, type: z.literal("session.update"), session: SessionUpdate }).strict(),
  z.object({ ...Base, type: z.literal("session.input_audio.append"), audio: z.string() }).strict(),
  z.object({ ...Base, type: z.literal("session.input_audio.mute") }).strict(),
  z.object({ ...Base, type: z.literal("session.input_audio.unmute") }).strict(),
  Append("session.instructions.append"),
  Append("session.thinking.append"),
  Append("session.commentary.append"),
  z.object({ ...Base, type: z.literal("response.item.create"), item: InputItem }).strict(),
  z.object({ ...Base, type: z.literal("response.create") }).strict(),
  z.object({ ...Base, type: z.literal("session.close") }).strict(),
  ...NOT_SIMULATED.map((type) => z.looseObject({ ...Base, type: z.literal(type) })),
]);
export type LiveClientEvent = z.infer<typeof LiveClientEvent>;

/** The value at `path` in `json` (undefined when a step is missing). */
function at(json: unknown, path: readonly PropertyKey[]): unknown {
  let v = json;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * The service's refusal of an invalid event: `unknown_parameter` (documented), a missing
 * required key, an unknown event type, or a bad value (those codes are assumed).
 */
export function invalidEventMessage(
  error: z.ZodError,
  json: unknown,
): { code: string; message: string; param: string } {
  const issue = error.issues[0];
  const path = issue?.path ?? [];
  const dotted = path.join(".");
  if (issue?.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const param = dotted === "" ? key : `${dotted}.${key}`;
    return { code: "unknown_parameter", message: `Unknown parameter: '${param}'.`, param };
  }
  // An unknown `type`: zod reports the top-level discriminator at path ["type"].
  if (issue?.code === "invalid_union" && (dotted === "" || dotted === "type")) {
    return { code: "invalid_event", message: "Invalid event type.", param: "type" };
  }
  if (issue?.code === "invalid_type" && path.length > 0 && at(json, path) === undefined) {
    return {
      code: "missing_required_parameter",
      message: `Missing required parameter: '${dotted}'.`,
      param: dotted,
    };
  }
  return {
    code: "invalid_value",
    message: `Invalid value at '${dotted}': ${issue?.message ?? ""}`,
    param: dotted,
  };
}
