/**
 * A phone call end to end, audio only: the carrier stand-in (src/simulator/twilio) plays
 * Twilio against `wrangler dev` — a signed voice webhook, the TwiML answer, the media stream —
 * with questions spoken by espeak-ng and turned into μ-law 8 kHz by sox, sent at real-time
 * pace, on the simulator's Gemini and OpenAI faces. The caller hears the greeting, asks a
 * question that calls a server tool and hears the answer once; the durable history holds one
 * call and one result; speaking over a reply gets a `clear` and the next question is
 * answered once. The agent's transfer_call reaches the carrier's REST API (its stand-in, served
 * here: TWILIO_API_BASE_URL) only after its line has been heard, and the call leaves the stream.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, history, startServer } from "../../scripts/lib/harness.mjs";
import { serveWeb } from "../../scripts/lib/web-server.mjs";
import { TwilioCallApiStandIn } from "../../src/simulator/twilio/call-api-stand-in.js";
import { mulawFromWav, TwilioCallStandIn, webTransport } from "../../src/simulator/twilio/index.js";

const AUTH_TOKEN = "phone-test-auth-token";
const ACCOUNT_SID = `AC${"7".repeat(32)}`;
const SILENCE = 0xff;
const dir = mkdtempSync(joinPath(tmpdir(), "liveline-phone-"));

/** `text` spoken by espeak-ng, as μ-law 8 kHz mono (sox), the way a phone line carries it. */
function spoken(text, name) {
  const wav = joinPath(dir, `${name}.wav`);
  const mulaw = joinPath(dir, `${name}.ulaw.wav`);
  const say = spawnSync("espeak-ng", ["-w", wav, text]);
  if (say.status !== 0) throw new Error(`espeak-ng failed: ${say.stderr}`);
  const convert = spawnSync("sox", [wav, "-r", "8000", "-c", "1", "-e", "u-law", mulaw]);
  if (convert.status !== 0) throw new Error(`sox failed: ${convert.stderr}`);
  return mulawFromWav(new Uint8Array(readFileSync(mulaw)));
}

const silence = (ms) => new Uint8Array(ms * 8).fill(SILENCE);

/** Speaks, then stays quiet long enough for the model to take the end of speech. */
async function say(call, audio) {
  await call.sendAudio(audio, { realTime: true });
  await call.sendAudio(silence(900), { realTime: true });
}

/** Waits until the caller has heard a reply through (something played, nothing queued). */
async function heardReply(call, sinceMs, timeoutMs = 20_000) {
  await call.waitFor((c) => c.heardMs() > sinceMs + 200 && c.queuedMs() === 0, timeoutMs);
}

const kinds = (events, kind) => events.filter((e) => e.kind === kind);

/** How many times each user turn of the record has ended. */
function turnEnds(events) {
  const ends = new Map();
  for (const e of events)
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId, (ends.get(e.turnId) ?? 0) + 1);
  return ends;
}

/** The record once every user turn in it has ended (a reply still being said gets its time). */
async function settledHistory(server, sessionId, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await history(server, sessionId);
    const ends = turnEnds(events);
    if (kinds(events, "user").every((e) => ends.has(e.turnId)) || Date.now() > deadline)
      return events;
    await new Promise((r) => setTimeout(r, 200));
  }
}

