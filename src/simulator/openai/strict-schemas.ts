/**
 * The client events the OpenAI Realtime stand-in takes, as the service documents them (GA
 * reference): strict, so a field the service would refuse is refused here too. Written from
 * the reference, not from liveline's adapter: the two must not share one understanding.
 */
import { z } from "zod";

const Base = { event_id: z.string().optional() };

const Format = z
  .object({ type: z.enum(["audio/pcm", "audio/pcmu", "audio/pcma"]), rate: z.number().optional() })
  .strict();

const Tool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const Session = z
  .object({
    // GA: the session type is required ("realtime" or "transcription").
    type: z.literal("realtime"),
    model: z.string().optional(),
    instructions: z.string().optional(),
    output_modalities: z
      .array(z.enum(["audio", "text"]))
      .max(1)
      .optional(),
    tools: z.array(Tool).optional(),
    tool_choice: z
      .union([z.enum(["auto", "none", "required"]), z.record(z.string(), z.unknown())])
      .optional(),
    max_output_tokens: z.union([z.number(), z.literal("inf")]).optional(),
    tracing: z.unknown().optional(),
    truncation: z.unknown().optional(),
    prompt: z.unknown().optional(),
    include: z.array(z.string()).optional(),
    audio: z
      .object({
        input: z
          .object({
            format: Format.optional(),
            transcription: z
              .object({
                model: z.string(),
                language: z.string().optional(),
                prompt: z.string().optional(),
              })
              .strict()
              .nullable()
              .optional(),
            noise_reduction: z.unknown().optional(),
            turn_detection: z
              .object({
                type: z.enum(["server_vad", "semantic_vad"]),
                threshold: z.number().optional(),
                prefix_padding_ms: z.number().optional(),
                silence_duration_ms: z.number().optional(),
                idle_timeout_ms: z.number().nullable().optional(),
                create_response: z.boolean().optional(),
                interrupt_response: z.boolean().optional(),
                eagerness: z.string().optional(),
              })
              .strict()
              .nullable()
              .optional(),
          })
          .strict()
          .optional(),
        output: z
          .object({
            format: Format.optional(),
            voice: z.string().optional(),
            speed: z.number().optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const Text = (type: "input_text" | "output_text" | "text") =>
  z.object({ type: z.literal(type), text: z.string() }).strict();

const Item = z.union([
  z
    .object({
      id: z.string().optional(),
      type: z.literal("message"),
      role: z.enum(["user", "system"]),
      content: z.array(Text("input_text")).min(1),
    })
    .strict(),
  z
    .object({
      id: z.string().optional(),
      type: z.literal("message"),
      role: z.literal("assistant"),
      content: z.array(z.union([Text("output_text"), Text("text")])).min(1),
    })
    .strict(),
  z
    .object({
      id: z.string().optional(),
      type: z.literal("function_call"),
      call_id: z.string().min(1),
      name: z.string().min(1),
      arguments: z.string(),
    })
    .strict(),
  z
    .object({
      id: z.string().optional(),
      type: z.literal("function_call_output"),
      call_id: z.string().min(1),
      output: z.string(),
    })
    .strict(),
]);

/**
 * The client events of a face whose `session.update` takes `session` (each service of the
 * family has its own shape: ./dialects.ts); `truncate`: whether the service has
 * `conversation.item.truncate` among its client events.
 */
export function clientEvents<S extends z.ZodType>(session: S, truncate: boolean) {
  const events = [
    z.object({ ...Base, type: z.literal("session.update"), session }).strict(),
    z
      .object({
        ...Base,
        type: z.literal("conversation.item.create"),
        previous_item_id: z.string().nullable().optional(),
        item: Item,
      })
      .strict(),
    z.object({ ...Base, type: z.literal("input_audio_buffer.append"), audio: z.string() }).strict(),
    z.object({ ...Base, type: z.literal("input_audio_buffer.commit") }).strict(),
    z.object({ ...Base, type: z.literal("input_audio_buffer.clear") }).strict(),
    z
      .object({
        ...Base,
        type: z.literal("response.create"),
        response: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    z
      .object({ ...Base, type: z.literal("response.cancel"), response_id: z.string().optional() })
      .strict(),
  ] as const;
  const truncation = z
    .object({
      ...Base,
      type: z.literal("conversation.item.truncate"),
      item_id: z.string(),
      content_index: z.number().int().nonnegative(),
      audio_end_ms: z.number().int().nonnegative(),
    })
    .strict();
  // A service without truncation refuses it as any unknown event.
  return truncate
    ? z.discriminatedUnion("type", [...events, truncation])
    : z.discriminatedUnion("type", [...events]);
}

/** OpenAI Realtime's (GA): its session, and every client event. */
export const OpenAIClientEvent = clientEvents(Session, true);
export type OpenAIClientEvent = z.infer<typeof OpenAIClientEvent>;

/** The service's wording for a refused event: "Unknown parameter: 'session.x'." and the like. */
export function invalidEventMessage(error: z.ZodError): {
  code: string;
  message: string;
  param: string;
} {
  const issue = error.issues[0];
  const path = issue?.path.join(".") ?? "";
  if (issue?.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    const param = path === "" ? key : `${path}.${key}`;
    return { code: "unknown_parameter", message: `Unknown parameter: '${param}'.`, param };
  }
  // An unknown `type`: zod reports the top-level discriminator at path ["type"].
  if (issue?.code === "invalid_union" && (path === "" || path === "type")) {
    return { code: "invalid_event", message: "Invalid event type.", param: "type" };
  }
  return {
    code: "invalid_value",
    message: `Invalid value at '${path}': ${issue?.message ?? ""}`,
    param: path,
  };
}
