/**
 * The telephony door (Twilio): a phone call is a liveline session.
 *
 * - POST /v1/telephony/twilio/voice — Twilio's voice webhook for an incoming call, signed
 *   with the account's auth token (X-Twilio-Signature; refused → 403, nothing created). It
 *   creates the call's session (the agent that answers the called number; From, To and
 *   CallSid in its metadata) and answers TwiML that connects the call's audio to
 *   GET /v1/telephony/twilio/stream/:id, with a single-use token as a `<Parameter>` — never
 *   the API key, never a session token.
 * - GET /v1/telephony/twilio/stream/:id — the bidirectional Media Stream, handed to the
 *   session's object, where its `start` must present that token before anything is heard.
 * Sources: https://www.twilio.com/docs/usage/webhooks/webhooks-security,
 * https://www.twilio.com/docs/voice/twiml/stream
 */
import { Hono } from "hono";
import { CARRIER_HEADER, SESSION_HEADER } from "../../contracts/session-api.js";
import {
  CALL_OVER,
  type CallMetadata,
  callSessionId,
} from "../../telephony/twilio/call-session.js";
import {
  isValidTwilioSignature,
  TWILIO_SIGNATURE_HEADER,
} from "../../telephony/twilio/signature.js";
import { connectStreamTwiml, hangupTwiml } from "../../telephony/twilio/twiml.js";
import { limitBody } from "../body-limit.js";
import {
  type AppContext,
  type AppEnv,
  requireWebSocketUpgrade,
  sessionStub,
  wsOrigin,
} from "../context.js";
import { createSession } from "../create-session.js";
import { HttpError } from "../errors.js";
import { sessionIdParam } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";

/** How long the stream token of a call's answer is valid: Twilio connects within seconds. */
const CALL_TOKEN_TTL_MS = 60_000;

const XML = { "Content-Type": "text/xml; charset=utf-8" };

/** Form bodies of Twilio's webhooks beyond this are refused (they are a few hundred bytes). */
const MAX_WEBHOOK_BYTES = 16 * 1024;

/** The simulator hears a call as the real services do: speech by its energy, audio out. */
const SIMULATED_CALL_KNOBS = { modality: "AUDIO", vad: "energy" };

export const telephonyRoutes = new Hono<AppEnv>()
  .post("/twilio/voice", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    const params = await signedWebhook(c);
    const callSid = requiredParam(params, "CallSid");
    const from = params.get("From") ?? "";
    const to = params.get("To") ?? "";
    const { app, config } = c.var;
    const accountSid = params.get("AccountSid");
    const telephony: CallMetadata = {
      carrier: "twilio",
      callSid,
      from,
      to,
      ...(accountSid === null ? {} : { accountSid }),
      // Placed by the demo page (the Worker signed its webhook): never transferred.
      ...(c.req.query("demo") === "1" ? { demo: true as const } : {}),
    };
    // On the simulator, the webhook URL's `simulator` query (set where the number's webhook
    // is configured, and covered by the signature) adds knobs: `?simulator=wire%3Dopenai`.
    const knobs = new URLSearchParams(c.req.query("simulator") ?? "");
    const simulator = { ...SIMULATED_CALL_KNOBS, ...Object.fromEntries(knobs) };
    const sessionId = await createSession(c, {
      // Named by the call: a retried webhook finds the session it made.
      sessionId: await callSessionId(callSid),
      agent: app.agentForNumber(to),
      metadata: config.PROVIDER === "simulator" ? { telephony, simulator } : { telephony },
      options: {},
    });
    const answer = await sessionStub(c, sessionId).callToken(CALL_TOKEN_TTL_MS);
    // The call's session has ended, or its stream is already up (a replayed webhook): a
    // retry gets nothing that could join the call.
    if ("refused" in answer) return c.body(hangupTwiml(), 200, XML);
    const twiml = connectStreamTwiml({
      streamUrl: streamUrl(c.req.url, sessionId),
      parameters: { token: answer.token },
    });
    return c.body(twiml, 200, XML);
  })
  .all("/twilio/voice", methodNotAllowed("POST"))
  .post("/twilio/status", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    // The call's status callback: a call over before its stream started (or without one)
    // leaves no session open.
    const params = await signedWebhook(c);
    const callSid = requiredParam(params, "CallSid");
    if (CALL_OVER.has(params.get("CallStatus") ?? "")) {
      const stub = sessionStub(c, await callSessionId(callSid));
      if ((await stub.lifecycle()) === "open") await stub.end();
    }
    return c.body(null, 204);
  })
  .all("/twilio/status", methodNotAllowed("POST"))
  .get("/twilio/stream/:id", async (c) => {
    const sessionId = sessionIdParam(c);
    requireWebSocketUpgrade(c);
    const stub = sessionStub(c, sessionId);
    if (!(await stub.exists())) throw new HttpError(404, "unknown_session", "no such session");
    // Only the headers the object trusts, set here: the stream proves itself by its `start`.
    const headers = new Headers({ Upgrade: "websocket" });
    headers.set(SESSION_HEADER, sessionId);
    headers.set(CARRIER_HEADER, "twilio");
    return stub.fetch(new Request(c.req.url, { headers }));
  })
  .all("/twilio/stream/:id", methodNotAllowed("GET"));

/** The webhook's form parameters, once its signature is Twilio's (403 otherwise). */
async function signedWebhook(c: AppContext): Promise<URLSearchParams> {
  const authToken = c.var.config.TWILIO_AUTH_TOKEN;
  if (authToken === undefined)
    throw new HttpError(
      503,
      "not_configured",
      "phone calls need TWILIO_AUTH_TOKEN (wrangler secret put TWILIO_AUTH_TOKEN)",
    );
  const text = await c.req.text();
  const params = new URLSearchParams(text);
  const signature = c.req.header(TWILIO_SIGNATURE_HEADER) ?? null;
  if (!(await isValidTwilioSignature(authToken, c.req.url, params, signature)))
    throw new HttpError(403, "forbidden", "the request is not signed by Twilio for this URL");
  return params;
}

/** A parameter every call's webhook carries; 400 without it. */
function requiredParam(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  if (value === null || value === "")
    throw new HttpError(400, "bad_request", `the webhook has no ${name}`);
  return value;
}

/** `wss://<host>/v1/telephony/twilio/stream/<id>` (ws:// for a plain-HTTP local server). */
function streamUrl(requestUrl: string, sessionId: string): string {
  return `${wsOrigin(requestUrl)}/v1/telephony/twilio/stream/${sessionId}`;
}
