/**
 * The OpenAI SIP door: a call that reached the model service by SIP, announced by a signed
 * `realtime.call.incoming` webhook, accepted as the session's agent with liveline as its
 * sideband — on the simulator's SIP stand-in (src/simulator/openai-sip), which rings the call
 * and signs its webhook, serves the call control, the sideband and a stand-in phone.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signedDelivery } from "../../src/simulator/openai-sip/webhook-sender.js";
import { phoneCallSessionId } from "../../src/telephony/carrier-contract.js";
import { BASE, type Client, connect, type Frame, withKey } from "../support/gateway.js";

/** The test deployment's webhook secret, from vitest.config.ts's miniflare bindings. */
const SECRET = (env as unknown as Record<string, string>).OPENAI_WEBHOOK_SECRET!;
/** 100 ms of the phone's audio (PCM16 at 24 kHz: the call's session names no format). */
const UTTERANCE = btoa("\0".repeat(4800));

interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** A call rings on the stand-in: its id, and the webhook the service would deliver. */
async function ring(
  knobs: Record<string, string>,
  opts: { to?: string; secret?: string } = {},
): Promise<{ callId: string; webhook: Delivery }> {
  const query = new URLSearchParams({ timeScale: "0", utteranceMs: "100", ...knobs });
  query.set("session", crypto.randomUUID().replace(/-/g, "").slice(0, 24));
  const res = await exports.default.fetch(`${BASE}/simulator/openai-sip/calls?${query}`, {
    method: "POST",
    body: JSON.stringify({
      from: "+15551230000",
      to: opts.to ?? "+15550001000",
      secret: opts.secret ?? SECRET,
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { call_id: string; webhook: Delivery };
  return { callId: body.call_id, webhook: body.webhook };
}

const deliver = (webhook: Delivery, headers: Record<string, string> = {}) =>
  exports.default.fetch(`${BASE}/v1/sip/openai/webhook`, {
    method: "POST",
    headers: { ...webhook.headers, ...headers },
    body: webhook.body,
  });

/** The stand-in's account of the call (its state, what it was accepted with, its transfer). */
async function standIn(callId: string) {
  const res = await exports.default.fetch(`${BASE}/simulator/openai-sip/calls/${callId}`);
  return (await res.json()) as {
    state: string;
    accepted: { instructions?: string; tools?: { name: string }[] } | null;
    referred_to: string | null;
  };
}

const sessionOf = async (callId: string) => phoneCallSessionId("openai-sip", callId);

async function session(callId: string) {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${await sessionOf(callId)}`, {
    headers: withKey(),
  });
  return {
    status: res.status,
    body: res.ok
      ? ((await res.json()) as { closing: { record: { endedBy: string | null } } | null })
      : null,
  };
}

async function history(callId: string): Promise<Record<string, unknown>[]> {
  const res = await exports.default.fetch(
    `${BASE}/v1/sessions/${await sessionOf(callId)}/history`,
    {
      headers: withKey(),
    },
  );
  return ((await res.json()) as { events: Record<string, unknown>[] }).events;
}

/** What the phone heard of the model until `until` is said (its transcript's deltas). */
async function heard(phone: Client, until: string, ms = 8000): Promise<string> {
  let said = "";
  const deadline = Date.now() + ms;
  while (!said.includes(until)) {
    const f: Frame = await phone.next(Math.max(1, deadline - Date.now()));
    if (f.type === "response.output_audio_transcript.delta") said += String(f.delta);
  }
  return said;
}

/** Polls until `check` holds (the call's end is asynchronous: played out, then the REST call). */
async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A call rung, its webhook delivered and accepted, and the stand-in phone on the line. */
async function answeredCall(knobs: Record<string, string>, to?: string) {
  const { callId, webhook } = await ring(knobs, to === undefined ? {} : { to });
  const res = await deliver(webhook);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(await res.json()).toMatchObject({ accepted: true });
  const phone = await connect(`${BASE}/v1/realtime/calls/${callId}/phone`);
  return { callId, phone };
}

describe("an OpenAI SIP call, liveline its sideband", () => {
  it("is accepted as the number's agent, greets, runs a tool once, and is transferred with REFER", async () => {
    // Every function call is delivered twice on the sideband (duplicateCalls): run once.
    const { callId, phone } = await answeredCall({
      calls: "1:;2:lookup_faq;3:transfer_call;*:",
      duplicateCalls: "1",
    });
    const call = await standIn(callId);
    expect(call.state).toBe("accepted");
    expect(call.accepted?.instructions).toMatch(/friendly assistant/);
    expect(call.accepted?.tools?.map((t) => t.name)).toEqual(
      expect.arrayContaining(["lookup_faq", "transfer_call", "end_call"]),
    );
    // The model was told the caller is on the line: it greets.
    expect(await heard(phone, "liveline simulator")).toContain("Hello!");
    // The caller asks something: lookup_faq, a server tool, runs through the sideband.
    phone.send({ type: "audio", audio: UTTERANCE });
    expect(await heard(phone, "lookup_faq found")).toContain("lookup_faq found");
    // Then asks for a person: transfer_call, REFER once its line has played out.
    phone.send({ type: "audio", audio: UTTERANCE });
    const moved = await eventually(
      () => standIn(callId),
      (c) => c.state === "referred",
    );
    expect(moved).toMatchObject({ state: "referred", referred_to: "tel:+15550003000" });
    const ended = await eventually(
      () => session(callId),
      (s) => s.body?.closing?.record.endedBy === "transferred",
    );
    expect(ended.body?.closing?.record.endedBy).toBe("transferred");
    const events = await history(callId);
    const runs = (name: string, kind: string) =>
      events.filter((e) => e.kind === kind && e.name === name).length;
    expect(runs("lookup_faq", "tool_call")).toBe(1);
    expect(runs("lookup_faq", "tool_result")).toBe(1);
    expect(runs("transfer_call", "tool_call")).toBe(1);
  });

  it("the agent hangs up after its goodbye: the call is hung up at the service, the session ends", async () => {
    const { callId, phone } = await answeredCall({ calls: "1:;2:end_call;*:" });
    await heard(phone, "liveline simulator");
    phone.send({ type: "audio", audio: UTTERANCE });
    const over = await eventually(
      () => standIn(callId),
      (c) => c.state === "hung_up",
    );
    expect(over.state).toBe("hung_up");
    const ended = await eventually(
      () => session(callId),
      (s) => s.body?.closing?.record.endedBy === "agent_hung_up",
    );
    expect(ended.body?.closing?.record.endedBy).toBe("agent_hung_up");
  });

  it("the caller hangs up: the sideband is refused, and the session ends with the call", async () => {
    const { callId, phone } = await answeredCall({ calls: "*:" });
    await heard(phone, "liveline simulator");
    phone.close();
    const ended = await eventually(
      () => session(callId),
      (s) => s.body?.closing?.record.endedBy === "caller_hung_up",
    );
    expect(ended.body?.closing?.record.endedBy).toBe("caller_hung_up");
    const res = await exports.default.fetch(
      `${BASE}/v1/sessions/${await sessionOf(callId)}/timeline`,
      { headers: withKey() },
    );
    const kinds = ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
    // The sideband's close is the last of the model connection: no connection of the
    // session's own is made live once the call is gone.
    expect(kinds.lastIndexOf("UPSTREAM_LIVE")).toBeLessThan(kinds.indexOf("UPSTREAM_CLOSED"));
  });

  it("a session ended by the app's backend hangs its call up at the service", async () => {
    const { callId, phone } = await answeredCall({ calls: "*:" });
    await heard(phone, "liveline simulator");
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${await sessionOf(callId)}`, {
      method: "DELETE",
      headers: withKey(),
    });
    expect(res.ok).toBe(true);
    const over = await eventually(
      () => standIn(callId),
      (c) => c.state === "hung_up",
    );
    expect(over.state).toBe("hung_up");
  });

  it("the caller's keys from the sideband go by the keypad rules: 1, 2, # is one entry", async () => {
    const { callId, phone } = await answeredCall({ calls: "*:" });
    await heard(phone, "liveline simulator");
    for (const digit of ["1", "2", "#"]) phone.send({ type: "dtmf", digit });
    expect(await heard(phone, "pressed on the phone")).toContain("(keys 12 pressed on the phone)");
    const lines = (await history(callId))
      .filter((e) => e.kind === "user")
      .map((e) => String(e.text));
    // Three DTMF events, one line: the entry, not a line per key.
    expect(lines.filter((l) => l.includes("pressed on the phone"))).toEqual([
      "(keys 12 pressed on the phone)",
    ]);
  });

  it("under an agent whose keys go to tools (billing), the model hears that keys were typed, not which", async () => {
    const { callId, phone } = await answeredCall({ calls: "*:" }, "+15550002000");
    await heard(phone, "liveline simulator");
    for (const digit of ["4", "2", "#"]) phone.send({ type: "dtmf", digit });
    await heard(phone, "on the phone");
    const lines = (await history(callId)).filter((e) => e.kind === "user").map((e) => e.text);
    expect(lines).toContain("(the caller typed 2 keys on the phone; a tool can read them)");
    expect(JSON.stringify(lines)).not.toContain("42");
  });

  it("a webhook delivered twice accepts the call once", async () => {
    const { callId, webhook } = await ring({});
    expect((await deliver(webhook)).status).toBe(200);
    // The stand-in refuses a second accept (409): liveline must not send one.
    expect((await deliver(webhook)).status).toBe(200);
    expect((await standIn(callId)).state).toBe("accepted");
  });

  it("an event of another type, genuinely signed, is acknowledged and ignored", async () => {
    const event = { object: "event", id: "evt_1", type: "response.completed", data: { id: "r" } };
    const res = await deliver(await signedDelivery(SECRET, event, Date.now(), "wh_other"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ignored: "response.completed" });
  });
});

