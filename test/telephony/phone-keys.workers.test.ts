/**
 * What a caller's keys become, and a transfer the carrier does not take — on a call placed
 * through the carrier stand-in (src/simulator/twilio) against the Worker itself:
 * - keys are gathered into entries (# or a pause ends one): one line per entry, not per key;
 * - an agent with `keypad: "tools"` (billing) gives its tools the keys and the model only the
 *   fact of an entry: the digits are nowhere in the durable record (the greeter's `said`
 *   keypad, the control, puts them there);
 * - `transfer_call` whose REST request fails (TWILIO_API_BASE_URL points where nothing
 *   listens, in vitest.config.ts) tells the model why, and the call goes on.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pcm16ToMulaw } from "../../src/audio/g711.js";
import { ENTRY_PAUSE_MS } from "../../src/telephony/keypad.js";
import { BASE, placeSimulatedCall, withKey } from "../support/gateway.js";

const GREETER_LINE = "+15550002222";
const BILLING_LINE = "+15550002000";

interface Event {
  kind: string;
  turnId?: string;
  text?: string;
  name?: string;
  result?: Record<string, unknown>;
}

async function historyOf(sessionId: string): Promise<Event[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return ((await res.json()) as { events: Event[] }).events;
}

/** A call to `to`, with the simulator's `calls` script; its greeting's turn ended (still playing). */
async function placeCall(to: string, calls: string, msPerWord = "30") {
  // Short words (30 ms of audio each): the caller hears a reply through in a fraction of a second.
  const placed = await placeSimulatedCall({ timeScale: "0", msPerWord, calls }, to);
  await settled(placed.sessionId, 1);
  return placed;
}

/** The history once it holds `count` user lines, each of whose turns has ended. */
async function settled(sessionId: string, count: number, timeoutMs = 10_000): Promise<Event[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await historyOf(sessionId);
    const users = events.filter((e) => e.kind === "user");
    const ended = new Set(
      events
        .filter((e) => e.kind === "turn_complete" || e.kind === "interrupted")
        .map((e) => e.turnId),
    );
    if ((users.length >= count && users.every((u) => ended.has(u.turnId))) || Date.now() > deadline)
      return events;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const userLines = (events: Event[]) => events.filter((e) => e.kind === "user").map((e) => e.text);

describe("keys typed on a call", () => {
  it("said (the greeter): one entry of keys is one line the model hears, ended by #", async () => {
    const { call, sessionId } = await placeCall(GREETER_LINE, "greeting:;*:");
    for (const key of ["4", "9", "2", "1", "#"]) call.sendDtmf(key);
    const events = await settled(sessionId, 2);
    expect(userLines(events).slice(1)).toEqual(["(keys 4921 pressed on the phone)"]);
    expect(JSON.stringify(events)).toContain("4921");
    expect(call.violations).toEqual([]);
    call.hangUp();
  });

  it("a single key is an entry once the caller pauses", async () => {
    const { call, sessionId } = await placeCall(GREETER_LINE, "greeting:;*:");
    call.sendDtmf("5");
    const early = await historyOf(sessionId);
    expect(userLines(early)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, ENTRY_PAUSE_MS));
    const events = await settled(sessionId, 2);
    expect(userLines(events).slice(1)).toEqual(["(key 5 pressed on the phone)"]);
    call.hangUp();
  });

  it("tools (billing): the tool reads the keys; the model and the record never get the digits", async () => {
    const { call, sessionId } = await placeCall(BILLING_LINE, "greeting:;2:lookup_invoice;*:");
    for (const key of ["4", "9", "2", "1", "#"]) call.sendDtmf(key);
    const events = await settled(sessionId, 2);
    expect(userLines(events).slice(1)).toEqual([
      "(the caller typed 4 keys on the phone; a tool can read them)",
    ]);
    const results = events.filter((e) => e.kind === "tool_result");
    expect(results.map((e) => e.result?.invoice)).toEqual(["the one typed (4 digits)"]);
    expect(JSON.stringify(events)).not.toContain("4921");
    expect(call.violations).toEqual([]);
    call.hangUp();
  });
});

