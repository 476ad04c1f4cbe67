/**
 * A phone call across the loss of its stream (Twilio's `<Connect action>`): the door's own
 * details — what the reconnect webhook answers to a carrier, and to someone posing as one —
 * and a call that goes on across a restart of its session's object with its question in
 * flight, answered once. (What every carrier's call does when its stream drops is the carrier
 * contract, test/telephony/carrier-contract.workers.test.ts; the same across a killed gateway process,
 * test/end-to-end/deploy-restart.scripts.test.mjs.) The test deployment's grace is 3 s
 * (CALL_RECONNECT_GRACE_MS in vitest.config.ts).
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pcm16ToMulaw } from "../../src/audio/g711.js";
import { MAX_RECONNECTS } from "../../src/session/phone-reconnect.js";
import { fetcherTransport, TwilioCallStandIn } from "../../src/simulator/twilio/index.js";
import { phoneCallSessionId } from "../../src/telephony/carrier-contract.js";
import { twilioSignature } from "../../src/telephony/twilio/signature.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import { BASE, newCallSid, withKey } from "../support/gateway.js";

const AUTH_TOKEN = env.TWILIO_AUTH_TOKEN as string;
const RECONNECT = `${BASE}/v1/telephony/twilio/reconnect`;
const HANG_UP = '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>';

/** A tone loud enough for the simulator's energy VAD, as μ-law 8 kHz. */
function spoken(ms: number): Uint8Array {
  const pcm = new Int16Array(ms * 8);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return pcm16ToMulaw(pcm);
}
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

/**
 * A call through the stand-in, its simulator knobs in the voice URL; `stripAction`: the
 * voice webhook's answer reaches the stand-in without its action (the control).
 */
async function placeCall(knobs: Record<string, string>, stripAction = false) {
  const inner = fetcherTransport(exports.default);
  const call = new TwilioCallStandIn({
    transport: {
      async fetch(request) {
        const res = await inner.fetch(request);
        if (!stripAction) return res;
        const body = (await res.text()).replace(/ action="[^"]*" method="POST"/, "");
        return new Response(body, { status: res.status, headers: res.headers });
      },
      openWebSocket: (url) => inner.openWebSocket(url),
    },
    allowInsecureStream: true,
  });
  const query = encodeURIComponent(new URLSearchParams(knobs).toString());
  const placed = await call.placeCall({
    baseUrl: BASE,
    voiceUrl: `${BASE}/v1/telephony/twilio/voice?simulator=${query}`,
    authToken: AUTH_TOKEN,
    from: "+15550001111",
    to: "+15550002222",
  });
  return { call, sessionId: placed.streamUrl.split("/").at(-1)!, callSid: placed.callSid };
}

/** The reconnect webhook as Twilio posts it (signed unless `signed` is false). */
async function postReconnect(callSid: string, signed = true, status = "in-progress") {
  const params = {
    AccountSid: "AC00000000000000000000000000000001",
    CallSid: callSid,
    CallStatus: status,
    ApiVersion: "2010-04-01",
  };
  return exports.default.fetch(RECONNECT, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      ...(signed
        ? { "X-Twilio-Signature": await twilioSignature(AUTH_TOKEN, RECONNECT, params) }
        : {}),
    },
    body: new URLSearchParams(params).toString(),
  });
}

async function historyOf(sessionId: string): Promise<{ status: number; events: HistoryEvent[] }> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  if (res.status !== 200) return { status: res.status, events: [] };
  return { status: 200, events: ((await res.json()) as { events: HistoryEvent[] }).events };
}

async function sessionState(sessionId: string) {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
    headers: withKey(),
  });
  return (await res.json()) as {
    connection: string;
    closing: { record: { endedBy: string | null; state: string } } | null;
  };
}

/** Polls until `check` holds (or throws after `ms`). */
async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ofKind = (events: HistoryEvent[], kind: string) => events.filter((e) => e.kind === kind);