describe("a forged SIP webhook", () => {
  const WRONG = "whsec_d3Jvbmctc2VjcmV0LW9mLWFub3RoZXItcHJvamVjdA==";

  it("is refused with 403 and creates nothing: a wrong secret, an altered body, a stale or missing signature", async () => {
    const resigned = async (w: Delivery, atMs: number) =>
      signedDelivery(SECRET, JSON.parse(w.body), atMs, w.headers["webhook-id"]!);
    const cases: {
      name: string;
      secret?: string;
      send: (w: Delivery) => Promise<Response>;
    }[] = [
      { name: "signed with another project's secret", secret: WRONG, send: deliver },
      {
        name: "its body altered after signing (another number called)",
        send: (w) => deliver({ ...w, body: w.body.replace("+15550001000", "+15550002000") }),
      },
      {
        name: "genuinely signed an hour ago (a replay)",
        send: async (w) => deliver(await resigned(w, Date.now() - 3_600_000)),
      },
      {
        name: "its signature header missing",
        send: (w) => {
          const { "webhook-signature": _signature, ...headers } = w.headers;
          return deliver({ ...w, headers });
        },
      },
    ];
    for (const c of cases) {
      const { callId, webhook } = await ring(
        {},
        c.secret === undefined ? {} : { secret: c.secret },
      );
      const res = await c.send(webhook);
      expect(res.status, c.name).toBe(403);
      expect((await session(callId)).status, c.name).toBe(404);
      expect((await standIn(callId)).state, c.name).toBe("ringing");
    }
  });

  it("control: a genuine delivery, and one re-signed now, are accepted", async () => {
    const { callId, webhook } = await ring({});
    expect(
      (
        await deliver(
          await signedDelivery(SECRET, JSON.parse(webhook.body), Date.now(), "wh_again"),
        )
      ).status,
    ).toBe(200);
    expect((await session(callId)).status).toBe(200);
    expect((await standIn(callId)).state).toBe("accepted");
  });
});
