/**
 * Plivo's wire as liveline speaks it: the <Stream> answer (its token in hex, extraHeaders'
 * alphabet), the stream's messages read into the contract's events, the transfer's <Dial>,
 * and the Voice API calls.
 */
import { describe, expect, it } from "vitest";
import { readPlivoAnswer } from "../../../src/simulator/plivo/call-stand-in.js";
import { hangUpCall, transferCall } from "../../../src/telephony/plivo/call-api.js";
import { plivoCarrier } from "../../../src/telephony/plivo/carrier.js";
import { tokenFromHex, tokenToHex } from "../../../src/telephony/plivo/plivo-xml.js";

// A token as the call token store makes one: 32 bytes, base64url.
const TOKEN = "CzBVep_E6Q4zWH2ix-wRNluApcrvFDleg6jN8hc8YYY";

describe("Plivo's answer", () => {
  it("streams both ways in μ-law, keeps the call on the stream, the token in hex", () => {
    const { body } = plivoCarrier.connect("wss://gw.test/s/1", TOKEN, {} as never, "c-1", null);
    expect(body).toContain('bidirectional="true" keepCallAlive="true"');
    expect(body).toContain('contentType="audio/x-mulaw;rate=8000"');
    const read = readPlivoAnswer(body, false);
    expect(read.streamUrl).toBe("wss://gw.test/s/1");
    expect(read.extraHeaders).toMatch(/^token=[0-9a-f]{64}$/);
    expect(tokenFromHex(tokenToHex(TOKEN))).toBe(TOKEN);
    expect(tokenFromHex("xyz")).toBeNull();
  });

  it("dials a transfer's number as Plivo writes numbers (no +)", () => {
    expect(plivoCarrier.dial?.("+15550100")?.body).toContain(
      "<Dial><Number>15550100</Number></Dial>",
    );
    expect(() => plivoCarrier.dial?.("555")).toThrow();
  });
});

describe("Plivo's stream messages", () => {
  const start = (encoding: string, extra = `token=${tokenToHex(TOKEN)}`) =>
    JSON.stringify({
      event: "start",
      sequenceNumber: 1,
      start: {
        callId: "c-1",
        streamId: "s-1",
        accountId: "MA0000",
        tracks: ["inbound"],
        mediaFormat: { encoding, sampleRate: 8000 },
      },
      extra_headers: extra,
    });

  it("reads a start: its call, its stream, the token back from hex", () => {
    expect(plivoCarrier.readStreamEvent(start("audio/x-mulaw"))).toEqual({
      ok: true,
      event: {
        kind: "start",
        streamId: "s-1",
        callId: "c-1",
        token: TOKEN,
        line: "audio/x-mulaw;rate=8000",
      },
    });
    expect(plivoCarrier.readStreamEvent(start("audio/x-mulaw", "a=1;b=2"))).toMatchObject({
      ok: true,
      event: { token: null },
    });
    expect(plivoCarrier.readStreamEvent(start("audio/x-l16"))).toMatchObject({ ok: false });
  });

  it("reads media, checkpoints played, keys; a clear's acknowledgement needs nothing", () => {
    const media = JSON.stringify({
      event: "media",
      sequenceNumber: 2,
      streamId: "s-1",
      media: { track: "inbound", timestamp: "1", chunk: 1, payload: "AAAA" },
    });
    expect(plivoCarrier.readStreamEvent(media)).toEqual({
      ok: true,
      event: { kind: "audio", payload: "AAAA" },
    });
    expect(
      plivoCarrier.readStreamEvent(
        JSON.stringify({ event: "playedStream", streamId: "s-1", name: "1:20" }),
      ),
    ).toEqual({ ok: true, event: { kind: "mark", name: "1:20" } });
    expect(
      plivoCarrier.readStreamEvent(JSON.stringify({ event: "dtmf", dtmf: { digit: "5" } })),
    ).toEqual({ ok: true, event: { kind: "key", digit: "5" } });
    expect(
      plivoCarrier.readStreamEvent(JSON.stringify({ event: "clearedAudio", streamId: "s-1" })),
    ).toEqual({ ok: true, event: { kind: "ack" } });
    expect(plivoCarrier.readStreamEvent(JSON.stringify({ event: "stop" }))).toMatchObject({
      ok: false,
    });
  });

  it("reads its numbers as E.164 and keeps the Worker's origin for the transfer", () => {
    const params = new URLSearchParams({ CallUUID: "c-1", From: "15550001111", To: "15550002222" });
    expect(
      plivoCarrier.inboundCall(params, false, "https://gw.test/v1/telephony/plivo/voice?x=1"),
    ).toEqual({
      ok: true,
      callId: "c-1",
      call: {
        carrier: "plivo",
        callUuid: "c-1",
        from: "+15550001111",
        to: "+15550002222",
        origin: "https://gw.test",
      },
    });
  });
});

describe("Plivo's Voice API calls", () => {
  const call = {
    baseUrl: "https://api.plivo.test",
    authId: "MA00000000000000TEST",
    authToken: "test-plivo-auth-token",
    callUuid: "2a6e5e08-4d8f-4f5a-9c3a-0b7f6a9e2d11",
  };

  it("transfers with aleg_url and hangs up with DELETE, basic auth", async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const fetcher = async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response(null, { status: 204 });
    };
    expect(
      await transferCall(
        { ...call, alegUrl: "https://gw.test/v1/telephony/plivo/transfer?to=%2B15550100" },
        fetcher,
      ),
    ).toEqual({ ok: true });
    expect(await hangUpCall(call, fetcher)).toEqual({ ok: true });
    expect(seen.map((s) => [s.init.method, s.url])).toEqual([
      ["POST", `https://api.plivo.test/v1/Account/${call.authId}/Call/${call.callUuid}/`],
      ["DELETE", `https://api.plivo.test/v1/Account/${call.authId}/Call/${call.callUuid}/`],
    ]);
    expect(JSON.parse(seen[0]!.init.body as string)).toEqual({
      legs: "aleg",
      aleg_url: "https://gw.test/v1/telephony/plivo/transfer?to=%2B15550100",
      aleg_method: "POST",
    });
    expect(new Headers(seen[0]!.init.headers).get("Authorization")).toBe(
      `Basic ${btoa(`${call.authId}:${call.authToken}`)}`,
    );
  });

  it("tells Plivo's refusal without the token", async () => {
    const refused = await hangUpCall(call, async () =>
      Response.json({ api_id: "x", error: `not found ${call.authToken}` }, { status: 404 }),
    );
    expect(refused).toEqual({
      ok: false,
      problem: "the carrier refused it with 404: not found [redacted]",
    });
  });
});
