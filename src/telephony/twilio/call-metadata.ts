import { z } from "zod";

/** The call statuses after which no stream will come (Twilio's CallStatus values). */
export const CALL_OVER = new Set(["completed", "busy", "failed", "no-answer", "canceled"]);

/** What a call's session keeps in `metadata.telephony` (the voice webhook's parameters). */
export const CallMetadata = z.object({
  carrier: z.literal("twilio"),
  callSid: z.string(),
  /** Absent in sessions made before transfers existed: such a call cannot be transferred. */
  accountSid: z.string().optional(),
  from: z.string(),
  to: z.string(),
  /** Placed by the demo page (its webhook signed by the Worker itself): never transferred. */
  demo: z.literal(true).optional(),
});
export type CallMetadata = z.infer<typeof CallMetadata>;
