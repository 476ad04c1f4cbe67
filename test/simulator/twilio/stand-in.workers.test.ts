/**
 * The carrier stand-in runs in workerd too: through fetcherTransport against a Worker-like
 * fetch handler (a webhook that checks X-Twilio-Signature and answers TwiML, a stream that
 * upgrades with a WebSocketPair and echoes a reply with a mark). liveline's own telephony
 * routes are exercised by the end-to-end call tests, not here.
 */
import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../../src/providers/base64.js";
import { fetcherTransport, TwilioCallStandIn } from "../../../src/simulator/twilio/index.js";
import { isValidTwilioSignature } from "../../../src/telephony/twilio/signature.js";
import { TwilioStreamEvent } from "../../../src/telephony/twilio/stream-messages.js";
import { connectStreamTwiml } from "../../../src/telephony/twilio/twiml.js";

const AUTH_TOKEN = "stand-in-token";

/** A tiny gateway: answers the call, then says 100 ms of audio and a mark per caller chunk. */
const gateway = {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/v1/telephony/twilio/voice") {
      const form = new URLSearchParams();
      for (const [name, value] of await request.formData()) form.append(name, String(value));
      const signature = request.headers.get("X-Twilio-Signature");
      if (!(await isValidTwilioSignature(AUTH_TOKEN, request.url, form, signature)))
        return new Response("forbidden", { status: 403 });
      const streamUrl = `wss://${url.host}/v1/telephony/twilio/stream/s1`;
      return new Response(connectStreamTwiml({ streamUrl, parameters: { token: "t" } }));
    }
    const [client, server] = Object.values(new WebSocketPair());
    server!.accept();
    let streamSid = "";
    server!.addEventListener("message", (event) => {
      const message = TwilioStreamEvent.parse(JSON.parse(String(event.data)));
      if (message.event === "start") streamSid = message.streamSid;
      if (message.event !== "media") return;
      const payload = bytesToBase64(new Uint8Array(800).fill(0x2a));
      server!.send(JSON.stringify({ event: "media", streamSid, media: { payload } }));
      server!.send(
        JSON.stringify({ event: "mark", streamSid, mark: { name: message.media.chunk } }),
      );
    });
    return new Response(null, { status: 101, webSocket: client });
  },
};

describe("the carrier stand-in in workerd", () => {
  it("places a call, speaks, hears the reply at real time and gets its mark echoed", async () => {
    const call = new TwilioCallStandIn({ transport: fetcherTransport(gateway) });
    const placed = await call.placeCall({
      baseUrl: "https://gw.example",
      authToken: AUTH_TOKEN,
      from: "+14155550100",
      to: "+14155550199",
    });
    expect(placed.customParameters).toEqual({ token: "t" });
    await call.sendAudio(new Uint8Array(160), { realTime: true });
    await call.waitFor((c) => c.marksEchoed.includes("1"), 2000);
    expect(call.heardMs()).toBe(100);
    expect(call.violations).toEqual([]);
    call.hangUp();
  });
});
