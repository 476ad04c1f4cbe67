/**
 * The telephony door (Twilio): the voice webhook's signature, the TwiML it answers, and the
 * media stream's binding by a single-use token — what a carrier, or someone posing as one,
 * can and cannot do before a call is heard. Twilio's own details only: what every carrier's
 * call must do (forged webhooks, wrong or reused tokens, malformed media, hang-ups, drops, a
 * crash mid-call) is the carrier contract, test/telephony/carrier-contract.workers.test.ts.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { phoneCallSessionId } from "../../src/telephony/carrier-contract.js";
import { twilioSignature } from "../../src/telephony/twilio/signature.js";
import { API_KEY, BASE, twilioCallParams, withKey } from "../support/gateway.js";

const AUTH_TOKEN = env.TWILIO_AUTH_TOKEN as string;
const VOICE = `${BASE}/v1/telephony/twilio/voice?simulator=timeScale%3D0`;

const callParams = twilioCallParams;

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

/** Waits until `done` holds, or 5 s. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 25)
    await new Promise((r) => setTimeout(r, 25));
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

describe("the voice webhook takes only Twilio's signature", () => {
  // Unsigned and wrongly signed webhooks: the carrier contract (test/telephony/carrier-contract.workers.test.ts).
  it("a webhook changed after it was signed is refused with a JSON 403, not TwiML", async () => {
    const params = callParams();
    const signed = await twilioSignature(AUTH_TOKEN, VOICE, params);
    const res = await postVoice({ ...params, To: "+15559999999" }, signed);
    expect(res.status).toBe(403);
    // No stream URL, no token, nothing to connect to.
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
  });

  it("a webhook body over 16 KiB is refused with 413 before anything is read of it", async () => {
    const params = { ...callParams(), Padding: "x".repeat(20_000) };
    const res = await postVoice(params, await twilioSignature(AUTH_TOKEN, VOICE, params));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(
      "payload_too_large",
    );
  });

  it("a signed call is answered with <Connect action><Stream> and a token, never the API key", async () => {
    const { twiml, token } = await answeredCall();
    // The action: where Twilio asks what next when the stream ends (a deploy, say).
    expect(twiml).toMatch(
      /^<\?xml[^>]*\?><Response><Connect action="http:\/\/liveline\.test\/v1\/telephony\/twilio\/reconnect" method="POST"><Stream url="[^"]+">/,
    );
    expect(twiml).not.toContain(API_KEY);
    expect(token.length).toBeGreaterThanOrEqual(40);
  });
});

describe("a media stream is bound by its start, once", () => {
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

  it("a retried voice webhook finds the same session, with a new token", async () => {
    const params = callParams();
    const first = await answeredCall(params);
    const again = await answeredCall(params);
    expect(again.sessionId).toBe(first.sessionId);
    expect(again.token).not.toBe(first.token);
  });

  // Ending a call whose stream never started: the carrier contract.
  it("the status callback is signed as every webhook; a call never answered is nothing to end", async () => {
    const params = { ...callParams(), CallStatus: "completed" };
    const unsigned = await exports.default.fetch(STATUS, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params).toString(),
    });
    expect(unsigned.status).toBe(403);
    // A call liveline never answered: nothing to end, nothing created.
    expect((await postStatus(params)).status).toBe(204);
    const sessionId = await phoneCallSessionId("twilio", params.CallSid);
    const history = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
      headers: withKey(API_KEY),
    });
    expect(history.status).toBe(404);
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

describe("found by the black-box attack on the phone door", { timeout: 20_000 }, () => {
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

  it("a start for another call spends no token: the call's own start binds with it after (issue 50)", async () => {
    const params = callParams();
    const call = await answeredCall(params);
    const stranger = await openStream(call.streamUrl);
    stranger.ws.send(start(call.token));
    expect((await stranger.closed).reason).toMatch(/not this session's call/);
    const own = await openStream(call.streamUrl);
    own.ws.send(start(call.token, params.CallSid));
    // Bound: the greeting comes down the line.
    await until(() => own.received.some((m) => JSON.parse(m).event === "media"));
    expect(own.received.some((m) => JSON.parse(m).event === "media")).toBe(true);
    // Spent by that start: a copy binds nothing.
    const copy = await openStream(call.streamUrl);
    copy.ws.send(start(call.token, params.CallSid));
    expect((await copy.closed).reason).toMatch(/wrong or already used|already up/);
    own.ws.close();
  });

  it("a stream message over MAX_FRAME_BYTES is refused by name; the call goes on (issue 50)", async () => {
    const params = callParams();
    const call = await answeredCall(params);
    const stream = await openStream(call.streamUrl);
    stream.ws.send(start(call.token, params.CallSid));
    await until(() => stream.received.some((m) => JSON.parse(m).event === "media"));
    // Not even base64: were it read, it would be parsed whole, then dropped unsaid.
    const huge = JSON.stringify({
      event: "media",
      sequenceNumber: "3",
      streamSid: "MZ00000000000000000000000000000001",
      media: {
        track: "inbound",
        chunk: "2",
        timestamp: "20",
        payload: "!".repeat(2 * 1024 * 1024),
      },
    });
    for (let i = 0; i < 4; i++) stream.ws.send(huge);
    const rows = async () => {
      const res = await exports.default.fetch(`${BASE}/v1/sessions/${call.sessionId}/timeline`, {
        headers: withKey(),
      });
      return ((await res.json()) as { rows: { kind: string; detail?: { code?: string } }[] }).rows;
    };
    let tooLarge = 0;
    for (let i = 0; i < 100 && tooLarge < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
      tooLarge = (await rows()).filter(
        (r) => r.kind === "BAD_FRAME" && r.detail?.code === "frame_too_large",
      ).length;
    }
    expect(tooLarge).toBe(4);
    // The call goes on: a small message is still taken, the stream is still open.
    let open = true;
    void stream.closed.then(() => {
      open = false;
    });
    stream.ws.send(
      JSON.stringify({
        event: "dtmf",
        sequenceNumber: "4",
        streamSid: "MZ00000000000000000000000000000001",
        dtmf: { track: "inbound_track", digit: "5" },
      }),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(open).toBe(true);
    stream.ws.close();
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

  it("a carrier liveline does not have is a JSON 404 on each route (src/carrier-registry.ts)", async () => {
    const params = callParams();
    for (const [path, init] of [
      ["voice", { method: "POST", body: new URLSearchParams(params).toString() }],
      ["status", { method: "POST", body: new URLSearchParams(params).toString() }],
      ["stream/00000000-0000-4000-8000-000000000000", { headers: { Upgrade: "websocket" } }],
    ] as const) {
      const res = await exports.default.fetch(`${BASE}/v1/telephony/acme/${path}`, init);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        "no carrier is named acme",
      );
    }
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
