/**
 * The `session.update` of the family's services whose session is not OpenAI's GA one (that
 * one is in ./schemas.ts), as strict zod schemas: what liveline sends, so a field the service
 * would not know is a bug here, caught before it is sent.
 *
 * - xAI, from its voice agent guide (docs.x.ai, "Voice Agent API") as Pipecat's Grok service
 *   types it (`pipecat/services/xai/realtime/events.py`): `instructions`, `voice`,
 *   `turn_detection {type: "server_vad"}`, `audio.input/output.format` (`audio/pcm` with a
 *   rate of 8000–48000, `audio/pcmu`, `audio/pcma`), `audio.input.transcription
 *   {language_hint}`, `tools`.
 * - Azure Voice Live, from its reference ("unless otherwise noted, the same events as the
 *   Azure OpenAI Realtime API", learn.microsoft.com voice-live-how-to) as Pipecat's Voice Live
 *   service types it (`pipecat/services/azure/voicelive/events.py`): the original flat
 *   session (`modalities`, `input_audio_format`, `input_audio_sampling_rate`, `voice` as an
 *   object, `turn_detection`, `input_audio_transcription`, `tools`, `tool_choice`).
 */
import { z } from "zod";

const FunctionTool = z
  .object({
    type: z.literal("function"),
    name: z.string().min(1),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  })
  .strict();

/** xAI's audio formats: PCM at one of its rates, or G.711 μ-law at 8 kHz. */
const XaiFormat = z.union([
  z
    .object({
      type: z.literal("audio/pcm"),
      rate: z.union([
        z.literal(8000),
        z.literal(16000),
        z.literal(24000),
        z.literal(32000),
        z.literal(44100),
        z.literal(48000),
      ]),
    })
    .strict(),
  z.object({ type: z.literal("audio/pcmu") }).strict(),
]);

export const XaiSessionUpdate = z
  .object({
    type: z.literal("session.update"),
    session: z
      .object({
        instructions: z.string().optional(),
        voice: z.string().optional(),
        tools: z.array(FunctionTool).optional(),
        turn_detection: z
          .object({ type: z.literal("server_vad") })
          .strict()
          .optional(),
        audio: z
          .object({
            input: z
              .object({
                format: XaiFormat.optional(),
                transcription: z.object({ language_hint: z.string() }).strict().optional(),
              })
              .strict()
              .optional(),
            output: z.object({ format: XaiFormat }).strict().optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
  })
  .strict();
export type XaiSessionUpdate = z.infer<typeof XaiSessionUpdate>;

/** A Voice Live voice: the model's own (OpenAI's names) or an Azure neural voice. */
const FlatVoice = z.union([
  z.object({ type: z.literal("openai"), name: z.string().min(1) }).strict(),
  z.object({ type: z.literal("azure-standard"), name: z.string().min(1) }).strict(),
]);

const FlatAudioFormat = z.enum(["pcm16", "g711_ulaw"]);

export const FlatSessionUpdate = z
  .object({
    type: z.literal("session.update"),
    session: z
      .object({
        instructions: z.string().optional(),
        tools: z.array(FunctionTool).optional(),
        tool_choice: z.literal("auto").optional(),
        modalities: z
          .union([z.tuple([z.literal("text")]), z.tuple([z.literal("text"), z.literal("audio")])])
          .optional(),
        voice: FlatVoice.optional(),
        input_audio_format: FlatAudioFormat.optional(),
        /** PCM16's rate (16000 or 24000); G.711 is 8 kHz by its name. */
        input_audio_sampling_rate: z.union([z.literal(16000), z.literal(24000)]).optional(),
        output_audio_format: FlatAudioFormat.optional(),
        turn_detection: z
          .object({
            type: z.literal("server_vad"),
            create_response: z.boolean().optional(),
            interrupt_response: z.boolean().optional(),
          })
          .strict()
          .optional(),
        input_audio_transcription: z
          .object({ model: z.string(), language: z.string().optional() })
          .strict()
          .optional(),
      })
      .strict(),
  })
  .strict();
export type FlatSessionUpdate = z.infer<typeof FlatSessionUpdate>;
