/**
 * The demo page and the timeline viewer (Workers static assets), and the things they need
 * from the gateway that a page may not hold itself: a session and its tokens, and a phone
 * call's signed webhook. The page asks `/demo/sessions`; the Worker creates the session
 * through its own API with its API key, which never leaves it. The call view asks
 * `/demo/calls`; the Worker plays the carrier's voice webhook, signed with its own
 * TWILIO_AUTH_TOKEN (which never leaves it either; or the key of the carrier the body names:
 * PLIVO_AUTH_TOKEN, VONAGE_SIGNATURE_SECRET, TELNYX_DEMO_SIGNING_KEY), and hands the page the
 * answer, which the page's carrier stand-in follows to the call's media stream. Served on a local host, or
 * anywhere with `DEMO_PAGE = "on"` (which lets anyone who finds the page open sessions and
 * calls: for demos, not for production).
 */

import { z } from "zod";
import type { Env } from "../contracts/worker-env.js";
import { bytesToBase64Url } from "../providers/base64.js";
import { phoneCallSessionId } from "../telephony/carrier-contract.js";
import { inboundCallWebhook as plivoWebhook } from "../telephony/plivo/inbound-call.js";
import {
  telnyxCallSid,
  inboundCallWebhook as telnyxWebhook,
} from "../telephony/telnyx/inbound-call.js";
import { inboundCallWebhook, twilioSid } from "../telephony/twilio/inbound-call.js";
import { inboundCallWebhook as vonageWebhook } from "../telephony/vonage/inbound-call.js";
import { jsonError } from "../vocabulary/http-error.js";
import { isLocalHostname, safeEqual } from "./auth.js";

// (Assets drop the .html: /timeline.html redirects to /timeline.)
const PAGES = new Set(["/", "/index.html", "/timeline", "/timeline.html"]);
const FILES = /^\/[\w.-]+\.(js|css|svg|png|ico)$/;

/** Simulator knobs, as POST /v1/sessions takes them in metadata.simulator. */
const SimulatorKnobs = z.record(z.string(), z.union([z.string(), z.number()]));

const DemoSessionBody = z
  .object({
    agent: z.string().min(1).max(64).optional(),
    simulator: SimulatorKnobs.optional(),
    /** Record the session's audio and wire (the page's `?record=1`; docs/RECORDINGS.md). */
    record: z.boolean().optional(),
  })
  .strict();

/**
 * `simulator`: the voice webhook URL's `?simulator=` query, as a number's webhook sets it;
 * `record`: as the number's `?record=` asks (Twilio's calls); `carrier`: whose webhook the
 * Worker plays (Twilio unless named).
 */
const DemoCallBody = z
  .object({
    simulator: SimulatorKnobs.optional(),
    record: z.boolean().optional(),
    carrier: z.enum(["twilio", "telnyx", "plivo", "vonage"]).optional(),
  })
  .strict();

/** The demo's caller and number (555-01xx: reserved for fiction). */
const DEMO_FROM = "+15555550100";
const DEMO_TO = "+15555550199";
const VOICE_WEBHOOK_PATH = "/v1/telephony/twilio/voice";
/** The same local token as `npm run try -- --phone`'s hint (scripts/lib/try-phone.mjs). */
const NOT_CONFIGURED =
  "phone calls need TWILIO_AUTH_TOKEN: start it with npm run dev -- --var TWILIO_AUTH_TOKEN:dev-twilio-token (deployed: npx wrangler secret put TWILIO_AUTH_TOKEN)";

