/**
 * The telephony door (Twilio): the voice webhook's signature, the TwiML it answers, and the
 * media stream's binding by a single-use token — what a carrier, or someone posing as one,
 * can and cannot do before a call is heard.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { twilioSignature } from "../../src/telephony/twilio/signature.js";
import { API_KEY, BASE, withKey } from "./helpers.js";

const AUTH_TOKEN = env.TWILIO_AUTH_TOKEN as string;
const VOICE = `${BASE}/v1/telephony/twilio/voice?simulator=timeScale%3D0`;

/** A fresh CallSid: each call is its own session (a call's session is named by its sid). */
const newCallSid = () =>
  `CA${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;

const callParams = (callSid = newCallSid()) => ({
  AccountSid: "AC00000000000000000000000000000001",
  CallSid: callSid,
  From: "+15550001111",
  To: "+15550002222",
  CallStatus: "ringing",
  Direction: "inbound",
  ApiVersion: "2010-04-01",
});

async function postVoice(params: Record<string, string>, signature: string | null) {
  return exports.default.fetch(VOICE, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      ...(signature === null ? {} : { "X-Twilio-Signature": signature }),
    },
    body: new URLSearchParams(params).toString(),
  });
}

/** A call answered: the session it made, the stream URL and the token from the TwiML. */
async function answeredCall(params = callParams()) {
  const res = await postVoice(params, await twilioSignature(AUTH_TOKEN, VOICE, params));
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toMatch(/^text\/xml/);
  const twiml = await res.text();
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  const token = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml)?.[1];
  expect(url, twiml).toMatch(
    /^ws:\/\/liveline\.test\/v1\/telephony\/twilio\/stream\/[0-9a-f-]{36}$/,
  );
  expect(token, twiml).toBeDefined();
  const sessionId = url!.split("/").at(-1)!;
  return { twiml, streamUrl: url!, token: token!, sessionId, callSid: params.CallSid };
}

async function openStream(streamUrl: string) {
  const res = await exports.default.fetch(streamUrl.replace(/^ws/, "http"), {
    headers: { Upgrade: "websocket" },
  });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })),
  );
  const received: string[] = [];
  ws.addEventListener("message", (e) => received.push(String(e.data)));
  return { ws, closed, received };
}

const start = (token: string, callSid = "CA00000000000000000000000000000001") =>
  JSON.stringify({
    event: "start",
    sequenceNumber: "1",
    streamSid: "MZ00000000000000000000000000000001",
    start: {
      streamSid: "MZ00000000000000000000000000000001",
      accountSid: "AC00000000000000000000000000000001",
      callSid,
      tracks: ["inbound"],
      customParameters: { token },
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
    },
  });

async function historyOf(sessionId: string): Promise<{ kind: string }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(API_KEY),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: { kind: string }[] }).events;
}

describe("the voice webhook takes only Twilio's signature", () => {
  it("an unsigned or wrongly signed webhook is refused with 403 and creates nothing", async () => {
    const params = callParams();
    const unsigned = await postVoice(params, null);
    expect(unsigned.status).toBe(403);
    // A JSON error, not TwiML: no stream URL, no token, nothing to connect to.
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const wrongKey = await twilioSignature("not-the-auth-token", VOICE, params);
    expect((await postVoice(params, wrongKey)).status).toBe(403);
    // Signed, then one parameter changed on the way.
    const signed = await twilioSignature(AUTH_TOKEN, VOICE, params);
    expect((await postVoice({ ...params, To: "+15559999999" }, signed)).status).toBe(403);
  });

  it("a webhook body over 16 KiB is refused with 413 before anything is read of it", async () => {
    const params = { ...callParams(), Padding: "x".repeat(20_000) };
    const res = await postVoice(params, await twilioSignature(AUTH_TOKEN, VOICE, params));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      "payload_too_large",
    );
  });

  it("a signed call is answered with <Connect><Stream> and a token, never the API key", async () => {
    const { twiml, token } = await answeredCall();
    expect(twiml).toMatch(/^<\?xml[^>]*\?><Response><Connect><Stream url="[^"]+">/);
    expect(twiml).not.toContain(API_KEY);
    expect(token.length).toBeGreaterThanOrEqual(40);
  });
});

describe("a media stream is bound by its start, once", () => {
  it("a wrong token closes the stream with a reason, and nothing is recorded", async () => {
    const { streamUrl, sessionId } = await answeredCall();
    const stream = await openStream(streamUrl);
    stream.ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
    stream.ws.send(start("not-the-token-not-the-token-not-the-token-x"));
    const closed = await stream.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/token is wrong or already used/);
    expect(stream.received).toEqual([]);
    expect(await historyOf(sessionId)).toEqual([]);
  });

  it("a token is taken once: a second stream presenting it is closed", async () => {
    const { streamUrl, token, callSid } = await answeredCall();
    const first = await openStream(streamUrl);
    first.ws.send(start(token, callSid));
    const second = await openStream(streamUrl);
    second.ws.send(start(token, callSid));
    expect((await second.closed).reason).toMatch(/token is wrong or already used/);
    first.ws.close(1000, "done");
  });

  it("audio before a start is nobody's call: the stream is closed", async () => {
    const { streamUrl } = await answeredCall();
    const stream = await openStream(streamUrl);
    stream.ws.send(
      JSON.stringify({
        event: "media",
        sequenceNumber: "2",
        streamSid: "MZ00000000000000000000000000000001",
        media: { track: "inbound", chunk: "1", timestamp: "0", payload: "//////8=" },
      }),
    );
    expect((await stream.closed).reason).toMatch(/not started/);
  });

  it("a start for an ended session is refused", async () => {
    const { streamUrl, token, sessionId } = await answeredCall();
    const ended = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      method: "DELETE",
      headers: withKey(API_KEY),
    });
    expect(ended.status).toBe(200);
    const res = await exports.default.fetch(streamUrl.replace(/^ws/, "http"), {
      headers: { Upgrade: "websocket" },
    });
    // The upgrade itself is refused (410); a token cannot revive the call.
    expect(res.status).toBe(410);
    void token;
  });
});

describe("a bound call's stream", () => {
  const media = (payload: string, chunk: number) =>
    JSON.stringify({
      event: "media",
      sequenceNumber: String(chunk + 1),
      streamSid: "MZ00000000000000000000000000000001",
      media: { track: "inbound", chunk: String(chunk), timestamp: String(chunk * 20), payload },
    });
  const stop = JSON.stringify({
    event: "stop",
    sequenceNumber: "99",
    streamSid: "MZ00000000000000000000000000000001",
    stop: {
      accountSid: "AC00000000000000000000000000000001",
      callSid: "CA00000000000000000000000000000001",
    },
  });

  async function lifecycle(sessionId: string): Promise<number> {
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(API_KEY),
    });
    return res.status;
  }

  async function timelineKinds(sessionId: string): Promise<string[]> {
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
      headers: withKey(API_KEY),
    });
    return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
  }

  it("malformed media is counted and skipped, the call goes on, and stop ends the session", async () => {
    const { streamUrl, token, sessionId, callSid } = await answeredCall();
    const stream = await openStream(streamUrl);
    stream.ws.send(start(token, callSid));
    stream.ws.send(media("not base64 at all!", 1));
    stream.ws.send(JSON.stringify({ event: "hello" }));
    // The call goes on: a good chunk after the bad ones is taken, the session is open.
    stream.ws.send(media("//////////8=", 2));
    await new Promise((r) => setTimeout(r, 200));
    const kinds = await timelineKinds(sessionId);
    expect(kinds.filter((k) => k === "BAD_FRAME")).toHaveLength(2);
    expect(await lifecycle(sessionId)).toBe(200);
    stream.ws.send(stop);
    await stream.closed;
    expect(await lifecycle(sessionId)).toBe(410);
  });

  it("a stream dropped without a stop ends the call's session too, its history kept", async () => {
    const { streamUrl, token, sessionId, callSid } = await answeredCall();
    const stream = await openStream(streamUrl);
    stream.ws.send(start(token, callSid));
    await new Promise((r) => setTimeout(r, 100));
    stream.ws.close(1001, "carrier went away");
    await new Promise((r) => setTimeout(r, 200));
    expect(await lifecycle(sessionId)).toBe(410);
    const events = await historyOf(sessionId);
    expect(events.map((e) => e.kind)).toContain("user");
  });
});

describe("a call is named by its CallSid", () => {
  const STATUS = `${BASE}/v1/telephony/twilio/status`;
  async function postStatus(params: Record<string, string>) {
    return exports.default.fetch(STATUS, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": await twilioSignature(AUTH_TOKEN, STATUS, params),
      },
      body: new URLSearchParams(params).toString(),
    });
  }
  const tokenStatus = async (sessionId: string) =>
    (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
        method: "POST",
        headers: withKey(API_KEY),
      })
    ).status;

  it("a retried voice webhook finds the same session, with a new token", async () => {
    const params = callParams();
    const first = await answeredCall(params);
    const again = await answeredCall(params);
    expect(again.sessionId).toBe(first.sessionId);
    expect(again.token).not.toBe(first.token);
  });

  it("the status callback ends a call's session whose stream never started", async () => {
    const params = callParams();
    const { sessionId } = await answeredCall(params);
    expect(await tokenStatus(sessionId)).toBe(200);
    const res = await postStatus({ ...params, CallStatus: "no-answer" });
    expect(res.status).toBe(204);
    expect(await tokenStatus(sessionId)).toBe(410);
    // Unsigned: refused, as every webhook.
    const unsigned = await exports.default.fetch(STATUS, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...params, CallStatus: "completed" }).toString(),
    });
    expect(unsigned.status).toBe(403);
    // A call liveline never answered: nothing to end, nothing created.
    expect((await postStatus({ ...callParams(), CallStatus: "completed" })).status).toBe(204);
  });

  it("a retried webhook after the call's session ended hangs up", async () => {
    const params = callParams();
    await answeredCall(params);
    await postStatus({ ...params, CallStatus: "completed" });
    const res = await postVoice(params, await twilioSignature(AUTH_TOKEN, VOICE, params));
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<Response><Hangup\/><\/Response>/);
  });
});

describe("a call across a crash of its object", () => {
  it("the record stays valid, the stream dies with the object, and the carrier's next webhook is answered", async () => {
    const params = callParams();
    const { streamUrl, token, sessionId } = await answeredCall(params);
    const stream = await openStream(streamUrl);
    stream.ws.send(start(token, params.CallSid));
    // The greeting turn is under way when the object dies.
    await new Promise((r) => setTimeout(r, 50));
    const crashed = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
      headers: withKey(API_KEY),
    });
    expect(crashed.status).toBe(200);
    const closed = await stream.closed;
    // Bound, then cut by the crash (not refused by policy, not ended normally).
    expect([1000, 1008]).not.toContain(closed.code);
    // The restarted object answers: the record is whole, every turn in it ended once.
    const events = (await historyOf(sessionId)) as { kind: string; turnId?: string }[];
    const ends = new Map<string, number>();
    for (const e of events)
      if (e.kind === "turn_complete" || e.kind === "interrupted")
        ends.set(e.turnId!, (ends.get(e.turnId!) ?? 0) + 1);
    for (const e of events.filter((x) => x.kind === "user")) expect(ends.get(e.turnId!)).toBe(1);
    // Twilio says the call is over: the restarted object ends its session.
    const STATUS = `${BASE}/v1/telephony/twilio/status`;
    const over = { ...params, CallStatus: "completed" };
    const res = await exports.default.fetch(STATUS, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": await twilioSignature(AUTH_TOKEN, STATUS, over),
      },
      body: new URLSearchParams(over).toString(),
    });
    expect(res.status).toBe(204);
    const token410 = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(API_KEY),
    });
    expect(token410.status).toBe(410);
  });
});

describe("found by the black-box attack on the phone door", () => {
  it("a signed webhook replayed while the call's stream is up gets <Hangup/>, no token", async () => {
    const params = callParams();
    const { streamUrl, token } = await answeredCall(params);
    const stream = await openStream(streamUrl);
    stream.ws.send(start(token, params.CallSid));
    await new Promise((r) => setTimeout(r, 100));
    const replay = await postVoice(params, await twilioSignature(AUTH_TOKEN, VOICE, params));
    expect(await replay.text()).toMatch(/<Response><Hangup\/><\/Response>/);
    stream.ws.close(1000, "done");
  });

  it("a newer token cancels the older one, and a start for another call is refused", async () => {
    const params = callParams();
    const first = await answeredCall(params);
    const second = await answeredCall(params);
    const old = await openStream(first.streamUrl);
    old.ws.send(start(first.token, params.CallSid));
    expect((await old.closed).reason).toMatch(/wrong or already used/);
    const other = await openStream(second.streamUrl);
    // The right token, but a start naming another call.
    other.ws.send(start(second.token));
    expect((await other.closed).reason).toMatch(/not this session's call/);
  });

  it("marks, keys or a malformed start before a start close the stream", async () => {
    for (const message of [
      JSON.stringify({
        event: "mark",
        sequenceNumber: "2",
        streamSid: "MZ00000000000000000000000000000001",
        mark: { name: "x" },
      }),
      JSON.stringify({ event: "start", start: { customParameters: { token: 5 } } }),
    ]) {
      const { streamUrl } = await answeredCall();
      const stream = await openStream(streamUrl);
      stream.ws.send(message);
      expect((await stream.closed).code).toBe(1008);
    }
  });

  it("streams that never start hold no client's slot, and only a few may wait", async () => {
    const { streamUrl, sessionId } = await answeredCall();
    const waiting = [await openStream(streamUrl), await openStream(streamUrl)];
    const third = await exports.default.fetch(streamUrl.replace(/^ws/, "http"), {
      headers: { Upgrade: "websocket" },
    });
    expect(third.status).toBe(429);
    // An app's client still gets in with its token.
    const tokenRes = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(API_KEY),
    });
    expect(tokenRes.status).toBe(200);
    for (const s of waiting) s.ws.close(1000, "done");
  });

  it("the stream route is for calls only: an app's session has none", async () => {
    const created = await exports.default.fetch(`${BASE}/v1/sessions`, {
      method: "POST",
      headers: { ...withKey(API_KEY), "Content-Type": "application/json" },
      body: "{}",
    });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const res = await exports.default.fetch(`${BASE}/v1/telephony/twilio/stream/${sessionId}`, {
      headers: { Upgrade: "websocket" },
    });
    expect(res.status).toBe(404);
  });
});
