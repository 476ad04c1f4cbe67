import { z } from "zod";

/** The call statuses after which no stream will come (Vonage's event webhook's `status`). */
export const CALL_OVER = new Set([
  "completed",
  "busy",
  "cancelled",
  "unanswered",
  "rejected",
  "failed",
  "timeout",
]);

/** What a Vonage call's session keeps in `metadata.telephony` (the answer webhook's fields). */
export const CallMetadata = z.object({
  carrier: z.literal("vonage"),
  uuid: z.string(),
  from: z.string(),
  to: z.string(),
  /** Placed by the demo page (its webhook signed by the Worker itself): never transferred. */
  demo: z.literal(true).optional(),
});
export type CallMetadata = z.infer<typeof CallMetadata>;
