import { z } from "zod";

/** The call statuses after which no stream will come (Plivo's CallStatus values). */
export const CALL_OVER = new Set(["completed", "busy", "failed", "timeout", "no-answer", "cancel"]);

/** What a Plivo call's session keeps in `metadata.telephony` (the answer URL's parameters). */
export const CallMetadata = z.object({
  carrier: z.literal("plivo"),
  callUuid: z.string(),
  from: z.string(),
  to: z.string(),
  /**
   * The Worker's origin as Plivo reached it: a transfer has Plivo fetch the dialling XML
   * from POST {origin}/v1/telephony/plivo/transfer.
   */
  origin: z.string().optional(),
  /** Placed by the demo page (its webhook signed by the Worker itself): never transferred. */
  demo: z.literal(true).optional(),
});
export type CallMetadata = z.infer<typeof CallMetadata>;
