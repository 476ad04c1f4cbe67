// The carrier stand-in against a fake liveline: what it sends is Twilio's wire, what it takes
// is read as strictly as Twilio reads it, and its playback buffer plays, marks and clears as
// Twilio documents (https://www.twilio.com/docs/voice/media-streams/websocket-messages).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bytesToBase64 } from "../../../src/providers/base64.js";
import { CallSetupError, TwilioCallStandIn } from "../../../src/simulator/twilio/index.js";
import { TwilioStreamEvent } from "../../../src/telephony/twilio/stream-messages.js";
import { AUTH_TOKEN, BASE_URL, type FakeLine, fakeLine, STREAM_URL } from "./fake-line.js";

const FROM = "+14155550100";
const TO = "+14155550199";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

async function placed(line: FakeLine = fakeLine()) {
  const call = new TwilioCallStandIn({ transport: line.transport, now: () => Date.now() });
  const info = await call.placeCall({
    baseUrl: BASE_URL,
    authToken: AUTH_TOKEN,
    from: FROM,
    to: TO,
  });
  await vi.advanceTimersByTimeAsync(0);
  const liveline = line.liveline();
  /** liveline sends a frame to the carrier. */
  const send = async (message: unknown) => {
    liveline.send(typeof message === "string" ? message : JSON.stringify(message));
    await vi.advanceTimersByTimeAsync(0);
  };
  const media = (bytes: number, fill = 0x55) =>
    send({
      event: "media",
      streamSid: info.streamSid,
      media: { payload: bytesToBase64(new Uint8Array(bytes).fill(fill)) },
    });
  const mark = (name: string) => send({ event: "mark", streamSid: info.streamSid, mark: { name } });
  /** What the carrier sent to liveline, each parsed with the from-Twilio schema. */
  const fromCarrier = () =>
    line
      .carrier()
      .messages()
      .map((m) => TwilioStreamEvent.parse(m));
  return { call, info, line, liveline, send, media, mark, fromCarrier };
}

