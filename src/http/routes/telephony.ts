/**
 * The telephony door: a phone call is a liveline session. One set of routes for every carrier
 * in src/carrier-registry.ts (/v1/telephony/twilio/…, …/telnyx/…); the carrier reads its own
 * webhooks and speaks its own call-control answers.
 *
 * - POST /v1/telephony/:carrier/voice — the carrier's voice webhook for an incoming call,
 *   signed by the carrier (refused → 403, nothing created). It creates the call's session
 *   (the agent that answers the called number; the call's parameters in its metadata) and
 *   answers with what connects the call's audio to GET /v1/telephony/:carrier/stream/:id,
 *   with a single-use token the stream's start must present — never the API key, never a
 *   session token.
 * - POST /v1/telephony/:carrier/reconnect — the carrier's word that the call's stream ended
 *   while the call goes on (Twilio: the stream's `<Connect action>`), signed like the others:
 *   the same call connected to its session again with a fresh token (no second greeting), or
 *   hung up (the session ended, a stranger's call, too many reconnects). Never creates one.
 * - POST /v1/telephony/:carrier/status — the call's status callback: a call over ends its
 *   session.
 * - POST /v1/telephony/:carrier/transfer?to=+E164 — for a carrier whose transfer has it fetch
 *   the call's next document (Plivo): signed by the carrier, it answers the carrier's <Dial>.
 * - GET /v1/telephony/:carrier/stream/:id — the bidirectional media stream, handed to the
 *   session's object, where its start must present that token before anything is heard.
 * Sources: each carrier's folder in src/telephony (Twilio, Telnyx, Plivo, Vonage).
 */
import { Hono } from "hono";
import { carrierNamed } from "../../carrier-registry.js";
import type { SessionRecording } from "../../contracts/session-api.js";
import { CARRIER_HEADER, SESSION_HEADER } from "../../contracts/session-api.js";
import { phoneCallSessionId, type RegisteredCarrier } from "../../telephony/carrier-contract.js";
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

/** How long the stream token of a call's answer is valid: the carrier connects within seconds. */
const CALL_TOKEN_TTL_MS = 60_000;

/** Webhook bodies beyond this are refused (a carrier's are a few hundred bytes). */
const MAX_WEBHOOK_BYTES = 16 * 1024;

/** The simulator hears a call as the real services do: speech by its energy, audio out. */
const SIMULATED_CALL_KNOBS = { modality: "AUDIO", vad: "energy" };

export const telephonyRoutes = new Hono<AppEnv>()
  .post("/:carrier/voice", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    const carrier = carrierOf(c);
    const params = await signedWebhook(c, carrier);
    // Placed by the demo page (the Worker signed its webhook): never transferred.
    const inbound = carrier.inboundCall(params, c.req.query("demo") === "1", c.req.url);
    if (!inbound.ok) throw new HttpError(400, "bad_request", inbound.problem);
    const { app, config } = c.var;
    const telephony = inbound.call;
    // On the simulator, the webhook URL's `simulator` query (set where the number's webhook
    // is configured, and covered by the signature) adds knobs: `?simulator=wire%3Dopenai`.
    const knobs = new URLSearchParams(c.req.query("simulator") ?? "");
    const simulator = { ...SIMULATED_CALL_KNOBS, ...Object.fromEntries(knobs) };
    const sessionId = await createSession(c, {
      // Named by the call: a retried webhook finds the session it made.
      sessionId: await phoneCallSessionId(telephony.carrier, inbound.callId),
      agent: app.agentForNumber(telephony.to),
      metadata: config.PROVIDER === "simulator" ? { telephony, simulator } : { telephony },
      options: {},
      recording: recordingOfNumber(c.req.query("record")),
    });
    const answer = await sessionStub(c, sessionId).callToken(CALL_TOKEN_TTL_MS, "answer");
    // The call's session has ended, or its stream is already up (a replayed webhook): a
    // retry gets nothing that could join the call.
    const reply =
      "refused" in answer
        ? carrier.hangUp()
        : carrier.connect(
            streamUrl(c, sessionId),
            answer.token,
            c.var.app.env(c.env),
            inbound.callId,
            reconnectUrl(c, carrier, telephony),
          );
    return c.body(reply.body, 200, { "Content-Type": reply.contentType });
  })
  .all("/:carrier/voice", methodNotAllowed("POST"))
  .post("/:carrier/reconnect", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    // The carrier's word that a call's stream ended (Twilio: <Connect action>): the same call
    // is connected to its session again, or hung up. Never a new session: a call no session
    // has (a stranger's, or a forged id) is hung up and nothing is recorded.
    const carrier = carrierOf(c);
    const params = await signedWebhook(c, carrier);
    const hangUp = carrier.hangUp();
    const hangUpReply = () => c.body(hangUp.body, 200, { "Content-Type": hangUp.contentType });
    if (carrier.reattach.kind !== "answer_webhook") return hangUpReply();
    const call = carrier.reattach.callOf(params);
    if (call === null) return hangUpReply();
    const sessionId = await phoneCallSessionId(c.req.param("carrier"), call.callId);
    const stub = sessionStub(c, sessionId);
    if ((await stub.lifecycle()) !== "open") return hangUpReply();
    if (call.over) {
      // The caller hung up as the stream ended: the call's session ends with it.
      await stub.end("caller_hung_up");
      return hangUpReply();
    }
    const answer = await stub.callToken(CALL_TOKEN_TTL_MS, "reconnect");
    if ("refused" in answer) return hangUpReply();
    const reply = carrier.connect(
      streamUrl(c, sessionId),
      answer.token,
      c.var.app.env(c.env),
      call.callId,
      reconnectUrlOf(c),
    );
    return c.body(reply.body, 200, { "Content-Type": reply.contentType });
  })
  .all("/:carrier/reconnect", methodNotAllowed("POST"))
  .post("/:carrier/status", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    // The call's status callback: a call over before its stream started (or without one)
    // leaves no session open.
    const carrier = carrierOf(c);
    const params = await signedWebhook(c, carrier);
    const ended = carrier.endedCall(params);
    if (ended !== null) {
      const stub = sessionStub(c, await phoneCallSessionId(c.req.param("carrier"), ended));
      if ((await stub.lifecycle()) === "open") await stub.end("carrier_ended");
    }
    return c.body(null, 204);
  })
  .all("/:carrier/status", methodNotAllowed("POST"))
  .post("/:carrier/transfer", limitBody(MAX_WEBHOOK_BYTES), async (c) => {
    // A carrier whose transfer fetches its next document (Plivo's aleg_url): signed like any
    // webhook, for this exact URL, its number included.
    const carrier = carrierOf(c);
    if (carrier.dial === undefined)
      throw new HttpError(404, "not_found", `${c.req.param("carrier")} transfers need no route`);
    await signedWebhook(c, carrier);
    const number = c.req.query("to") ?? "";
    let answer: ReturnType<typeof carrier.dial>;
    try {
      answer = carrier.dial(number);
    } catch (error) {
      throw new HttpError(400, "bad_request", (error as Error).message);
    }
    return c.body(answer.body, 200, { "Content-Type": answer.contentType });
  })
  .all("/:carrier/transfer", methodNotAllowed("POST"))
  .get("/:carrier/stream/:id", async (c) => {
    carrierOf(c);
    const sessionId = sessionIdParam(c);
    requireWebSocketUpgrade(c);
    const stub = sessionStub(c, sessionId);
    if (!(await stub.exists())) throw new HttpError(404, "unknown_session", "no such session");
    // Only the headers the object trusts, set here: the stream proves itself by its start.
    const headers = new Headers({ Upgrade: "websocket" });
    headers.set(SESSION_HEADER, sessionId);
    headers.set(CARRIER_HEADER, c.req.param("carrier"));
    return stub.fetch(new Request(c.req.url, { headers }));
  })
  .all("/:carrier/stream/:id", methodNotAllowed("GET"));

