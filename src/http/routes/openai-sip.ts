/**
 * The OpenAI SIP door: a phone call that reached OpenAI Realtime through a SIP trunk, with no
 * carrier stream in between. OpenAI announces it with a `realtime.call.incoming` webhook to
 * POST /v1/sip/openai/webhook, signed with the project webhook's secret (Standard Webhooks:
 * OPENAI_WEBHOOK_SECRET; refused → 403, nothing created). The call's session is created (the
 * agent that answers the called number, its parties in `metadata.sip`), the session's object
 * accepts the call with the service as that agent, and its model connection becomes the
 * call's sideband: tools run there, once, and the record is kept; the agent's hang-up and
 * transfer go to the service (hang-up, SIP REFER); the caller's keys come on the sideband.
 * Sources: OpenAI's "Realtime API with SIP", "Webhooks" and "Webhooks and server-side
 * controls" guides; the `openai` package's types (7.57.0).
 */
import { Hono } from "hono";
import type { SipAcceptAnswer } from "../../contracts/session-api.js";
import { openaiWebhookSecret } from "../../providers/openai/provider.js";
import {
  callParties,
  INCOMING_CALL,
  IncomingCallEvent,
  WebhookEvent,
} from "../../providers/openai/sip-webhook.js";
import { webhookRefusal } from "../../providers/openai/webhook-signature.js";
import { phoneCallSessionId } from "../../telephony/carrier-contract.js";
import { limitBody } from "../body-limit.js";
import { type AppContext, type AppEnv, sessionStub } from "../context.js";
import { createSession } from "../create-session.js";
import { HttpError } from "../errors.js";
import { methodNotAllowed } from "../method-not-allowed.js";

/** An event is a few hundred bytes (its SIP headers a few KiB at most). */
const MAX_WEBHOOK_BYTES = 32 * 1024;

/** The simulator answers a SIP call as the service does: audio out, on the OpenAI face. */
const SIMULATED_SIP_KNOBS = { modality: "AUDIO", wire: "openai" };

/** The name SIP calls' sessions are made from (with the service's call id). */
const SIP_DOOR = "openai-sip";

export const openaiSipRoutes = new Hono<AppEnv>()
  .post("/webhook", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    const body = await signedBody(c);
    const event = WebhookEvent.safeParse(safeJson(body));
    if (!event.success) throw new HttpError(400, "bad_request", "the event is not a JSON event");
    // The project's webhook gets every event type it subscribed to: only calls are ours.
    if (event.data.type !== INCOMING_CALL) return c.json({ ignored: event.data.type });
    const incoming = IncomingCallEvent.safeParse(safeJson(body));
    if (!incoming.success)
      throw new HttpError(
        400,
        "bad_request",
        `${INCOMING_CALL}: ${incoming.error.issues[0]?.message}`,
      );
    const sipCallId = incoming.data.data.call_id;
    const { from, to } = callParties(incoming.data);
    const { app, config } = c.var;
    const sip = { service: "openai", callId: sipCallId, from, to };
    const simulated = config.PROVIDER === "simulator";
    // On the simulator, the webhook URL's `simulator` query adds knobs (unsigned: the
    // simulator serves development and tests only).
    const knobs = Object.fromEntries(new URLSearchParams(c.req.query("simulator") ?? ""));
    const sessionId = await createSession(c, {
      // Named by the call: a delivery the service retries finds the session it made.
      sessionId: await phoneCallSessionId(SIP_DOOR, sipCallId),
      agent: app.agentForNumber(to),
      provider: simulated ? "simulator" : "openai",
      metadata: simulated ? { sip, simulator: { ...SIMULATED_SIP_KNOBS, ...knobs } } : { sip },
      options: {},
    });
    const stub = sessionStub(c, sessionId);
    const answer = await stub.acceptSipCall(sipCallId);
    if ("refused" in answer) {
      // A call the service would not let liveline take has no session either.
      if (answer.refused === "service_failed") await stub.end("carrier_ended");
      throw refusal(answer);
    }
    return c.json({ sessionId, accepted: true });
  })
  .all("/webhook", methodNotAllowed("POST"));

/** Why the call was not taken, as the webhook's answer says it. */
function refusal({ refused, message }: Extract<SipAcceptAnswer, { refused: string }>): HttpError {
  switch (refused) {
    case "ended":
      return new HttpError(410, "session_ended", message);
    case "agent_unavailable":
      return new HttpError(503, "agent_unavailable", message);
    case "model_unavailable":
      return new HttpError(503, "model_unavailable", message);
    case "unsupported":
      return new HttpError(400, "sip_unsupported", message);
    case "service_failed":
      return new HttpError(502, "upstream_error", message);
    default: {
      const unreachable: never = refused;
      throw new Error(`unknown refusal ${JSON.stringify(unreachable)}`);
    }
  }
}

/** The webhook's body, once its signature is checked (403 otherwise; 503 without a secret). */
async function signedBody(c: AppContext): Promise<string> {
  const secret = openaiWebhookSecret(c.var.app.env(c.env));
  if (secret === undefined)
    throw new HttpError(
      503,
      "not_configured",
      "SIP calls need the OPENAI_WEBHOOK_SECRET secret (wrangler secret put OPENAI_WEBHOOK_SECRET)",
    );
  const body = await c.req.text();
  const refusal = await webhookRefusal(secret, c.req.raw.headers, body, Date.now());
  if (refusal !== null)
    throw new HttpError(403, "forbidden", "the request is not signed with the webhook secret");
  return body;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
