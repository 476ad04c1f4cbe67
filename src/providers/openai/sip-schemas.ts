/**
 * OpenAI Realtime's SIP call control (`POST /v1/realtime/calls/{call_id}/accept|refer|hangup`),
 * as zod schemas: what liveline sends, strict (a stray field is a bug here, caught before it
 * is sent). From the `openai` package's types, 7.57.0 `resources/realtime/calls.d.ts`
 * (`CallAcceptParams`, `CallReferParams`).
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

/**
 * A call's session, as `session.update` sets up a WebSocket's but without the audio formats:
 * the call's media negotiated its own codec on the SIP leg.
 */
export const CallAcceptParams = z
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
          .strict()
          .optional(),
        output: z.object({ voice: z.string().optional() }).strict().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type CallAcceptParams = z.infer<typeof CallAcceptParams>;

/** A transfer: the URI put in the SIP REFER's Refer-To header (`tel:+…` or `sip:…`). */
export const CallReferParams = z.object({ target_uri: z.string().min(1) }).strict();
export type CallReferParams = z.infer<typeof CallReferParams>;
