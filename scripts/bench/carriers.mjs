/**
 * npm run bench's rows for the carriers beside Twilio: each carrier's audio path per 20 ms
 * chunk — liveline's call (the carrier's signed webhook, its answer, its stream started with
 * the answer's token) against the bench worker's bare relay of the same codec
 * (/bench/phone-relay?carrier=…, scripts/bench/worker.ts) — `calls` calls at once streaming a
 * chunk every 20 ms for `seconds`, workerd's CPU per call-second and per chunk.
 *
 * Each carrier's side is lean, as the bench's Twilio client is: it speaks the carrier's own
 * messages (Telnyx's `media`, Plivo's, Vonage's binary frames) and gives every mark back at
 * once, with none of the stand-ins' checking or playback clock. Telnyx runs A-law (the bench
 * server's TELNYX_CODEC=PCMA), Plivo μ-law, Vonage 16 kHz linear PCM.
 */
import { progress, sleep, treeCpuMs } from "../lib/harness.mjs";

/** What each carrier's line carries in the bench, for the table. */
export const LINE_OF = {
  telnyx: "A-law 8 kHz (160 B)",
  plivo: "μ-law 8 kHz (160 B)",
  vonage: "PCM16 16 kHz (640 B)",
};

const b64 = (bytes) => btoa(String.fromCharCode(...bytes));
/** 20 ms of each line's silence. */
const SILENCE = {
  telnyx: b64(new Uint8Array(160).fill(0xd5)),
  plivo: b64(new Uint8Array(160).fill(0xff)),
  vonage: new Uint8Array(640),
};

/** The bench server's carrier secrets (vars) and what signs their webhooks. */
export async function carrierKeys() {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const keys = {
    telnyxPrivate: b64(pkcs8),
    plivoToken: "bench-plivo-auth-token",
    vonageSecret: "bench-vonage-signature-secret",
  };
  return {
    keys,
    vars: {
      TELNYX_PUBLIC_KEY: b64(raw),
      TELNYX_CODEC: "PCMA",
      PLIVO_AUTH_TOKEN: keys.plivoToken,
      VONAGE_SIGNATURE_SECRET: keys.vonageSecret,
    },
  };
}

/** One carrier's side of a call, lean: open, a 20 ms chunk, marks back, hang up. */
class LineClient {
  onMedia = null;
  mediaIn = 0;
  seq = 0;
  chunk = 0;
  constructor(carrier, url, opening) {
    this.carrier = carrier;
    this.opening = opening;
    this.ws = new WebSocket(url);
    this.ws.binaryType = "arraybuffer";
    this.ws.addEventListener("message", (e) => {
      const at = performance.now();
      if (typeof e.data !== "string") {
        this.mediaIn++;
        this.onMedia?.(at);
        return;
      }
      const m = JSON.parse(e.data);
      if (m.event === "media" || m.event === "playAudio") {
        this.mediaIn++;
        this.onMedia?.(at);
      } else if (m.event === "mark") this.send({ event: "mark", stream_id: "s", mark: m.mark });
      else if (m.event === "checkpoint")
        this.send({ event: "playedStream", streamId: m.streamId, name: m.name });
      else if (m.action === "notify") this.send({ event: "websocket:notify", payload: m.payload });
    });
  }
  async open() {
    await new Promise((ok, fail) => {
      this.ws.addEventListener("open", ok, { once: true });
      this.ws.addEventListener("error", () => fail(new Error(`${this.carrier}: cannot open`)), {
        once: true,
      });
    });
    for (const m of this.opening) this.send(m);
  }
  send(m) {
    if (this.ws.readyState === WebSocket.OPEN)
      this.ws.send(m instanceof Uint8Array ? m : JSON.stringify(m));
  }
  media() {
    this.chunk++;
    if (this.carrier === "vonage") return this.send(SILENCE.vonage);
    if (this.carrier === "plivo")
      return this.send({
        event: "media",
        sequenceNumber: ++this.seq,
        streamId: "s",
        media: { track: "inbound", timestamp: "0", chunk: this.chunk, payload: SILENCE.plivo },
      });
    this.send({
      event: "media",
      sequence_number: String(++this.seq),
      stream_id: "s",
      media: {
        track: "inbound",
        chunk: String(this.chunk),
        timestamp: String(this.chunk * 20),
        payload: SILENCE.telnyx,
      },
    });
  }
  /** One chunk in, the ms until the next audio comes back. */
  roundTrip() {
    return new Promise((ok, fail) => {
      const t0 = performance.now();
      const timer = setTimeout(() => fail(new Error(`${this.carrier}: nothing back in 5 s`)), 5000);
      this.onMedia = (at) => {
        this.onMedia = null;
        clearTimeout(timer);
        ok(at - t0);
      };
      this.media();
    });
  }
  hangUp() {
    if (this.carrier === "telnyx") this.send({ event: "stop", stream_id: "s" });
    try {
      this.ws.close(1000, "call ended");
    } catch {
      // closed
    }
  }
}