describe("the reconnect webhook refuses what is not a carrier's call going on", () => {
  it("unsigned: 403, and nothing about the call changes", async () => {
    const { call, sessionId, callSid } = await placeCall({ timeScale: "0" });
    await call.waitFor((c) => c.heardMs() > 0, 5000);
    const before = await historyOf(sessionId);
    const res = await postReconnect(callSid, false);
    expect(res.status).toBe(403);
    expect(await historyOf(sessionId)).toEqual(before);
    expect(call.closed).toBeNull();
    call.hangUp();
  });

  it("for a call whose stream is up (a replayed request): hung up, the call untouched", async () => {
    const { call, sessionId, callSid } = await placeCall({ timeScale: "0" });
    await call.waitFor((c) => c.heardMs() > 0, 5000);
    const before = await historyOf(sessionId);
    const res = await postReconnect(callSid);
    expect(await res.text()).toBe(HANG_UP);
    expect(await historyOf(sessionId)).toEqual(before);
    expect(call.closed).toBeNull();
    call.hangUp();
  });

  it("for an ended session: hung up cleanly, nothing recorded", async () => {
    const { call, sessionId, callSid } = await placeCall({ timeScale: "0" });
    await call.waitFor((c) => c.heardMs() > 0, 5000);
    call.hangUp();
    const ended = await until(
      () => historyOf(sessionId),
      (h) => h.events.at(-1)?.kind === "status",
    );
    const res = await postReconnect(callSid);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(HANG_UP);
    expect(await historyOf(sessionId)).toEqual(ended);
  });

  it("for a stranger's call (no session has it): hung up, and no session is made", async () => {
    const stranger = newCallSid();
    const res = await postReconnect(stranger);
    expect(await res.text()).toBe(HANG_UP);
    expect((await historyOf(await phoneCallSessionId("twilio", stranger))).status).toBe(404);
  });

  it(`a storm of reconnects is bounded: past ${MAX_RECONNECTS} a minute, the call ends`, {
    timeout: 30_000,
  }, async () => {
    const { call, sessionId } = await placeCall({ timeScale: "0" });
    await call.waitFor((c) => c.heardMs() > 0, 5000);
    // The carrier's socket drops each time it comes back.
    for (let i = 1; i <= MAX_RECONNECTS; i++) {
      const streams = call.streams.length;
      // Closed from the carrier's side, as a network that keeps failing would.
      (call as unknown as { socket: WebSocket }).socket.close(1001, "flaky");
      await call.waitFor((c) => c.streams.length > streams || c.ended !== null, 5000);
      expect(call.ended, `reconnect ${i}`).toBeNull();
    }
    (call as unknown as { socket: WebSocket }).socket.close(1001, "flaky");
    await call.waitFor((c) => c.ended !== null, 5000);
    expect(call.ended).toMatchObject({ how: "action_answer" });
    expect(call.streams).toHaveLength(MAX_RECONNECTS + 1);
    const state = await until(
      () => sessionState(sessionId),
      (s) => s.closing?.record.state === "ended",
    );
    expect(state.closing?.record.endedBy).toBe("stream_dropped");
    // Greeted once, whatever the drops.
    const said = (await historyOf(sessionId)).events
      .filter((e) => e.kind === "transcript" || e.kind === "model_text")
      .map((e) => ("text" in e ? e.text : ""))
      .join("");
    expect(said.match(/Hello!/g)).toHaveLength(1);
  });
});

describe("a call whose session's object restarts with the caller's question in flight", () => {
  /**
   * The caller asks; the model's answer is slow to begin (latencyMs): the object restarts
   * in between (`restartWhen`), the call comes back on a new stream, and the question is
   * answered there.
   */
  async function askAcrossRestart(stripAction: boolean) {
    const knobs = { timeScale: "1", latencyMs: "1500", msPerWord: "60", calls: "greeting:;*:" };
    const { call, sessionId } = await placeCall(knobs, stripAction);
    // The greeting's turn over (the queue at the carrier runs dry between its chunks).
    await until(
      () => historyOf(sessionId),
      (h) => ofKind(h.events, "turn_complete").length === 1,
    );
    await call.waitFor((c) => c.heardMs() > 0 && c.queuedMs() === 0, 10_000);
    const greeted = call.heardMs();
    await call.sendAudio(spoken(300), { realTime: true });
    await call.sendAudio(silence(700), { realTime: true });
    // The model heard the question (its transcription is kept), and has not begun to answer.
    await until(
      () =>
        exports.default
          .fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, { headers: withKey() })
          .then((r) => r.json() as Promise<{ rows: { kind: string }[] }>),
      (t) => t.rows.some((r) => r.kind === "SPEECH_KEPT"),
    );
    const restarted = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
      headers: withKey(),
    });
    expect(restarted.status).toBe(200);
    return { call, sessionId, greeted };
  }

  it("the call comes back on a new stream, and the question is answered there once, with no second greeting", {
    timeout: 30_000,
  }, async () => {
    const { call, sessionId, greeted } = await askAcrossRestart(false);
    await call.waitFor((c) => c.streams.length === 2 && c.heardMs() > greeted + 300, 15_000);
    const { events } = await until(
      () => historyOf(sessionId),
      (h) => ofKind(h.events, "turn_complete").length >= 2,
    );
    const users = ofKind(events, "user");
    expect(users).toHaveLength(2);
    // The question, from its kept transcription: answered once, in its own turn.
    expect(users[1]).toMatchObject({ source: "audio" });
    expect(ofKind(events, "interrupted")).toEqual([]);
    const words = (turnId: string) =>
      events
        .flatMap((e) =>
          (e.kind === "transcript" || e.kind === "model_text") && e.turnId === turnId
            ? [e.text]
            : [],
        )
        .join("");
    const [greeting, question] = users as Extract<HistoryEvent, { kind: "user" }>[];
    expect(words(question!.turnId)).not.toBe("");
    expect(words(greeting!.turnId).match(/Hello!/g)).toHaveLength(1);
    expect(words(question!.turnId)).not.toMatch(/Hello!/);
    // It was the restart's carry that answered it: the new instance opened the turn.
    const timeline = (await (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
        headers: withKey(),
      })
    ).json()) as { rows: { kind: string; detail?: Record<string, unknown> }[] };
    expect(timeline.rows).toContainEqual(
      expect.objectContaining({
        kind: "TURN_CARRIED",
        detail: { turnId: question!.turnId, restart: true },
      }),
    );
    expect(call.violations).toEqual([]);
    call.hangUp();
  });

  it("control: with the action removed from the answer, the call ends with its stream, and its session within the grace", {
    timeout: 30_000,
  }, async () => {
    const { call, sessionId } = await askAcrossRestart(true);
    await call.waitFor((c) => c.ended !== null, 5000);
    expect(call.ended).toMatchObject({ how: "no_action" });
    expect(call.streams).toHaveLength(1);
    const state = await until(
      () => sessionState(sessionId),
      (s) => s.closing?.record.state === "ended",
    );
    expect(state.closing?.record.endedBy).toBe("stream_dropped");
  });
});
