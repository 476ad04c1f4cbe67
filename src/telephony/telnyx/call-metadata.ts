import { z } from "zod";

/** The call statuses after which no stream will come (TeXML's CallStatus values). */
export const CALL_OVER = new Set(["completed", "busy", "failed", "no-answer", "canceled"]);

/** What a Telnyx call's session keeps in `metadata.telephony` (the voice webhook's parameters). */
export const CallMetadata = z.object({
  carrier: z.literal("telnyx"),
  /** The call's CallSid (its call_control_id, `v3:…`). */
  callSid: z.string(),
  /** The account's id (a UUID): the TeXML REST API's path names it. */
  accountSid: z.string().optional(),
  from: z.string(),
  to: z.string(),
  /** Placed by the demo page (its webhook signed by the Worker itself): never transferred. */
  demo: z.literal(true).optional(),
});
export type CallMetadata = z.infer<typeof CallMetadata>;
