import { z } from "zod";

/**
 * A call's session id, from its CallSid: the same call always names the same session, so a
 * voice webhook Twilio retries finds the session it already made, and the call's status
 * callback can end it. A name-based UUID (version 8: SHA-256 of the carrier and the sid).
 */
export async function callSessionId(callSid: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`twilio:${callSid}`)),
  );
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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

/** A session's call, or null when its metadata holds none. */
export function callMetadataOf(metadata: Record<string, unknown>): CallMetadata | null {
  const read = CallMetadata.safeParse(metadata.telephony);
  return read.success ? read.data : null;
}