describe("placing a call", () => {
  it("posts a signed, form-encoded voice webhook with the call's parameters", async () => {
    const { line, info } = await placed();
    expect(line.webhooks).toHaveLength(1);
    const [hook] = line.webhooks;
    expect(hook!.request.method).toBe("POST");
    expect(hook!.request.url).toBe(`${BASE_URL}/v1/telephony/twilio/voice`);
    expect(hook!.request.headers.get("Content-Type")).toBe("application/x-www-form-urlencoded");
    expect(hook!.signed).toBe(true);
    expect(Object.fromEntries(hook!.form)).toMatchObject({
      AccountSid: info.accountSid,
      CallSid: info.callSid,
      CallStatus: "ringing",
      Direction: "inbound",
      From: FROM,
      To: TO,
      ApiVersion: "2010-04-01",
    });
    expect(info.callSid).toMatch(/^CA[0-9a-f]{32}$/);
  });

  it("opens the TwiML's stream and sends connected, then start with its parameters", async () => {
    const { line, info, fromCarrier } = await placed();
    expect(line.openedUrls).toEqual([STREAM_URL]);
    const [connected, start, ...rest] = fromCarrier();
    expect(rest).toEqual([]);
    expect(connected).toEqual({ event: "connected", protocol: "Call", version: "1.0.0" });
    expect(start).toEqual({
      event: "start",
      sequenceNumber: "1",
      streamSid: info.streamSid,
      start: {
        streamSid: info.streamSid,
        accountSid: info.accountSid,
        callSid: info.callSid,
        tracks: ["inbound"],
        customParameters: { token: "t0k" },
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
    });
  });

  const twiml = (body: string) => () =>
    new Response(`<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`);
  it.each([
    ["a refusal", twiml("<Say>Sorry, no.</Say><Hangup/>"), /Say\("Sorry, no\."\), Hangup\(\)/],
    ["<Start><Stream>", twiml(`<Start><Stream url="${STREAM_URL}"/></Start>`), /one <Connect>/],
    ["ws://", twiml('<Connect><Stream url="ws://gw.example/s"/></Connect>'), /not wss/],
    ["a query string", twiml(`<Connect><Stream url="${STREAM_URL}?t=1"/></Connect>`), /query/],
    [
      "a stray attribute",
      twiml(`<Connect><Stream url="${STREAM_URL}" bogus="1"/></Connect>`),
      /no attribute bogus/,
    ],
    ["not XML", () => new Response("ok"), /well-formed/],
    ["a 403", () => new Response("no", { status: 403 }), /answered 403/],
  ])("refuses %s with a CallSetupError saying what came back", async (_, answer, why) => {
    const line = fakeLine(answer);
    const call = new TwilioCallStandIn({ transport: line.transport });
    const placing = call.placeCall({
      baseUrl: BASE_URL,
      authToken: AUTH_TOKEN,
      from: FROM,
      to: TO,
    });
    await expect(placing).rejects.toBeInstanceOf(CallSetupError);
    await expect(placing).rejects.toThrow(why);
    expect(line.openedUrls).toEqual([]);
  });

  it("posts to and signs the number's own voice URL when given one (a query string too)", async () => {
    const line = fakeLine();
    const call = new TwilioCallStandIn({ transport: line.transport });
    const voiceUrl = `${BASE_URL}/v1/telephony/twilio/voice?agent=greeter&x=%20y`;
    await call.placeCall({
      baseUrl: BASE_URL,
      voiceUrl,
      authToken: AUTH_TOKEN,
      from: FROM,
      to: TO,
    });
    expect(line.webhooks.map((w) => [w.request.url, w.signed])).toEqual([[voiceUrl, true]]);
  });

  it("is refused by a webhook that checks the signature, when the token is wrong", async () => {
    const line = fakeLine();
    const call = new TwilioCallStandIn({ transport: line.transport });
    await expect(
      call.placeCall({ baseUrl: BASE_URL, authToken: "wrong", from: FROM, to: TO }),
    ).rejects.toThrow(/answered 403/);
  });
});

describe("the caller's audio", () => {
  it("goes as 160-byte media chunks counting chunk, timestamp and sequenceNumber", async () => {
    const { call, fromCarrier, info } = await placed();
    await call.sendAudio(new Uint8Array(400).fill(0x11), { realTime: false });
    await vi.advanceTimersByTimeAsync(0);
    const media = fromCarrier().filter((m) => m.event === "media");
    expect(media.map((m) => [m.sequenceNumber, m.media.chunk, m.media.timestamp])).toEqual([
      ["2", "1", "0"],
      ["3", "2", "20"],
      ["4", "3", "40"],
    ]);
    for (const m of media) {
      expect(m.streamSid).toBe(info.streamSid);
      expect(m.media.track).toBe("inbound");
      expect(atob(m.media.payload)).toHaveLength(160);
    }
    // The last chunk is padded with μ-law silence (0xFF).
    const last = atob(media[2]!.media.payload);
    expect(last.charCodeAt(79)).toBe(0x11);
    expect(last.charCodeAt(80)).toBe(0xff);
  });

  it("is paced at 20 ms a chunk in real time, each chunk once its 20 ms are spoken", async () => {
    const { call, fromCarrier } = await placed();
    const sending = call.sendAudio(new Uint8Array(160 * 5), { realTime: true });
    const count = () => fromCarrier().filter((m) => m.event === "media").length;
    await vi.advanceTimersByTimeAsync(19);
    expect(count()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(count()).toBe(1);
    await vi.advanceTimersByTimeAsync(60);
    expect(count()).toBe(4);
    await vi.advanceTimersByTimeAsync(20);
    await sending;
    expect(count()).toBe(5);
  });

  it("sends DTMF, then stop on hang-up, and closes", async () => {
    const { call, fromCarrier, info, liveline } = await placed();
    call.sendDtmf("#");
    call.hangUp();
    await vi.advanceTimersByTimeAsync(0);
    const [, , dtmf, stop] = fromCarrier();
    expect(dtmf).toEqual({
      event: "dtmf",
      sequenceNumber: "2",
      streamSid: info.streamSid,
      dtmf: { track: "inbound_track", digit: "#" },
    });
    expect(stop).toEqual({
      event: "stop",
      sequenceNumber: "3",
      streamSid: info.streamSid,
      stop: { accountSid: info.accountSid, callSid: info.callSid },
    });
    expect(liveline.readyState).toBe(3);
    expect(call.closed).toEqual({ code: 1000, reason: "call ended", by: "caller", unheardMs: 0 });
    expect(() => call.sendDtmf("x")).toThrow(/DTMF/);
  });
});

describe("what liveline sends, read as Twilio reads it", () => {
  it("records every violation and plays none of it", async () => {
    const { call, send, info } = await placed();
    const other = `MZ${"0".repeat(32)}`;
    await send({ event: "media", streamSid: other, media: { payload: "AAAA" } });
    await send({ event: "media", streamSid: info.streamSid, media: { payload: "AA=A" } });
    await send({ event: "media", streamSid: info.streamSid, media: { payload: "" } });
    await send({
      event: "media",
      streamSid: info.streamSid,
      media: { payload: "AAAA", track: "x" },
    });
    await send({ event: "speak", streamSid: info.streamSid });
    await send({ event: "clear", streamSid: info.streamSid, now: true });
    await send("not json");
    expect(call.violations).toHaveLength(7);
    expect(call.violations[0]).toMatch(/streamSid/);
    expect(call.violations[1]).toMatch(/base64/);
    expect(call.violations[6]).toMatch(/not JSON/);
    expect(call.received).toEqual([]);
    expect(call.heardMs()).toBe(0);
    expect(call.clears).toBe(0);
  });

  it("refuses binary frames and WAV headers", async () => {
    const { call, liveline, send, info } = await placed();
    liveline.send(new Uint8Array([1, 2, 3]).buffer);
    await vi.advanceTimersByTimeAsync(0);
    const riff = new Uint8Array(160);
    riff.set([0x52, 0x49, 0x46, 0x46]);
    await send({
      event: "media",
      streamSid: info.streamSid,
      media: { payload: bytesToBase64(riff) },
    });
    expect(call.violations).toEqual([
      expect.stringMatching(/binary frame/),
      expect.stringMatching(/WAV header/),
    ]);
  });
});

describe("the playback buffer", () => {
  it("plays media at 8 bytes a ms and echoes a mark when the audio before it has played", async () => {
    const { call, media, mark, fromCarrier, info } = await placed();
    await media(1600); // 200 ms
    await mark("reply-1");
    await vi.advanceTimersByTimeAsync(100);
    expect(call.heardMs()).toBe(100);
    expect(call.marksEchoed).toEqual([]);
    await vi.advanceTimersByTimeAsync(100);
    expect(call.heardMs()).toBe(200);
    expect(call.marksEchoed).toEqual(["reply-1"]);
    const echo = fromCarrier().find((m) => m.event === "mark");
    expect(echo).toEqual({
      event: "mark",
      sequenceNumber: "2",
      streamSid: info.streamSid,
      mark: { name: "reply-1" },
    });
    expect(call.heardAudio().every((b) => b === 0x55)).toBe(true);
  });

  it("echoes a mark at once when nothing is queued", async () => {
    const { call, mark } = await placed();
    await mark("empty");
    expect(call.marksEchoed).toEqual(["empty"]);
  });

  it("keeps order: audio, mark, audio, mark", async () => {
    const { call, media, mark } = await placed();
    await media(800, 0x01);
    await mark("a");
    await media(800, 0x02);
    await mark("b");
    await vi.advanceTimersByTimeAsync(120);
    expect(call.marksEchoed).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(80);
    expect(call.marksEchoed).toEqual(["a", "b"]);
    expect(call.playedSince(100).every((b) => b === 0x02)).toBe(true);
    expect(call.playedSince(100)).toHaveLength(800);
  });

  it("clear drops the queue at once and echoes every pending mark at once", async () => {
    const { call, media, mark, send, info } = await placed();
    await media(1600);
    await mark("a");
    await media(1600);
    await mark("b");
    await vi.advanceTimersByTimeAsync(100);
    expect(call.queuedMs()).toBe(300);
    await send({ event: "clear", streamSid: info.streamSid });
    expect(call.clears).toBe(1);
    expect(call.marksEchoed).toEqual(["a", "b"]);
    expect(call.queuedMs()).toBe(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(call.heardMs()).toBe(100);
  });

  it("does not credit silence: audio after a gap starts when it arrives", async () => {
    const { call, media } = await placed();
    await media(160);
    await vi.advanceTimersByTimeAsync(1000);
    await media(800);
    await vi.advanceTimersByTimeAsync(50);
    expect(call.heardMs()).toBe(70);
  });

  it("waitFor resolves when the predicate holds and rejects after its timeout", async () => {
    const { call, media, mark } = await placed();
    await media(800);
    await mark("m");
    const echoed = call.waitFor((c) => c.marksEchoed.includes("m"), 1000);
    await vi.advanceTimersByTimeAsync(100);
    await expect(echoed).resolves.toBeUndefined();
    const never = call.waitFor((c) => c.clears > 0, 50);
    const refused = expect(never).rejects.toThrow(/within 50 ms/);
    await vi.advanceTimersByTimeAsync(60);
    await refused;
  });
});
