/**
 * The demo page's routes (found by the black-box attack): served on a local host only, to
 * its own page only (Origin), and a fresh token only for the holder of the session's grant —
 * never for a session the app's backend made. The call view's route plays the carrier's
 * signed webhook for the page, which follows the TwiML with the carrier stand-in.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/contracts/worker-env.js";
import { serveDemo } from "../../src/http/demo.js";
import { PlivoCallStandIn } from "../../src/simulator/plivo/index.js";
import { fetcherTransport, TwilioCallStandIn } from "../../src/simulator/twilio/index.js";
import { VonageCallStandIn } from "../../src/simulator/vonage/index.js";
import { API_KEY, BASE, createSession, withKey } from "../support/gateway.js";

const LOCAL = "http://localhost:8787";
const post = (path: string, init: RequestInit = {}, base = LOCAL) =>
  exports.default.fetch(`${base}${path}`, { method: "POST", ...init });

describe("the demo's routes", () => {
  it("create a session with a grant, and give fresh tokens to the grant's holder only", async () => {
    const res = await post("/demo/sessions", { body: "" }); // an empty body is {}
    expect(res.status).toBe(201);
    const created = (await res.json()) as { sessionId: string; token: string; demoGrant: string };
    expect(created.demoGrant).toMatch(/^[\w-]{43}$/);
    const fresh = await post(`/demo/sessions/${created.sessionId}/token`, {
      headers: { "X-Demo-Grant": created.demoGrant },
    });
    expect(fresh.status).toBe(200);
    const without = await post(`/demo/sessions/${created.sessionId}/token`);
    expect(without.status).toBe(403);
    // A session the backend created: no grant can be had for it from the demo.
    const backend = await createSession();
    const other = await post(`/demo/sessions/${backend.sessionId}/token`, {
      headers: { "X-Demo-Grant": created.demoGrant },
    });
    expect(other.status).toBe(403);
  });

  it("compare the grant in constant time (the project's safeEqual), never with !==", async () => {
    const res = await post("/demo/sessions", { body: "" });
    const created = (await res.json()) as { sessionId: string; demoGrant: string };
    const compare = vi.spyOn(crypto.subtle, "timingSafeEqual");
    try {
      const wrong = `${created.demoGrant.slice(0, -1)}${created.demoGrant.endsWith("A") ? "B" : "A"}`;
      const refused = await post(`/demo/sessions/${created.sessionId}/token`, {
        headers: { "X-Demo-Grant": wrong },
      });
      expect(refused.status).toBe(403);
      expect(compare).toHaveBeenCalled();
    } finally {
      compare.mockRestore();
    }
  });

  it("answer their own page only, POST only, and nothing on a non-local host", async () => {
    const cross = await post("/demo/sessions", {
      headers: { Origin: "https://evil.example", "Content-Type": "text/plain" },
      body: "{}",
    });
    expect(cross.status).toBe(403);
    const get = await exports.default.fetch(`${LOCAL}/demo/sessions`);
    expect(get.status).toBe(405);
    const remote = await post("/demo/sessions", { body: "{}" }, BASE);
    expect(remote.status).toBe(404);
    const page = await exports.default.fetch(`${BASE}/`);
    expect(page.status).toBe(404);
  });
});

interface DemoCall {
  callSid: string;
  accountSid: string;
  from: string;
  to: string;
  twiml: string;
  sessionId: string;
  demoGrant: string;
}

describe("the demo's call route", () => {
  it("a demo call cannot be transferred: the page cannot make the Worker call Twilio's API", async () => {
    const res = await post("/demo/calls", {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ simulator: { timeScale: 0, calls: "greeting:transfer_call;*:" } }),
    });
    const placed = (await res.json()) as DemoCall;
    const call = new TwilioCallStandIn({
      transport: fetcherTransport(exports.default),
      allowInsecureStream: true,
    });
    await call.answerCall(placed.twiml, placed);
    type Event = { kind: string; name?: string; error?: string };
    let events: Event[] = [];
    for (let i = 0; i < 100 && !events.some((e) => e.kind === "tool_result"); i++) {
      await new Promise((r) => setTimeout(r, 50));
      const history = await exports.default.fetch(
        `${BASE}/v1/sessions/${placed.sessionId}/history`,
        { headers: withKey(API_KEY) },
      );
      events = ((await history.json()) as { events: Event[] }).events;
    }
    const result = events.find((e) => e.kind === "tool_result");
    expect(result?.name).toBe("transfer_call");
    expect(result?.error).toMatch(/demo page's call cannot be transferred/);
    call.hangUp();
  });

  it("plays the signed voice webhook and answers the TwiML, which the stand-in follows to a greeting", async () => {
    const res = await post("/demo/calls", {
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ simulator: { timeScale: 0, msPerWord: 50 } }),
    });
    expect(res.status).toBe(201);
    const placed = (await res.json()) as DemoCall;
    expect(placed.callSid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(placed.accountSid).toMatch(/^AC[0-9a-f]{32}$/);
    expect(placed.twiml).toMatch(
      /<Response><Connect><Stream url="ws:\/\/localhost:8787\/v1\/telephony\/twilio\/stream\/[0-9a-f-]{36}">/,
    );
    expect(placed.twiml).toContain(placed.sessionId);

    const call = new TwilioCallStandIn({
      transport: fetcherTransport(exports.default),
      allowInsecureStream: true,
    });
    await call.answerCall(placed.twiml, placed);
    await call.waitFor((c) => c.heardMs() > 100, 10_000);
    // The grant gives the page a token for the call's session (the timeline viewer reads it).
    const token = await post(`/demo/sessions/${placed.sessionId}/token`, {
      headers: { "X-Demo-Grant": placed.demoGrant },
    });
    expect(token.status).toBe(200);
    call.hangUp();
    expect(call.violations).toEqual([]);
    const history = await exports.default.fetch(`${BASE}/v1/sessions/${placed.sessionId}/history`, {
      headers: withKey(API_KEY),
    });
    const events = ((await history.json()) as { events: { kind: string; text?: string }[] }).events;
    expect(events.find((e) => e.kind === "user")?.text).toMatch(/caller is on the line/);
  });

  it("places a call through the carrier the body names, signed with that carrier's key", async () => {
    for (const carrier of ["plivo", "vonage"] as const) {
      const res = await post("/demo/calls", {
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ carrier, simulator: { timeScale: 0, msPerWord: 50 } }),
      });
      expect(res.status).toBe(201);
      const placed = (await res.json()) as { answer: string; callId: string; sessionId: string };
      expect(placed.answer).toContain(`/v1/telephony/${carrier}/stream/${placed.sessionId}`);
      const options = { transport: fetcherTransport(exports.default), allowInsecureStream: true };
      const call =
        carrier === "plivo" ? new PlivoCallStandIn(options) : new VonageCallStandIn(options);
      await call.answerCall(placed.answer, placed.callId);
      await call.waitFor((c) => c.heardMs() > 100, 10_000);
      call.hangUp();
      expect(call.violations).toEqual([]);
    }
    // Telnyx's webhooks are signed with Telnyx's private key: the Worker has one only when
    // given TELNYX_DEMO_SIGNING_KEY (local development), and says so without it.
    const telnyx = await post("/demo/calls", { body: JSON.stringify({ carrier: "telnyx" }) });
    expect(telnyx.status).toBe(503);
    expect(((await telnyx.json()) as { error: { message: string } }).error.message).toMatch(
      /TELNYX_DEMO_SIGNING_KEY/,
    );
  });

  it("answers its own page only, POST only, and refuses a body it does not know", async () => {
    const get = await exports.default.fetch(`${LOCAL}/demo/calls`);
    expect(get.status).toBe(405);
    const cross = await post("/demo/calls", {
      headers: { Origin: "https://evil.example", "Content-Type": "text/plain" },
      body: "{}",
    });
    expect(cross.status).toBe(403);
    expect(((await cross.json()) as { error: { code: string } }).error.code).toBe(
      "forbidden_origin",
    );
    const unknown = await post("/demo/calls", { body: JSON.stringify({ to: "+15550000000" }) });
    expect(unknown.status).toBe(400);
    const remote = await post("/demo/calls", { body: "{}" }, BASE);
    expect(remote.status).toBe(404);
  });

  it("without TWILIO_AUTH_TOKEN says how to start the gateway with one (503 not_configured)", async () => {
    // This project binds the token, so the route is called with an env that lacks it.
    const unsigned = { ...(env as unknown as Env), TWILIO_AUTH_TOKEN: undefined };
    const url = new URL(`${LOCAL}/demo/calls`);
    const api = () => Promise.reject(new Error("no webhook without a token"));
    const res = await serveDemo(
      new Request(url, { method: "POST", body: "{}" }),
      unsigned,
      url,
      false,
      api,
      undefined,
    );
    expect(res?.status).toBe(503);
    const body = (await res?.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("not_configured");
    expect(body.error.message).toContain("npm run dev -- --var TWILIO_AUTH_TOKEN:dev-twilio-token");
  });
});