/**
 * What a number's calls record, from its voice URL's `?record=` (`audio`, `wire` or both,
 * comma-separated; the URL is the app's, and signed): over the answering agent's `recording`.
 */
function recordingOfNumber(record: string | undefined): SessionRecording | undefined {
  if (record === undefined || record === "") return undefined;
  const asked = record.split(",").map((r) => r.trim());
  const unknown = asked.filter((r) => r !== "audio" && r !== "wire");
  if (unknown.length > 0)
    throw new HttpError(400, "bad_request", `record: "${unknown.join(", ")}" is not audio or wire`);
  return {
    ...(asked.includes("audio") ? { audio: true } : {}),
    ...(asked.includes("wire") ? { wire: true } : {}),
  };
}

/** The route's carrier (404 for a name no carrier has). */
function carrierOf(c: AppContext): RegisteredCarrier {
  const name = c.req.param("carrier") ?? "";
  const carrier = carrierNamed(name);
  if (carrier === null) throw new HttpError(404, "not_found", `no carrier is named ${name}`);
  return carrier;
}

/** The webhook's parameters, once the carrier's signature is on it (403 otherwise). */
async function signedWebhook(c: AppContext, carrier: RegisteredCarrier): Promise<URLSearchParams> {
  const env = c.var.app.env(c.env);
  const unavailable = carrier.unavailable(env);
  if (unavailable !== null) throw new HttpError(503, "not_configured", unavailable);
  const params = await carrier.readWebhook(env, c.req.raw);
  if (params === null)
    throw new HttpError(403, "forbidden", "the request is not signed by the carrier for this URL");
  return params;
}

/**
 * Where the carrier asks to reconnect a call whose stream ended, when it can
 * (`reattach: answer_webhook`) and the Worker allows it (CALL_RECONNECT_GRACE_MS above 0): not
 * for the demo page's calls (placed in the page, whose webhook the Worker signs itself).
 */
function reconnectUrl(
  c: AppContext,
  carrier: RegisteredCarrier,
  call: { demo?: true | undefined },
): string | null {
  if (carrier.reattach.kind !== "answer_webhook" || call.demo === true) return null;
  return c.var.config.CALL_RECONNECT_GRACE_MS > 0 ? reconnectUrlOf(c) : null;
}

/** `https://<host>/v1/telephony/<carrier>/reconnect`: the request's own origin. */
function reconnectUrlOf(c: AppContext): string {
  return `${new URL(c.req.url).origin}/v1/telephony/${c.req.param("carrier")}/reconnect`;
}

/** `wss://<host>/v1/telephony/<carrier>/stream/<id>` (ws:// for a plain-HTTP local server). */
function streamUrl(c: AppContext, sessionId: string): string {
  return `${wsOrigin(c.req.url)}/v1/telephony/${c.req.param("carrier")}/stream/${sessionId}`;
}