describe("a transfer the carrier does not take", () => {
  it("the model hears why after its line has played, and the call goes on", async () => {
    const { call, sessionId } = await placeCall(GREETER_LINE, "greeting:;2:transfer_call;*:");
    call.sendDtmf("0");
    call.sendDtmf("#");
    const events = await settled(sessionId, 3);
    expect(events.filter((e) => e.kind === "tool_call").map((e) => e.name)).toEqual([
      "transfer_call",
    ]);
    const failed = userLines(events)[2] ?? "";
    expect(failed).toMatch(
      /^\(the transfer to \+15550003000 failed: the carrier could not be reached; the caller is still on the line\)$/,
    );
    expect(events.filter((e) => e.kind === "error")).toEqual([]);
    expect(call.closed).toBeNull();
    call.hangUp();
  });

  // Its own waits add up to 8 s (the tool's result, then the clear): more than the default 5 s
  // on a loaded machine.
  it("a transfer line the caller speaks over is not acted on: the model is told, the call goes on", {
    timeout: 20_000,
  }, async () => {
    // Words at their real length: the line plays for seconds.
    const { call, sessionId } = await placeCall(
      GREETER_LINE,
      "greeting:;2:transfer_call;*:",
      "300",
    );
    call.sendDtmf("0");
    call.sendDtmf("#");
    // The tool has answered: its line is being said, and plays for seconds.
    const deadline = Date.now() + 5_000;
    while (
      !(await historyOf(sessionId)).some((e) => e.kind === "tool_result") &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 50));
    // The line is playing: the caller talks over it (a loud 300 Hz voice, 400 ms).
    const loud = pcm16ToMulaw(
      Int16Array.from({ length: 3200 }, (_, i) =>
        Math.round(12_000 * Math.sin((2 * Math.PI * 300 * i) / 8000)),
      ),
    );
    await call.sendAudio(loud, { realTime: false });
    await call.waitFor((c) => c.clears > 0, 3_000);
    const events = await settled(sessionId, 3);
    const lines = userLines(events);
    expect(lines).toContain(
      "(the caller spoke over your line: the transfer to +15550003000 was not made)",
    );
    expect(lines.some((l) => l?.includes("failed"))).toBe(false);
    expect(call.closed).toBeNull();
    call.hangUp();
  });
});

async function timelineKinds(sessionId: string): Promise<string[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
}

/** `ms` of μ-law: the line's silence, or (loud) a 440 Hz tone at half scale, as speech is heard. */
function lineAudio(ms: number, loud: boolean): Uint8Array {
  const pcm = new Int16Array(ms * 8);
  if (loud)
    for (let i = 0; i < pcm.length; i++)
      pcm[i] = Math.round(16_000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return pcm16ToMulaw(pcm);
}

// Found by the black-box attack (round 3): Twilio streams the caller's silence every 20 ms for
// the whole call, and every keypad entry waited 3.9 s, held as if the caller were speaking.
describe("keys typed while the line streams silence, as Twilio's does", () => {
  for (const spoke of [false, true])
    it(
      spoke
        ? "control: the caller spoke just before the keys: the entry waits for that speech's answer"
        : "an entry is taken at once, not held as if the caller were speaking",
      async () => {
        const { call, sessionId } = await placeCall(GREETER_LINE, "greeting:;*:");
        // A second of the line's silence, streamed in real time, then (the control) a moment
        // of speech, then the keys while the silence goes on.
        await call.sendAudio(lineAudio(1000, false), { realTime: true });
        if (spoke) await call.sendAudio(lineAudio(200, true), { realTime: true });
        const streaming = call.sendAudio(lineAudio(1500, false), { realTime: true });
        for (const key of ["4", "2", "#"]) call.sendDtmf(key);
        await new Promise((r) => setTimeout(r, 300));
        const held = (await timelineKinds(sessionId)).includes("LINE_HELD");
        expect(held).toBe(spoke);
        if (!spoke) {
          const events = await settled(sessionId, 2);
          expect(userLines(events).slice(1)).toEqual(["(keys 42 pressed on the phone)"]);
        }
        await streaming;
        expect(call.violations).toEqual([]);
        call.hangUp();
      },
    );
});
