/**
 * A phone call's audio on each face of the simulator: on OpenAI Realtime, which takes G.711
 * μ-law itself (audio/pcmu), the caller's bytes reach the model untouched and the model's
 * reach the caller untouched; on Gemini Live (PCM16 only) both are converted. Either way the
 * caller hears the simulated model's 220 Hz voice, and an app on the same session still
 * hears PCM16 at 24 kHz.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { mulawToPcm16 } from "../../src/audio/g711.js";
import type { ModelCommand } from "../../src/vocabulary/model.js";
import { BASE, placeSimulatedCall, withKey } from "../support/gateway.js";

/** The dominant frequency of a tone, from its zero crossings (Hz). */
function toneHz(samples: Int16Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings++;
  return (crossings / 2) * (rate / samples.length);
}

const placeCall = (wire: "gemini" | "openai") =>
  placeSimulatedCall({ wire, timeScale: "0", msPerWord: "60", calls: "greeting:;*:" });

/** The session's audio encoding, and every user_audio chunk its model is sent from now on. */
async function spyOnModelAudio(sessionId: string) {
  const sent: Uint8Array[] = [];
  let audio = "";
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    type Adapter = { encode(command: ModelCommand): string[] };
    type Live = { audio: string; link: { adapter: Adapter | null } };
    const live = (instance as { running: { live: Live | null } }).running.live;
    const adapter = live?.link.adapter;
    if (!live || !adapter) throw new Error("the call's session has no model connection");
    audio = live.audio;
    const encode = adapter.encode.bind(adapter);
    adapter.encode = (command) => {
      if (command.type === "user_audio") sent.push(command.pcm.slice());
      return encode(command);
    };
  });
  return { audio, sent };
}

describe.each(["openai", "gemini"] as const)("a call's audio on the %s face", (wire) => {
  it("the caller hears the model's voice; on OpenAI the line's μ-law passes untouched both ways", async () => {
    const { call, sessionId } = await placeCall(wire);
    await call.waitFor((c) => c.heardMs() >= 400, 10_000);
    const heard = mulawToPcm16(call.heardAudio());
    expect(toneHz(heard, 8000)).toBeGreaterThan(200);
    expect(toneHz(heard, 8000)).toBeLessThan(240);

    const spy = await spyOnModelAudio(sessionId);
    expect(spy.audio).toBe(wire === "openai" ? "g711_ulaw" : "pcm16");
    const line = Uint8Array.from({ length: 480 }, (_, i) => (i * 53) & 0x7f);
    await call.sendAudio(line, { realTime: false });
    await call.waitFor(() => spy.sent.length >= 3, 5_000);
    const toModel = new Uint8Array(spy.sent.slice(0, 3).flatMap((c) => [...c]));
    if (wire === "openai") expect(toModel).toEqual(line);
    // Gemini takes PCM16 at 16 kHz: each 20 ms chunk of 160 μ-law bytes is 640 bytes for it.
    else expect(spy.sent.slice(0, 3).map((c) => c.length)).toEqual([640, 640, 640]);
    expect(call.violations).toEqual([]);
    call.hangUp();
  });
});

describe("an app on a call's session whose line passes through (OpenAI)", () => {
  it("still hears PCM16 at 24 kHz: its link converts the line's μ-law", async () => {
    const { call, sessionId } = await placeCall("openai");
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
      method: "POST",
      headers: withKey(),
    });
    const { wsUrl } = (await res.json()) as { wsUrl: string };
    const up = await exports.default.fetch(wsUrl.replace(/^ws/, "http"), {
      headers: { Upgrade: "websocket" },
    });
    const ws = up.webSocket!;
    ws.accept();
    ws.binaryType = "arraybuffer";
    const chunks: Uint8Array[] = [];
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") chunks.push(new Uint8Array(e.data as ArrayBuffer));
    });
    // The app asks a question by text: the model's spoken answer goes to both.
    ws.send(JSON.stringify({ type: "text", text: "hello" }));
    const deadline = Date.now() + 5_000;
    while (chunks.reduce((n, c) => n + c.length, 0) < 24_000 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const bytes = new Uint8Array(chunks.flatMap((c) => [...c]));
    const pcm = new Int16Array(bytes.buffer, 0, bytes.length >> 1);
    expect(pcm.length).toBeGreaterThan(12_000);
    // 220 Hz read at 24 kHz: μ-law bytes taken for PCM16 would be noise, not this tone.
    expect(toneHz(pcm.subarray(100), 24000)).toBeGreaterThan(200);
    expect(toneHz(pcm.subarray(100), 24000)).toBeLessThan(240);
    ws.close(1000, "done");
    call.hangUp();
  });
});
