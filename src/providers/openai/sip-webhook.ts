/**
 * OpenAI's `realtime.call.incoming` webhook event (a SIP call reached the project), as the
 * `openai` package types it (`resources/webhooks/webhooks.d.ts`,
 * `RealtimeCallIncomingWebhookEvent`): `{id, type, created_at, data: {call_id, sip_headers:
 * [{name, value}]}}`. Read leniently (the service adds fields); the SIP headers are the
 * caller's, untrusted: only the numbers are taken, to pick the agent and for the tools.
 */
import { z } from "zod";

export const INCOMING_CALL = "realtime.call.incoming";

/** Any event the webhook endpoint may get: only its type is read before it is known. */
export const WebhookEvent = z.object({ type: z.string(), id: z.string().optional() });

export const IncomingCallEvent = z.object({
  type: z.literal(INCOMING_CALL),
  id: z.string().min(1).max(200),
  data: z.object({
    call_id: z.string().min(1).max(200),
    sip_headers: z
      .array(z.object({ name: z.string().max(200), value: z.string().max(2000) }))
      .max(200),
  }),
});
export type IncomingCallEvent = z.infer<typeof IncomingCallEvent>;

/**
 * The number (or SIP user) in a From/To header: `sip:+15550100@host`, `<sip:…>;tag=…`,
 * `"Ada" <sips:…>`, `tel:+15550100`. An empty string when the header has none.
 */
export function sipUser(value: string): string {
  const match = /(?:sips?|tel):([^@;>\s]+)/i.exec(value);
  return match?.[1] ?? "";
}

/** The call's parties as its INVITE's From and To headers name them (first of each). */
export function callParties(event: IncomingCallEvent): { from: string; to: string } {
  const header = (name: string) =>
    event.data.sip_headers.find((h) => h.name.toLowerCase() === name)?.value ?? "";
  return { from: sipUser(header("from")), to: sipUser(header("to")) };
}