/** The demo's answer to `request`, or null when it is not the demo's (or the demo is off). */
export async function serveDemo(
  request: Request,
  env: Env,
  url: URL,
  demoOn: boolean,
  api: (request: Request) => Promise<Response>,
  apiKey: string | undefined,
): Promise<Response | null> {
  const assets = env.ASSETS;
  if (assets === undefined || !(demoOn || isLocalHostname(url.hostname))) return null;
  const path = url.pathname;
  if (request.method === "GET" && (PAGES.has(path) || FILES.test(path)))
    return assets.fetch(request);
  const token = /^\/demo\/sessions\/([0-9a-f-]{36})\/token$/.exec(path);
  if (path !== "/demo/sessions" && path !== "/demo/calls" && token === null) return null;
  if (request.method !== "POST")
    return jsonError(405, "method_not_allowed", "the demo's routes take POST");
  // Only the demo page itself (same origin), never another site the browser has open.
  const origin = request.headers.get("Origin");
  if (origin !== null && origin !== url.origin)
    return jsonError(403, "forbidden_origin", "the demo's routes answer their own page only");
  const secret = apiKey ?? "liveline-local-demo";
  if (path === "/demo/calls") return placeDemoCall(request, env, url, api, secret);
  const auth: Record<string, string> =
    apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` };
  if (path === "/demo/sessions") {
    const body = await demoBody(request, DemoSessionBody);
    if (body === null)
      return jsonError(400, "bad_request", 'the body is {"agent"?, "simulator"?, "record"?}');
    const create = {
      ...(body.agent === undefined ? {} : { agent: body.agent }),
      metadata: body.simulator === undefined ? {} : { simulator: body.simulator },
      ...(body.record === true ? { recording: { audio: true, wire: true } } : {}),
    };
    const created = await api(
      new Request(new URL("/v1/sessions", url), {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify(create),
      }),
    );
    if (created.status !== 201) return created;
    const answer = (await created.json()) as { sessionId: string };
    // The grant lets this page (and only a holder of it) ask for fresh tokens of this session.
    return Response.json(
      { ...answer, demoGrant: await grantFor(answer.sessionId, secret) },
      { status: 201 },
    );
  }
  const sessionId = token?.[1] ?? "";
  const grant = request.headers.get("X-Demo-Grant") ?? "";
  // Compared in constant time: the grant is a MAC, and a compare that stops at the first
  // differing character would tell an attacker, by its timing, how much of a guess was right.
  if (!(await safeEqual(grant, await grantFor(sessionId, secret))))
    return jsonError(
      403,
      "forbidden",
      "a fresh token needs the grant the session was created with",
    );
  return api(
    new Request(new URL(`/v1/sessions/${sessionId}/token`, url), { method: "POST", headers: auth }),
  );
}

/**
 * POST /demo/calls: the Worker plays the carrier's voice webhook for a new inbound call — the
 * parameters the carrier stand-in sends (telephony/twilio/inbound-call.ts), a fresh
 * CallSid, signed over the exact voice URL — through its own fetch, and answers 201 with the
 * TwiML the carrier would get, the call's sids and its session (with the demo's grant, so
 * the timeline viewer can read it). Any other answer of the webhook is passed on as it is.
 */
async function placeDemoCall(
  request: Request,
  env: Env,
  url: URL,
  api: (request: Request) => Promise<Response>,
  secret: string,
): Promise<Response> {
  const body = await demoBody(request, DemoCallBody);
  if (body === null)
    return jsonError(400, "bad_request", 'the body is {"simulator"?, "record"?, "carrier"?}');
  if (body.carrier !== undefined && body.carrier !== "twilio")
    return placeOtherDemoCall(body.carrier, body.simulator, env, url, api, secret);
  // The gateway's own signing key (the env has createLiveline's settings filled in).
  const authToken = env.TWILIO_AUTH_TOKEN;
  if (authToken === undefined || authToken === "")
    return jsonError(503, "not_configured", NOT_CONFIGURED);
  const voice = new URL(VOICE_WEBHOOK_PATH, url);
  if (body.simulator !== undefined) {
    const knobs = Object.entries(body.simulator).map(([k, v]): [string, string] => [k, String(v)]);
    voice.searchParams.set("simulator", new URLSearchParams(knobs).toString());
  }
  // `record`: as a number's voice URL asks (`?record=audio,wire`).
  if (body.record === true) voice.searchParams.set("record", "audio,wire");
  // A demo call is marked so (its query is covered by the signature): it can never be
  // transferred, so the page cannot make the Worker call Twilio's REST API with its token.
  voice.searchParams.set("demo", "1");
  const voiceUrl = voice.toString();
  const accountSid = twilioSid("AC");
  const callSid = twilioSid("CA");
  const answer = await api(
    await inboundCallWebhook({
      voiceUrl,
      authToken,
      accountSid,
      callSid,
      from: DEMO_FROM,
      to: DEMO_TO,
    }),
  );
  if (answer.status !== 200) return answer;
  const sessionId = await phoneCallSessionId("twilio", callSid);
  return Response.json(
    {
      callSid,
      accountSid,
      from: DEMO_FROM,
      to: DEMO_TO,
      twiml: await answer.text(),
      sessionId,
      demoGrant: await grantFor(sessionId, secret),
    },
    { status: 201 },
  );
}

/** The other carriers' demo calls: the key each signs with, and what it lacks without it. */
const OTHER_KEYS = {
  telnyx: {
    key: (env: Env) => env.TELNYX_DEMO_SIGNING_KEY,
    missing:
      "demo Telnyx calls need TELNYX_DEMO_SIGNING_KEY, the private half of TELNYX_PUBLIC_KEY (local development only: npm run try -- --phone --carrier telnyx names a pair)",
  },
  plivo: {
    key: (env: Env) => env.PLIVO_AUTH_TOKEN,
    missing:
      "phone calls need PLIVO_AUTH_TOKEN: start it with npm run dev -- --var PLIVO_AUTH_TOKEN:dev-plivo-auth-token",
  },
  vonage: {
    key: (env: Env) => env.VONAGE_SIGNATURE_SECRET,
    missing:
      "phone calls need VONAGE_SIGNATURE_SECRET: start it with npm run dev -- --var VONAGE_SIGNATURE_SECRET:dev-vonage-signature-secret",
  },
} as const;

/**
 * A demo call through Telnyx, Plivo or Vonage: the carrier's own signed voice webhook (its
 * builder in telephony/<carrier>/inbound-call.ts), through the Worker's own fetch; 201 with
 * the carrier's answer (`answer`: TeXML, Plivo XML or an NCCO), the call's id and its
 * session. Telnyx and Vonage sign the body only: there the demo mark in the query is not
 * covered by the signature (it only ever forbids a transfer).
 */
async function placeOtherDemoCall(
  carrier: keyof typeof OTHER_KEYS,
  simulator: Record<string, string | number> | undefined,
  env: Env,
  url: URL,
  api: (request: Request) => Promise<Response>,
  secret: string,
): Promise<Response> {
  const key = OTHER_KEYS[carrier].key(env);
  if (key === undefined || key === "")
    return jsonError(503, "not_configured", OTHER_KEYS[carrier].missing);
  const voice = new URL(`/v1/telephony/${carrier}/voice`, url);
  if (simulator !== undefined) {
    const knobs = Object.entries(simulator).map(([k, v]): [string, string] => [k, String(v)]);
    voice.searchParams.set("simulator", new URLSearchParams(knobs).toString());
  }
  voice.searchParams.set("demo", "1");
  const voiceUrl = voice.toString();
  let callId: string;
  let webhook: Request;
  const accountSid = crypto.randomUUID();
  if (carrier === "telnyx") {
    callId = telnyxCallSid();
    webhook = await telnyxWebhook({
      voiceUrl,
      privateKey: key,
      accountSid,
      callSid: callId,
      from: DEMO_FROM,
      to: DEMO_TO,
    });
  } else if (carrier === "plivo") {
    callId = crypto.randomUUID();
    webhook = await plivoWebhook({
      answerUrl: voiceUrl,
      authToken: key,
      callUuid: callId,
      from: DEMO_FROM,
      to: DEMO_TO,
    });
  } else {
    callId = crypto.randomUUID();
    webhook = await vonageWebhook({
      answerUrl: voiceUrl,
      signatureSecret: key,
      uuid: callId,
      from: DEMO_FROM,
      to: DEMO_TO,
    });
  }
  const answer = await api(webhook);
  if (answer.status !== 200) return answer;
  const sessionId = await phoneCallSessionId(carrier, callId);
  return Response.json(
    {
      carrier,
      callId,
      accountSid,
      from: DEMO_FROM,
      to: DEMO_TO,
      answer: await answer.text(),
      sessionId,
      demoGrant: await grantFor(sessionId, secret),
    },
    { status: 201 },
  );
}

/** HMAC-SHA256 of the session id under the Worker's key, base64url: the demo's grant. */
async function grantFor(sessionId: string, secret: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`demo:${sessionId}`)),
  );
  return bytesToBase64Url(mac);
}

/** A demo route's JSON body (empty: `{}`), or null when it is not what `schema` takes. */
async function demoBody<T>(request: Request, schema: z.ZodType<T>): Promise<T | null> {
  try {
    const text = await request.text();
    return schema.parse(text.trim() === "" ? {} : JSON.parse(text));
  } catch {
    return null;
  }
}
