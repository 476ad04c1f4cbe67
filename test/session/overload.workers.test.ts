/**
 * A session whose object falls behind (session/audio-intake.ts): its load probe says so (set
 * here, as a loop too busy to be on time would), and a client's burst of audio is bounded —
 * only its newest 200 ms go to the model, the oldest are shed, the client gets one
 * `overloaded` error, the timeline an AUDIO_SHED row, the stats the count — while the frame
 * after the burst (its `audio_end`) keeps its place. The control: on time, every chunk goes to the model.
 */

import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ModelCommand } from "../../src/vocabulary/model.js";
import { BASE, type Frame, withKey } from "../support/gateway.js";
import { simulatorSession } from "../support/session-flow.js";

/** A simulator session whose model connection is live (its adapter is there to watch). */
async function liveSession() {
  const session = await simulatorSession({ timeScale: 0 });
  const deadline = Date.now() + 5000;
  while (!session.client.statuses.some((f) => f.state === "live")) {
    if (Date.now() > deadline) throw new Error("the model connection never came up");
    await new Promise((r) => setTimeout(r, 20));
  }
  return session;
}

/** Marks the object behind (or not) and records what its model is sent from now on. */
async function steer(sessionId: string, behind: boolean) {
  const sent: { type: string; n?: number }[] = [];
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    type Adapter = { encode(command: ModelCommand): string[] };
    const object = instance as {
      load: { behind: boolean; noteAudio: () => void };
      running: { live: { link: { adapter: Adapter | null } } | null };
    };
    object.load.behind = behind;
    // Its timer would find the loop on time and say so: here the test says.
    object.load.noteAudio = () => undefined;
    const adapter = object.running.live?.link.adapter;
    if (!adapter) throw new Error("the session has no model connection");
    const encode = adapter.encode.bind(adapter);
    adapter.encode = (command) => {
      if (command.type === "user_audio") sent.push({ type: "user_audio", n: command.pcm[0] });
      else sent.push({ type: command.type });
      return encode(command);
    };
  });
  return sent;
}

async function statsOf(sessionId: string) {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return (await res.json()) as {
    rows: { kind: string; detail?: Record<string, unknown> }[];
    stats: { overload: { shedChunks: number; shedMs: number } };
  };
}

/** 30 chunks of 20 ms (PCM16, 16 kHz) numbered 1–30 in their first byte, then their end. */
function burstThenEnd(send: (data: ArrayBuffer | Record<string, unknown>) => void) {
  for (let n = 1; n <= 30; n++) {
    const pcm = new Uint8Array(640);
    pcm[0] = n;
    send(pcm.buffer);
  }
  send({ type: "audio_end" });
}

async function framesFor(next: (ms: number) => Promise<Frame>, ms: number): Promise<Frame[]> {
  const frames: Frame[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const f = await next(deadline - Date.now()).catch(() => null);
    if (f === null) break;
    frames.push(f);
  }
  return frames;
}

describe("a session whose object falls behind", () => {
  it("sends the model only the newest 200 ms of a burst, says so once, and keeps the frame after it in place", async () => {
    const { sessionId, client } = await liveSession();
    const sent = await steer(sessionId, true);
    burstThenEnd((d) => client.send(d));
    const frames = await framesFor((ms) => client.next(ms), 1500);

    const audio = sent.filter((c) => c.type === "user_audio").map((c) => c.n);
    // Oldest first: what went on is the burst's newest, in order, the last chunk among them.
    expect(audio.length).toBeGreaterThan(0);
    expect(audio.length).toBeLessThan(30);
    expect(audio.at(-1)).toBe(30);
    expect(audio).toEqual([...audio].sort((a, b) => a! - b!));
    // Nothing overtook the queued audio: its end went to the model after every chunk of it.
    const end = sent.findIndex((c) => c.type === "audio_end");
    expect(end).toBeGreaterThan(sent.findLastIndex((c) => c.type === "user_audio"));

    const overloaded = frames.filter((f) => f.type === "error" && f.code === "overloaded");
    expect(overloaded).toHaveLength(1);
    expect(overloaded[0]).toMatchObject({ fatal: false });

    const { rows, stats } = await statsOf(sessionId);
    expect(stats.overload.shedChunks).toBe(30 - audio.length);
    expect(stats.overload.shedMs).toBe(20 * (30 - audio.length));
    expect(rows.filter((r) => r.kind === "AUDIO_SHED")).toHaveLength(1);
    client.close();
  });

  it("control: on time, every chunk of the burst goes to the model and nothing is said", async () => {
    const { sessionId, client } = await liveSession();
    const sent = await steer(sessionId, false);
    burstThenEnd((d) => client.send(d));
    const frames = await framesFor((ms) => client.next(ms), 1500);
    const audio = sent.filter((c) => c.type === "user_audio").map((c) => c.n);
    expect(audio).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(frames.some((f) => f.type === "error" && f.code === "overloaded")).toBe(false);
    expect((await statsOf(sessionId)).stats.overload.shedChunks).toBe(0);
    client.close();
  });
});

/** Sets how late the object's loop says it is (as a flood would make it). */
async function lateBy(sessionId: string, ms: number) {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    (instance as { load: { lateMs: () => number } }).load.lateMs = () => ms;
  });
}

/** 200 pings at once (twice MAX_FRAMES_PER_SECOND), then what came back until the marker. */
async function burstOfPings(client: Awaited<ReturnType<typeof liveSession>>["client"]) {
  for (let i = 0; i < 200; i++) client.send({ type: "ping" });
  client.send({ type: "marker" }); // unknown: answered by bad_frame, ends the burst
  const frames: Frame[] = [];
  for (;;) {
    const f = await client.next();
    if (f.code === "bad_frame") break;
    frames.push(f);
  }
  return {
    pongs: frames.filter((f) => f.type === "pong").length,
    limited: frames.filter((f) => f.code === "rate_limited").length,
  };
}

describe("the rate limits on a loop that is late (found by the attack: honest lines dropped)", () => {
  it("let through a burst a client spread over the lateness: 1.5 s late, 200 frames in a second pass", async () => {
    const { sessionId, client } = await liveSession();
    await lateBy(sessionId, 1500);
    expect(await burstOfPings(client)).toEqual({ pongs: 200, limited: 0 });
    client.close();
  });

  it("control: on time, the same burst is cut at MAX_FRAMES_PER_SECOND", async () => {
    const { sessionId, client } = await liveSession();
    await lateBy(sessionId, 0);
    const { pongs, limited } = await burstOfPings(client);
    expect(limited).toBeGreaterThan(0);
    expect(pongs + limited).toBe(200);
    client.close();
  });
});