// One gateway and one carrier API stand-in for both faces (the wire is each call's knob; a
// transfer is found by its call's sid). The two faces' calls run side by side, each face's one
// after another: a test waits on real-time audio, not on the CPU.
let server;
let api;
let apiServer;
beforeAll(async () => {
  api = new TwilioCallApiStandIn({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
  apiServer = await serveWeb((request) => api.handle(request));
  server = await startServer({
    vars: { TWILIO_AUTH_TOKEN: AUTH_TOKEN, TWILIO_API_BASE_URL: apiServer.url },
  });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await apiServer?.close();
});

describe.concurrent.each(["gemini", "openai"])(
  "a phone call on the simulator's %s face",
  (wire) => {
    /** `timeScale` 1: the model speaks at real pace, so a reply is still under way as it plays. */
    /** A fresh token's status: 200 while the session is open, 410 once it has ended. */
    const tokenStatus = async (sessionId) =>
      (
        await fetch(`${server.base}/v1/sessions/${sessionId}/token`, {
          method: "POST",
          headers: { Authorization: `Bearer ${API_KEY}` },
        })
      ).status;

    /** Short words (100 ms of audio each) unless asked: a reply is heard through in seconds. */
    const place = async (
      timeScale = "0",
      calls = "greeting:;2:lookup_faq;*:",
      more = { msPerWord: "100" },
    ) => {
      const call = new TwilioCallStandIn({ transport: webTransport(), allowInsecureStream: true });
      const knobs = new URLSearchParams({ wire, timeScale, calls, ...more });
      const placed = await call.placeCall({
        baseUrl: server.base,
        voiceUrl: `${server.base}/v1/telephony/twilio/voice?simulator=${encodeURIComponent(knobs.toString())}`,
        authToken: AUTH_TOKEN,
        accountSid: ACCOUNT_SID,
        from: "+15550001111",
        to: "+15550002222",
      });
      api.register(placed.callSid, call);
      const sessionId = placed.streamUrl.split("/").at(-1);
      return { call, sessionId, callSid: placed.callSid };
    };

    it.sequential("greets, answers a question with a server tool once, and the record holds one call and one result", async () => {
      const { call, sessionId } = await place();
      await heardReply(call, 0);
      const greeted = call.heardMs();
      expect(greeted, "the greeting was heard").toBeGreaterThan(300);

      await say(call, spoken("What are your opening hours?", `hours-${wire}`));
      await heardReply(call, greeted);
      const events = await settledHistory(server, sessionId);
      expect(kinds(events, "tool_call").map((e) => e.name)).toEqual(["lookup_faq"]);
      expect(kinds(events, "tool_result")).toHaveLength(1);
      // Two turns (the call's connection, the question), each ended once, neither with an error.
      expect(kinds(events, "user")).toHaveLength(2);
      expect(kinds(events, "turn_complete")).toHaveLength(2);
      expect(kinds(events, "error")).toEqual([]);
      // The reply was not said twice: its words once in the record.
      const replies = events.filter((e) => e.kind === "model_text" || e.kind === "transcript");
      expect(new Set(replies.map((e) => e.text)).size).toBe(replies.length);
      expect(call.violations).toEqual([]);
      call.hangUp();
    }, 90_000);

    it.sequential("speaking over a reply clears the caller's playback at once, and the next question is answered once", async () => {
      // Words at their real length: the reply is long enough to speak over.
      const { call, sessionId } = await place("1", undefined, {});
      await heardReply(call, 0);
      const before = call.heardMs();
      await say(call, spoken("Tell me something interesting about your services.", `long-${wire}`));
      // The reply is under way and playing: the caller speaks over it.
      await call.waitFor((c) => c.heardMs() > before + 600, 20_000);
      const clearsBefore = call.clears;
      await call.sendAudio(spoken("Wait, stop.", `stop-${wire}`), { realTime: true });
      await call.waitFor((c) => c.clears > clearsBefore, 3_000);
      expect(call.queuedMs(), "nothing left to play after the clear").toBe(0);
      await call.sendAudio(silence(900), { realTime: true });
      await heardReply(call, call.heardMs());

      const beforeLast = call.heardMs();
      await say(call, spoken("What are your opening hours?", `hours2-${wire}`));
      await heardReply(call, beforeLast);
      const events = await settledHistory(server, sessionId);
      const interrupted = kinds(events, "interrupted");
      expect(interrupted.map((e) => e.reason)).toContain("barge_in");
      // Every turn ended exactly once, and the last question was answered.
      const ends = turnEnds(events);
      for (const e of kinds(events, "user")) expect(ends.get(e.turnId), e.text).toBe(1);
      const lastTurn = kinds(events, "user").at(-1).turnId;
      expect(events.some((e) => e.kind === "turn_complete" && e.turnId === lastTurn)).toBe(true);
      expect(call.violations).toEqual([]);
      call.hangUp();
    }, 90_000);

    it.sequential("the agent hangs up with end_call: after its goodbye has played, the call and its session end", async () => {
      const { call, sessionId } = await place("0", "greeting:;2:end_call;*:");
      await heardReply(call, 0);
      const before = call.heardMs();
      await say(call, spoken("That is all, goodbye.", `bye-${wire}`));
      await call.waitFor((c) => c.closed !== null, 20_000);
      expect(call.closed.by).toBe("liveline");
      // The goodbye was heard through before the line went dead.
      expect(call.heardMs()).toBeGreaterThan(before + 300);
      expect(call.queuedMs()).toBe(0);
      const events = await history(server, sessionId);
      expect(kinds(events, "tool_call").map((e) => e.name)).toEqual(["end_call"]);
      expect(await tokenStatus(sessionId), "the call's session has ended").toBe(410);
      expect(call.violations).toEqual([]);
    }, 90_000);

    it.sequential("the agent transfers the call with transfer_call: after its line has played, through the carrier's API", async () => {
      const { call, sessionId, callSid } = await place("0", "greeting:;2:transfer_call;*:");
      await heardReply(call, 0);
      const before = call.heardMs();
      await say(call, spoken("Can I talk to a person?", `person-${wire}`));
      await call.waitFor((c) => c.closed !== null, 20_000);
      // The carrier was asked once, for this call, to dial the front desk…
      expect(api.transfers.filter((t) => t.callSid === callSid)).toEqual([
        { callSid, number: "+15550003000" },
      ]);
      // …after the caller had heard the agent's line through.
      expect(call.heardMs()).toBeGreaterThan(before + 300);
      expect(call.queuedMs()).toBe(0);
      const events = await history(server, sessionId);
      expect(kinds(events, "tool_call").map((e) => e.name)).toEqual(["transfer_call"]);
      expect(kinds(events, "tool_result")).toHaveLength(1);
      expect(kinds(events, "error")).toEqual([]);
      expect(await tokenStatus(sessionId), "the call's session has ended").toBe(410);
      expect(call.violations).toEqual([]);
    }, 90_000);
  },
);
