/**
 * OpenAI Realtime (GA) wire messages, as zod schemas: the client events liveline sends
 * (strict: a field the service does not know is a bug here, not there) and the server
 * events it reads (only the fields it uses; the service adds fields freely). Shapes from
 * the Realtime API reference, checked against test/fixtures/openai.
 */
import { z } from "zod";

// ---------------------------------------------------------------------------
// Client events (what liveline sends)
// ---------------------------------------------------------------------------

// PCM16 at 24 kHz, or G.711 μ-law (8 kHz, its rate implied) for a phone call's audio.
const AudioFormat = z.union([
  z.object({ type: z.literal("audio/pcm"), rate: z.literal(24000) }).strict(),
  z.object({ type: z.literal("audio/pcmu") }).strict(),
]);

const FunctionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  })
  .strict();

const SessionUpdate = z
  .object({
    type: z.literal("session.update"),
    session: z
      .object({
        type: z.literal("realtime"),
        model: z.string().optional(),
        instructions: z.string().optional(),
        output_modalities: z.array(z.enum(["audio", "text"])).optional(),
        tools: z.array(FunctionTool).optional(),
        tool_choice: z.literal("auto").optional(),
        audio: z
          .object({
            input: z
              .object({
                // Absent in a handoff's update: the format set up with the session stays.
                format: AudioFormat.optional(),
                transcription: z
                  .object({ model: z.string(), language: z.string().optional() })
                  .strict()
                  .optional(),
                turn_detection: z
                  .object({
                    type: z.literal("server_vad"),
                    create_response: z.boolean().optional(),
                    interrupt_response: z.boolean().optional(),
                  })
                  .strict()
                  .optional(),
              })
              .strict(),
            output: z
              .object({ format: AudioFormat, voice: z.string().optional() })
              .strict()
              .optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
  })
  .strict();

const InputText = z.object({ type: z.literal("input_text"), text: z.string() }).strict();
/** An assistant's text: `output_text` (GA), or `text` (the original shape Voice Live keeps). */
const OutputText = z.object({ type: z.enum(["output_text", "text"]), text: z.string() }).strict();

const ConversationItem = z.union([
  z
    .object({
      type: z.literal("message"),
      role: z.literal("user"),
      content: z.array(InputText).min(1),
    })
    .strict(),
  z
    .object({
      type: z.literal("message"),
      role: z.literal("assistant"),
      content: z.array(OutputText).min(1),
    })
    .strict(),
  z
    .object({
      type: z.literal("function_call"),
      call_id: z.string().min(1),
      name: z.string().min(1),
      arguments: z.string(),
    })
    .strict(),
  z
    .object({
      type: z.literal("function_call_output"),
      call_id: z.string().min(1),
      output: z.string(),
    })
    .strict(),
]);

export const ClientEvent = z.discriminatedUnion("type", [
  SessionUpdate,
  z
    .object({
      type: z.literal("conversation.item.create"),
      /** Inserted right after this item (a side effect's result after its call), not at the end. */
      previous_item_id: z.string().min(1).optional(),
      item: ConversationItem,
    })
    .strict(),
  z.object({ type: z.literal("input_audio_buffer.append"), audio: z.string() }).strict(),
  z.object({ type: z.literal("input_audio_buffer.commit") }).strict(),
  z.object({ type: z.literal("input_audio_buffer.clear") }).strict(),
  z.object({ type: z.literal("response.create") }).strict(),
  z.object({ type: z.literal("response.cancel"), response_id: z.string().optional() }).strict(),
  z
    .object({
      type: z.literal("conversation.item.truncate"),
      item_id: z.string(),
      content_index: z.number().int().nonnegative(),
      audio_end_ms: z.number().int().nonnegative(),
    })
    .strict(),
]);
export type ClientEvent = z.infer<typeof ClientEvent>;

// ---------------------------------------------------------------------------
// Server events (what liveline reads)
// ---------------------------------------------------------------------------

/** Counts may be missing (xAI sends an empty usage at times): a usage without them is none. */
const Usage = z.object({
  total_tokens: z.number().optional(),
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  input_token_details: z
    .object({
      text_tokens: z.number().optional(),
      audio_tokens: z.number().optional(),
      cached_tokens: z.number().optional(),
      cached_tokens_details: z
        .object({ text_tokens: z.number().optional(), audio_tokens: z.number().optional() })
        .optional(),
    })
    .optional(),
  output_token_details: z
    .object({ text_tokens: z.number().optional(), audio_tokens: z.number().optional() })
    .optional(),
});

const Response = z.object({
  id: z.string(),
  status: z.enum(["in_progress", "completed", "cancelled", "failed", "incomplete"]),
  status_details: z
    .object({ type: z.string().optional(), reason: z.string().optional() })
    .nullable()
    .optional(),
  usage: Usage.nullable().optional(),
});

const Delta = { response_id: z.string(), item_id: z.string(), delta: z.string() };

/** The server events liveline acts on; every other type is ignored (and counted). */
export const ServerEvent = z.discriminatedUnion("type", [
  z.object({ type: z.literal("session.created") }),
  z.object({ type: z.literal("session.updated") }),
  z.object({ type: z.literal("response.created"), response: Response }),
  z.object({ type: z.literal("response.done"), response: Response }),
  z.object({ type: z.literal("response.output_text.delta"), ...Delta }),
  z.object({ type: z.literal("response.output_audio.delta"), ...Delta }),
  z.object({ type: z.literal("response.output_audio_transcript.delta"), ...Delta }),
  z.object({
    type: z.literal("response.function_call_arguments.done"),
    // xAI's event carries neither (Pipecat's Grok types); the call's own fields suffice.
    response_id: z.string().optional(),
    item_id: z.string().optional(),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
  }),
  z.object({
    type: z.literal("conversation.item.input_audio_transcription.delta"),
    delta: z.string(),
  }),
  z.object({
    type: z.literal("conversation.item.input_audio_transcription.completed"),
    transcript: z.string(),
  }),
  z.object({ type: z.literal("input_audio_buffer.speech_started") }),
  z.object({ type: z.literal("input_audio_buffer.speech_stopped") }),
  z.object({ type: z.literal("input_audio_buffer.committed") }),
  // SIP only (the `openai` package's types): a key the caller pressed, and the model's audio
  // to the caller begun, played out, or cut by the caller's speech (also WebRTC's).
  z.object({
    type: z.literal("input_audio_buffer.dtmf_event_received"),
    event: z.string(),
    received_at: z.number().optional(),
  }),
  z.object({ type: z.literal("output_audio_buffer.started") }),
  z.object({ type: z.literal("output_audio_buffer.stopped") }),
  z.object({ type: z.literal("output_audio_buffer.cleared") }),
  z.object({
    type: z.literal("error"),
    // Voice Live's error may lack its type or message (Pipecat's Voice Live types).
    error: z.object({
      type: z.string().optional(),
      code: z.string().nullable().optional(),
      message: z.string().optional(),
    }),
  }),
]);
export type ServerEvent = z.infer<typeof ServerEvent>;

/** Types liveline reads; anything else is another event the service may send. */
export const KNOWN_SERVER_TYPES: ReadonlySet<string> = new Set(
  ServerEvent.options.map((o) => o.shape.type.value),
);

/**
 * The original server event names (Realtime beta, kept by Azure Voice Live) of the events
 * liveline reads, and their GA names. The `.done` events and `conversation.item.created` are
 * not read under either name.
 */
export const BETA_EVENT_NAMES: Readonly<Record<string, string>> = {
  "response.text.delta": "response.output_text.delta",
  "response.audio.delta": "response.output_audio.delta",
  "response.audio_transcript.delta": "response.output_audio_transcript.delta",
};