/** The opening messages a carrier sends on a stream its answer connected. */
function openingOf(carrier, callId, answer) {
  if (carrier === "telnyx")
    return [
      { event: "connected", version: "1.0.0" },
      {
        event: "start",
        sequence_number: "1",
        stream_id: "s",
        start: {
          call_control_id: callId,
          custom_parameters: answer.parameters,
          media_format: { encoding: answer.codec, sample_rate: 8000, channels: 1 },
        },
      },
    ];
  if (carrier === "plivo")
    return [
      {
        event: "start",
        sequenceNumber: 1,
        start: {
          callId,
          streamId: "s",
          tracks: ["inbound"],
          mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000 },
        },
        extra_headers: answer.extraHeaders,
      },
    ];
  return [{ event: "websocket:connected", "content-type": answer.contentType, ...answer.headers }];
}

/** A call to liveline through `carrier`: its signed webhook, its answer, its stream. */
async function livelineCall(server, carrier, keys) {
  const from = "+15550100001";
  const to = "+15550100002";
  const voiceUrl = `${server.base}/v1/telephony/${carrier}/voice`;
  let request;
  let callId;
  let read;
  if (carrier === "telnyx") {
    const { inboundCallWebhook, telnyxCallSid } = await import(
      "../../src/telephony/telnyx/inbound-call.ts"
    );
    ({ readTexmlAnswer: read } = await import("../../src/simulator/telnyx/call-stand-in.ts"));
    callId = telnyxCallSid();
    request = await inboundCallWebhook({
      voiceUrl,
      privateKey: keys.telnyxPrivate,
      accountSid: crypto.randomUUID(),
      callSid: callId,
      from,
      to,
    });
  } else if (carrier === "plivo") {
    const { inboundCallWebhook } = await import("../../src/telephony/plivo/inbound-call.ts");
    ({ readPlivoAnswer: read } = await import("../../src/simulator/plivo/call-stand-in.ts"));
    callId = crypto.randomUUID();
    request = await inboundCallWebhook({
      answerUrl: voiceUrl,
      authToken: keys.plivoToken,
      callUuid: callId,
      from,
      to,
    });
  } else {
    const { inboundCallWebhook } = await import("../../src/telephony/vonage/inbound-call.ts");
    ({ readNccoAnswer: read } = await import("../../src/simulator/vonage/call-stand-in.ts"));
    callId = crypto.randomUUID();
    request = await inboundCallWebhook({
      answerUrl: voiceUrl,
      signatureSecret: keys.vonageSecret,
      uuid: callId,
      from,
      to,
    });
  }
  const res = await fetch(request);
  const body = await res.text();
  if (!res.ok) throw new Error(`${carrier} webhook: ${res.status} ${body}`);
  const answer = read(body, true);
  const client = new LineClient(carrier, answer.streamUrl, openingOf(carrier, callId, answer));
  await client.open();
  return client;
}

/** A call to the bench's bare relay of the same carrier and codec. */
async function relayCall(server, carrier) {
  const answer =
    carrier === "telnyx"
      ? { parameters: {}, codec: "PCMA" }
      : carrier === "plivo"
        ? { extraHeaders: "" }
        : { contentType: "audio/l16;rate=16000", headers: {} };
  const client = new LineClient(
    carrier,
    `${server.ws}/bench/phone-relay?carrier=${carrier}`,
    openingOf(carrier, "relay", answer),
  );
  await client.open();
  return client;
}

/** `calls` calls through `carrier` at once, a chunk every 20 ms for `seconds`: CPU and echo. */
export async function carrierLoad(server, carrier, keys, calls, seconds, arm) {
  const phones = [];
  let failed = 0;
  for (let i = 0; i < calls; i++) {
    try {
      const phone =
        arm === "liveline"
          ? await livelineCall(server, carrier, keys)
          : await relayCall(server, carrier);
      await phone.roundTrip();
      phones.push(phone);
    } catch {
      failed++;
    }
  }
  const echoes = [];
  let sent = 0;
  let back = 0;
  for (const p of phones) {
    p.sentAt = [];
    p.onMedia = (at) => {
      back++;
      const t0 = p.sentAt.shift();
      if (t0 !== undefined) echoes.push(at - t0);
    };
  }
  const cpuBefore = await treeCpuMs(server.pid);
  const start = performance.now();
  let tick = 0;
  await new Promise((ok) => {
    const timer = setInterval(() => {
      tick++;
      for (const p of phones) {
        p.sentAt.push(performance.now());
        p.media();
        sent++;
      }
      if (tick % 50 === 0)
        progress(
          `  ${calls} ${carrier} calls (${arm}): streaming (s)`,
          Math.floor(tick / 50),
          seconds,
        );
      if (performance.now() - start >= seconds * 1000) {
        clearInterval(timer);
        ok();
      }
    }, 20);
  });
  await sleep(500);
  const cpuMs = (await treeCpuMs(server.pid)) - cpuBefore;
  const wall = (performance.now() - start - 500) / 1000;
  for (const p of phones) p.hangUp();
  echoes.sort((a, b) => a - b);
  return {
    carrier,
    arm,
    calls,
    connected: phones.length,
    failed,
    sent,
    back,
    echoP50: echoes[Math.floor(echoes.length / 2)] ?? Number.NaN,
    cpuMsPerCallSecond: cpuMs / Math.max(1, phones.length) / Math.max(0.001, wall),
  };
}
