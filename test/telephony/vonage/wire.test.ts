/**
 * Vonage's wire as liveline speaks it: the NCCO answer, the WebSocket's frames read into the
 * contract's events (its first message is the start), and the Voice API's calls.
 */
import { describe, expect, it } from "vitest";
import { readNccoAnswer } from "../../../src/simulator/vonage/call-stand-in.js";
import { updateVonageCall } from "../../../src/telephony/vonage/call-api.js";
import { vonageCarrier } from "../../../src/telephony/vonage/carrier.js";
import { dialNcco } from "../../../src/telephony/vonage/ncco.js";

describe("Vonage's answer", () => {
  it("connects a websocket at 16 kHz, the token and the call in its headers", () => {
    const { body, contentType } = vonageCarrier.connect(
      "wss://gw.test/s/1",
      "tok",
      {} as never,
      "u-1",
      null,
    );
    expect(contentType).toBe("application/json");
    expect(JSON.parse(body)).toEqual([
      {
        action: "connect",
        endpoint: [
          {
            type: "websocket",
            uri: "wss://gw.test/s/1",
            "content-type": "audio/l16;rate=16000",
            headers: { token: "tok", call: "u-1" },
          },
        ],
      },
    ]);
    expect(readNccoAnswer(body, false)).toMatchObject({
      headers: { token: "tok", call: "u-1" },
      callerCodec: { kind: "l16", rate: 16000 },
    });
    expect(() => readNccoAnswer(vonageCarrier.hangUp().body, false)).toThrow(/not connect/);
  });

  it("dials a transfer's number as Vonage writes numbers", () => {
    expect(dialNcco("+15550100", "+15550002222")).toEqual([
      { action: "connect", from: "15550002222", endpoint: [{ type: "phone", number: "15550100" }] },
    ]);
  });
});

describe("Vonage's WebSocket frames", () => {
  it("reads websocket:connected as the start: the call and the token its headers carry", () => {
    const connected = JSON.stringify({
      event: "websocket:connected",
      "content-type": "audio/l16;rate=16000",
      token: "tok",
      call: "u-1",
    });
    expect(vonageCarrier.readStreamEvent(connected)).toEqual({
      ok: true,
      event: {
        kind: "start",
        streamId: "u-1",
        callId: "u-1",
        token: "tok",
        line: "audio/l16;rate=16000",
      },
    });
  });

  it("reads binary frames as the caller's audio, and refuses what is no 16-bit audio", () => {
    expect(vonageCarrier.readStreamEvent(new ArrayBuffer(640))).toMatchObject({
      ok: true,
      event: { kind: "audio" },
    });
    expect(vonageCarrier.readStreamEvent(new ArrayBuffer(641))).toMatchObject({ ok: false });
    expect(vonageCarrier.readStreamEvent(new ArrayBuffer(0))).toMatchObject({ ok: false });
  });

  it("reads keys and notifies; a clear's acknowledgement needs nothing", () => {
    expect(
      vonageCarrier.readStreamEvent('{"event":"websocket:dtmf","digit":"5","duration":260}'),
    ).toEqual({ ok: true, event: { kind: "key", digit: "5" } });
    expect(
      vonageCarrier.readStreamEvent('{"event":"websocket:notify","payload":{"name":"1:20"}}'),
    ).toEqual({ ok: true, event: { kind: "mark", name: "1:20" } });
    expect(vonageCarrier.readStreamEvent('{"event":"websocket:cleared"}')).toEqual({
      ok: true,
      event: { kind: "ack" },
    });
    expect(vonageCarrier.readStreamEvent('{"event":"websocket:hello"}')).toMatchObject({
      ok: false,
    });
  });
});

describe("Vonage's Voice API calls", () => {
  it("refuses without a usable application key, before any request", async () => {
    let requests = 0;
    const outcome = await updateVonageCall(
      {
        baseUrl: "https://api.vonage.test",
        applicationId: "a",
        privateKey: "not a key",
        uuid: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
        update: { action: "hangup" },
      },
      async () => {
        requests++;
        return new Response(null, { status: 204 });
      },
    );
    expect(outcome.ok).toBe(false);
    expect(requests).toBe(0);
  });
});
