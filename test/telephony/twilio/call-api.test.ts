// A transfer's one REST request (updateCall), against the carrier stand-in's REST API: the
// request Twilio documents (path, basic auth, a form-encoded Twiml with a <Dial>), the
// call's media stream stopped as the call leaves <Connect>, and each refusal told as a
// problem the model can hear — never a throw, never the auth token.
import { describe, expect, it } from "vitest";
import { TwilioCallApiStandIn } from "../../../src/simulator/twilio/call-api-stand-in.js";
import { TwilioCallStandIn } from "../../../src/simulator/twilio/index.js";
import { updateCall } from "../../../src/telephony/twilio/call-api.js";
import { dialTwiml } from "../../../src/telephony/twilio/twiml.js";
import { AUTH_TOKEN, BASE_URL, fakeLine } from "../../simulator/twilio/fake-line.js";

const ACCOUNT = `AC${"1".repeat(32)}`;
const API = "https://api.stand-in.example";

async function liveCall() {
  const line = fakeLine();
  const call = new TwilioCallStandIn({ transport: line.transport });
  const placed = await call.placeCall({
    baseUrl: BASE_URL,
    authToken: AUTH_TOKEN,
    accountSid: ACCOUNT,
    from: "+14155550100",
    to: "+14155550199",
  });
  const api = new TwilioCallApiStandIn({ accountSid: ACCOUNT, authToken: AUTH_TOKEN });
  api.register(placed.callSid, call);
  const update = (over: Partial<Parameters<typeof updateCall>[0]> = {}) =>
    updateCall(
      {
        baseUrl: API,
        accountSid: ACCOUNT,
        authToken: AUTH_TOKEN,
        callSid: placed.callSid,
        twiml: dialTwiml("+14155550123"),
        ...over,
      },
      (url, init) => api.handle(new Request(url, init)),
    );
  return { call, placed, api, update, line };
}

describe("a transfer through the carrier's REST API", () => {
  it("updates the call with a <Dial>: the stand-in takes it and stops the call's stream", async () => {
    const { call, placed, api, update } = await liveCall();
    expect(await update()).toEqual({ ok: true });
    expect(api.transfers).toEqual([{ callSid: placed.callSid, number: "+14155550123" }]);
    expect(call.closed).not.toBeNull();
    // A second update finds the call no longer in progress.
    const again = await update();
    expect(again.ok).toBe(false);
    if (!again.ok) expect(again.problem).toMatch(/400.*not in-progress.*21220/);
  });

  it("a wrong auth token is refused (401), and the problem never carries the token", async () => {
    const { call, update } = await liveCall();
    const outcome = await update({ authToken: "not-the-token-at-all" });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.problem).toMatch(/401.*Authenticate.*20003/);
      expect(outcome.problem).not.toContain("not-the-token-at-all");
      expect(outcome.problem).not.toContain(AUTH_TOKEN);
    }
    expect(call.closed).toBeNull();
  });

  it("an unknown call is a 404, and the carrier's own refusal comes through as said", async () => {
    const { api, update } = await liveCall();
    const unknown = await update({ callSid: `CA${"f".repeat(32)}` });
    expect(unknown.ok || unknown.problem).toMatch(/404.*20404/);
    api.refuseNext = { status: 503, code: 20500, message: "Service unavailable" };
    const refused = await update();
    expect(refused.ok || refused.problem).toMatch(/503: Service unavailable \(20500\)/);
  });

  it("an unreachable API and a malformed SID are problems, not throws", async () => {
    const { placed } = await liveCall();
    const down = await updateCall(
      {
        baseUrl: "http://127.0.0.1:9",
        accountSid: ACCOUNT,
        authToken: AUTH_TOKEN,
        callSid: placed.callSid,
        twiml: dialTwiml("+14155550123"),
      },
      () => Promise.reject(new TypeError("fetch failed")),
    );
    expect(down).toEqual({ ok: false, problem: "the carrier could not be reached" });
    const bad = await updateCall(
      {
        baseUrl: API,
        accountSid: "AC../../x",
        authToken: AUTH_TOKEN,
        callSid: placed.callSid,
        twiml: "",
      },
      () => Promise.reject(new Error("never asked")),
    );
    expect(bad).toEqual({ ok: false, problem: "not an account SID" });
  });

  it("the stand-in is strict: a body without Twiml, or TwiML that is no <Dial>, is refused", async () => {
    const { api, placed, call } = await liveCall();
    const path = `${API}/2010-04-01/Accounts/${ACCOUNT}/Calls/${placed.callSid}.json`;
    const auth = { Authorization: `Basic ${btoa(`${ACCOUNT}:${AUTH_TOKEN}`)}` };
    const form = { ...auth, "Content-Type": "application/x-www-form-urlencoded" };
    const noTwiml = await api.handle(
      new Request(path, { method: "POST", headers: form, body: "Url=x" }),
    );
    expect(noTwiml.status).toBe(400);
    const hangup = await api.handle(
      new Request(path, {
        method: "POST",
        headers: form,
        body: new URLSearchParams({ Twiml: "<Response><Hangup/></Response>" }).toString(),
      }),
    );
    expect(hangup.status).toBe(400);
    const get = await api.handle(new Request(path, { headers: auth }));
    expect(get.status).toBe(405);
    expect(call.closed).toBeNull();
  });
});

describe("what a refusal tells the model", () => {
  const refusedWith = (body: BodyInit) =>
    updateCall(
      {
        baseUrl: API,
        accountSid: ACCOUNT,
        authToken: AUTH_TOKEN,
        callSid: `CA${"1".repeat(32)}`,
        twiml: dialTwiml("+14155550123"),
      },
      async () =>
        new Response(body, { status: 400, headers: { "Content-Type": "application/json" } }),
    );

  it("a long message is cut short, and echoed credentials are never repeated", async () => {
    const basic = btoa(`${ACCOUNT}:${AUTH_TOKEN}`);
    const echo = await refusedWith(
      JSON.stringify({ code: 1, message: `you sent Basic ${basic} with ${AUTH_TOKEN}` }),
    );
    expect(echo.ok || echo.problem).not.toContain(AUTH_TOKEN);
    expect(echo.ok || echo.problem).not.toContain(basic);
    expect(echo.ok || echo.problem).toContain("[redacted]");
    const long = await refusedWith(JSON.stringify({ message: "x".repeat(100_000) }));
    expect(long.ok || long.problem.length).toBeLessThan(300);
  });

  it("an error body past 16 KiB is not read: no reason given", async () => {
    const huge = await refusedWith(JSON.stringify({ message: "y".repeat(20_000), code: 2 }));
    expect(huge).toEqual({
      ok: false,
      problem: "the carrier refused it with 400: no reason given",
    });
  });
});

describe("dialTwiml", () => {
  it("dials an E.164 number and refuses anything else", () => {
    expect(dialTwiml("+14155550123")).toContain("<Response><Dial>+14155550123</Dial></Response>");
    expect(() => dialTwiml("14155550123")).toThrow(/E\.164/);
    expect(() => dialTwiml("+1415<Hangup/>")).toThrow(/E\.164/);
  });
});
