/**
 * Recordings in the RECORDINGS bucket (miniflare's R2): a session's audio as one WAV whose
 * offsets are the timeline's, a phone call's PIN digits silent in it, a crash that loses the
 * last part at most, the budget that stops a recording (the session goes on), the wire
 * recording with no secret in it, and the route's refusals. RECORDING_PART_MS is 500 here
 * (vitest.config.ts), so a part is half a second.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RECORDED_ANNOUNCEMENT, RECORDED_LINE } from "../../scripts/measurement/lines.js";
import { PART_CLOSE_SLACK_MS } from "../../src/recording/audio-recording.js";
import { WireEntry } from "../../src/recording/wire-format.js";
import { fetcherTransport, TwilioCallStandIn } from "../../src/simulator/twilio/index.js";
import { pcm16ToMulaw } from "../../src/telephony/audio/g711.js";
import {
  BASE,
  type Client,
  connect,
  createSession,
  httpUrl,
  TOKEN_SECRET,
  withKey,
} from "../support/gateway.js";
import { framesUntil, inLiveSession } from "../support/session-flow.js";
import { sine } from "../telephony/tones.js";

const PART_MS = Number(env.RECORDING_PART_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Wav {
  rate: number;
  channels: number;
  heard: Int16Array;
  said: Int16Array;
}

function parseWav(bytes: Uint8Array): Wav {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const channels = view.getUint16(22, true);
  const rate = view.getUint32(24, true);
  const dataBytes = view.getUint32(40, true);
  expect(44 + dataBytes).toBe(bytes.length);
  const samples = new Int16Array(
    bytes.buffer.slice(bytes.byteOffset + 44, bytes.byteOffset + 44 + dataBytes),
  );
  const frames = samples.length / channels;
  const heard = new Int16Array(frames);
  const said = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    heard[i] = samples[i * channels]!;
    said[i] = samples[i * channels + 1]!;
  }
  return { rate, channels, heard, said };
}

async function recordingRes(
  sessionId: string,
  query = "",
  headers: Record<string, string> = withKey(),
) {
  return exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/recording${query}`, { headers });
}

/** The session's WAV once `ready` says it holds what the test waits for (parts land async). */
async function wavOf(sessionId: string, ready: (wav: Wav) => boolean = () => true): Promise<Wav> {
  const deadline = Date.now() + 8000;
  for (;;) {
    const res = await recordingRes(sessionId);
    if (res.status === 200) {
      expect(res.headers.get("content-type")).toBe("audio/wav");
      const wav = parseWav(new Uint8Array(await res.arrayBuffer()));
      if (ready(wav) || Date.now() > deadline) return wav;
    } else if (Date.now() > deadline)
      throw new Error(`recording: ${res.status} ${await res.text()}`);
    await sleep(100);
  }
}

interface Row {
  ms: number;
  kind: string;
  detail?: Record<string, unknown>;
}

async function timelineOf(sessionId: string): Promise<Row[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: Row[] }).rows;
}

/** Sample indexes of a track louder than `floor`, as runs [from, to). */
function loudRuns(samples: Int16Array, floor: number, gap: number): [number, number][] {
  const runs: [number, number][] = [];
  for (let i = 0; i < samples.length; i++) {
    if (Math.abs(samples[i]!) <= floor) continue;
    const last = runs.at(-1);
    if (last !== undefined && i - last[1] <= gap) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  return runs;
}

/** `ms` of a 16 kHz PCM16 sine, as a client's audio frame. */
const tone16 = (ms: number, hz = 440, amplitude = 8000) =>
  sine(hz, 16000, (16000 * ms) / 1000, amplitude).buffer as ArrayBuffer;

/** Sends `ms` of tone in 20 ms chunks at real pace. */
async function speak(client: Client, ms: number): Promise<void> {
  const started = Date.now();
  for (let sent = 0; sent < ms; sent += 20) {
    client.send(tone16(20));
    const ahead = started + sent + 20 - Date.now();
    if (ahead > 0) await sleep(ahead);
  }
}

async function recordedSession(
  recording: Record<string, unknown>,
  knobs: Record<string, string | number> = {},
) {
  const created = await createSession({
    provider: "simulator",
    metadata: { simulator: { timeScale: 0, ...knobs } },
    recording,
  });
  const client = await connect(httpUrl(created.wsUrl));
  expect((await client.next()).type).toBe("ready");
  return { ...created, client };
}

async function end(sessionId: string): Promise<void> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
    method: "DELETE",
    headers: withKey(),
  });
  expect(res.status).toBe(200);
}

describe("an audio recording", () => {
  it("holds both directions on the timeline's clock: the model's speech within 50 ms of its rows", async () => {
    const { sessionId, client } = await recordedSession(
      { audio: true },
      { modality: "AUDIO", msPerWord: 20, timeScale: 0.2, calls: "*:" },
    );
    // The model's audio the client got (24 kHz PCM16: 48 bytes a ms), to wait for it to play.
    let receivedMs = 0;
    let firstAudioAt = 0;
    client.ws.addEventListener("message", (e) => {
      if (typeof e.data === "string") return;
      if (receivedMs === 0) firstAudioAt = Date.now();
      receivedMs += (e.data as ArrayBuffer).byteLength / 48;
    });
    const turnEnds = (turn: string) =>
      framesUntil(
        client,
        (f) => (f.type === "turn_complete" || f.type === "interrupted") && f.turnId === turn,
        10_000,
      );
    // The user speaks (a tone), then ends the utterance; the model answers in speech.
    await speak(client, 300);
    client.send({ type: "audio_end" });
    await turnEnds("t1");
    // Once its answer has played out, a typed line: answered in speech too.
    await sleep(Math.max(0, firstAudioAt + receivedMs + 600 - Date.now()));
    client.send({ type: "text", text: "and now?" });
    await turnEnds("t2");
    await sleep(300);
    await end(sessionId);
    const rows = await timelineOf(sessionId);
    const replies = rows.filter((r) => r.kind === "MODEL_AUDIO");
    expect(replies.length).toBe(2);
    const wav = await wavOf(sessionId, (w) => loudRuns(w.said, 500, 1600).length >= 2);
    expect(wav).toMatchObject({ rate: 16000, channels: 2 });
    // What it said: each reply's audio begins where its MODEL_AUDIO row is, within 50 ms.
    const said = loudRuns(wav.said, 500, 1600).map(([from]) => (from * 1000) / wav.rate);
    expect(said).toHaveLength(2);
    for (const [i, ms] of said.entries())
      expect(Math.abs(ms - replies[i]!.ms)).toBeLessThanOrEqual(50);
    // What it heard: one utterance of 300 ms (as it came: a stall of the sender leaves a gap),
    // ending before its reply began.
    const heardRuns = loudRuns(wav.heard, 500, 4000);
    expect(heardRuns).toHaveLength(1);
    const [[from, to]] = heardRuns.map(([a, b]) => [
      (a * 1000) / wav.rate,
      (b * 1000) / wav.rate,
    ]) as [[number, number]];
    const loud = loudRuns(wav.heard, 500, 16).reduce((n, [a, b]) => n + b - a, 0) / 16;
    expect(loud).toBeGreaterThan(250);
    expect(loud).toBeLessThan(350);
    expect(to - from).toBeLessThan(800);
    expect(to).toBeLessThanOrEqual(replies[0]!.ms + 50);
    client.close();
  }, 30_000);

  it("a crash loses the part being written at most (control: a recorder that writes only at the end loses all)", async () => {
    const run = async (partsOff: boolean) => {
      const { sessionId, client } = await recordedSession({ audio: true });
      if (partsOff)
        await inLiveSession<{ recordings: { audio: { flush(final?: boolean): void } } }>(
          sessionId,
          (live) => {
            const recorder = live.recordings.audio;
            const flush = recorder.flush.bind(recorder);
            // The control's arm: parts are written only when the recording ends.
            recorder.flush = (final = false) => {
              if (final) flush(true);
            };
          },
        );
      await speak(client, 1800);
      const crashAt = (await timelineOf(sessionId)).at(-1)!.ms;
      const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
        method: "POST",
        headers: withKey(),
      });
      expect(res.status).toBe(200);
      client.close();
      await sleep(300);
      const recorded = await recordingRes(sessionId);
      const wav =
        recorded.status === 200 ? parseWav(new Uint8Array(await recorded.arrayBuffer())) : null;
      const runs = wav === null ? [] : loudRuns(wav.heard, 500, 160);
      const kept = runs.reduce((n, [a, b]) => n + b - a, 0) / 16;
      return { crashAt, kept, runs };
    };
    const [parts, control] = await Promise.all([run(false), run(true)]);
    // Everything but the part in progress (and the slack it waits for late audio) is kept.
    expect(parts.kept).toBeGreaterThan(1800 - PART_MS - PART_CLOSE_SLACK_MS - 300);
    expect(control.kept).toBe(0);
  }, 30_000);

  it("past its budget it stops with a timeline row; the session goes on (control: no budget, no row)", async () => {
    const run = async (maxBytes: number | undefined) => {
      const born = Date.now();
      const { sessionId, client } = await recordedSession(
        maxBytes === undefined ? { audio: true } : { audio: true, maxBytes },
        { calls: "*:" },
      );
      await speak(client, 1200);
      client.send({ type: "audio_end" });
      // The session goes on: the speech is answered, its turn ends.
      const frames = await framesUntil(client, (f) => f.type === "turn_complete", 10_000);
      expect(frames.some((f) => f.type === "text")).toBe(true);
      // The second part closes at 1.5 s (its end, and the slack).
      await sleep(Math.max(0, born + 1700 - Date.now()));
      const rows = await timelineOf(sessionId);
      client.close();
      return rows.filter((r) => r.kind === "RECORDING_STOPPED");
    };
    // One part of half a second at 16 kHz stereo is 32,000 bytes: the second does not fit.
    const [stopped, control] = await Promise.all([run(40_000), run(undefined)]);
    expect(stopped).toEqual([
      expect.objectContaining({
        detail: { recording: "audio", reason: "budget", bytes: 32_000, maxBytes: 40_000 },
      }),
    ]);
    expect(control).toEqual([]);
  }, 30_000);
});

/** A call placed to `to`, with `record` in its voice URL as a number's webhook would have it. */
async function placeRecordedCall(to: string, record: string) {
  const call = new TwilioCallStandIn({
    transport: fetcherTransport(exports.default),
    allowInsecureStream: true,
  });
  const knobs = encodeURIComponent("timeScale=0&msPerWord=30&vad=energy&calls=greeting:;*:");
  const placed = await call.placeCall({
    baseUrl: BASE,
    voiceUrl: `${BASE}/v1/telephony/twilio/voice?simulator=${knobs}&record=${record}`,
    authToken: env.TWILIO_AUTH_TOKEN as string,
    from: "+15550001111",
    to,
  });
  return { call, sessionId: placed.streamUrl.split("/").at(-1)! };
}

/** A key's DTMF tone on the line (μ-law 8 kHz, 200 ms), as a phone sends it before the event. */
const KEY_TONE = pcm16ToMulaw(
  sine(941, 8000, 1600, 9000).map(
    (v, i) => v + Math.round(9000 * Math.sin((2 * Math.PI * 1336 * i) / 8000)) / 2,
  ),
);

describe("a recorded phone call", () => {
  const BILLING_LINE = "+15550002000"; // keypad: "tools"
  const GREETER_LINE = "+15550002222"; // keypad: "said"

  /** The caller speaks, types a key (its tone, then the event), speaks again; hangs up. */
  const keyedCall = async (to: string) => {
    const { call, sessionId } = await placeRecordedCall(to, "audio");
    await sleep(200);
    const speech = pcm16ToMulaw(sine(300, 8000, 4000, 3000)); // 500 ms, quieter than the key
    await call.sendAudio(speech, { realTime: true });
    await call.sendAudio(KEY_TONE, { realTime: true });
    call.sendDtmf("7");
    await call.sendAudio(speech, { realTime: true });
    await sleep(100);
    call.hangUp();
    // The key's tone is the only sound above the speech's level on the heard track.
    const wav = await wavOf(sessionId, (w) => loudRuns(w.heard, 1000, 800).length > 0);
    expect(wav).toMatchObject({ rate: 8000, channels: 2 });
    // In ms: the key's tone (a run may be split by the line's jitter).
    return loudRuns(wav.heard, 4000, 80).reduce((n, [a, b]) => n + (b - a) / 8, 0);
  };

  it("a PIN digit typed to a keypad-tools agent is silent; typed to a keypad-said one it is kept (control)", async () => {
    const [kept, silenced] = await Promise.all([keyedCall(GREETER_LINE), keyedCall(BILLING_LINE)]);
    expect(kept).toBeGreaterThan(150);
    expect(silenced).toBe(0);
  }, 30_000);

  it("its agent's announcement is the model's first line, and both recordings are kept", async () => {
    const { call, sessionId } = await placeRecordedCall(RECORDED_LINE, "");
    const deadline = Date.now() + 5000;
    let first: { kind: string; text?: string } | undefined;
    while (Date.now() < deadline) {
      const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
        headers: withKey(),
      });
      first = ((await res.json()) as { events: { kind: string; text?: string }[] }).events.find(
        (e) => e.kind === "user",
      );
      if (first !== undefined) break;
      await sleep(50);
    }
    expect(first?.text).toContain(`word for word: "${RECORDED_ANNOUNCEMENT}"`);
    call.hangUp();
    await sleep(200);
    expect((await recordingRes(sessionId)).status).toBe(200);
    expect((await recordingRes(sessionId, "?kind=wire")).status).toBe(200);
  }, 15_000);
});

describe("a wire recording", () => {
  it("holds every frame each way and the durable frames as the log has them; no secret in it", async () => {
    const { sessionId, client } = await recordedSession(
      { wire: true },
      { calls: "greeting:suggest_topics" },
    );
    // A line that carries a secret of the Worker's: it must not reach the recording.
    client.send({ type: "text", text: `hi, my code is ${TOKEN_SECRET}` });
    for (;;) {
      const f = await client.next(5000);
      if (f.type === "tool_call")
        client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
      if (f.type === "turn_complete") break;
    }
    await end(sessionId);
    await sleep(200);
    const res = await recordingRes(sessionId, "?kind=wire");
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(TOKEN_SECRET);
    expect(text).not.toContain(env.API_KEY as string);
    expect(text).toContain("[redacted]");
    const [header, ...lines] = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(header).toMatchObject({ liveline: "wire-recording", sessionId, provider: "simulator" });
    const entries = lines.map((l) => WireEntry.parse(l));
    const dirs = new Set(entries.map((e) => e.dir));
    for (const dir of [
      "client_connected",
      "client",
      "model_open",
      "to_model",
      "from_model",
      "durable",
    ])
      expect(dirs, dir).toContain(dir);
    const history = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
      headers: withKey(),
    });
    const seqs = ((await history.json()) as { events: { seq: number }[] }).events.map((e) => e.seq);
    const durable = entries.flatMap((e) => (e.dir === "durable" ? [e.frame.seq] : []));
    expect(durable).toEqual(seqs);
    client.close();
  }, 20_000);
});

describe("retention", () => {
  it("a recording past its expiry answers 410 and is deleted (control: before it, 200)", async () => {
    const { sessionId, client } = await recordedSession({ audio: true });
    await speak(client, 200);
    await end(sessionId);
    await wavOf(sessionId, (w) => w.heard.some((v) => v !== 0));
    expect((await recordingRes(sessionId)).status).toBe(200);
    // As RECORDING_RETENTION_DAYS would have written it, a manifest whose day has passed.
    const bucket = env.RECORDINGS as R2Bucket;
    const key = `sessions/${sessionId}/audio.json`;
    const manifest = (await (await bucket.get(key))!.json()) as Record<string, unknown>;
    await bucket.put(key, JSON.stringify({ ...manifest, expiresAt: "2020-01-01T00:00:00.000Z" }));
    const expired = await recordingRes(sessionId);
    expect(expired.status).toBe(410);
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe(
      "recording_expired",
    );
    expect((await bucket.list({ prefix: `sessions/${sessionId}/` })).objects).toEqual([]);
    client.close();
  }, 15_000);
});

describe("GET /v1/sessions/:id/recording, refused", () => {
  it("another session's recording with a session token (401), none kept (404), a bad kind (400)", async () => {
    const a = await recordedSession({ audio: true });
    const b = await recordedSession({});
    await speak(a.client, 200);
    await end(a.sessionId);
    // A's own token reads A's recording (once written)…
    const own = await recordingRes(a.sessionId, `?token=${a.token}`, {});
    expect([200, 404]).toContain(own.status);
    // …B's token never reads A's.
    const other = await recordingRes(a.sessionId, `?token=${b.token}`, {});
    expect(other.status).toBe(401);
    const none = await recordingRes(b.sessionId);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("no_recording");
    expect((await recordingRes(a.sessionId, "?kind=video")).status).toBe(400);
    const post = await exports.default.fetch(`${BASE}/v1/sessions/${a.sessionId}/recording`, {
      method: "POST",
      headers: withKey(),
    });
    expect(post.status).toBe(405);
    a.client.close();
    b.client.close();
  }, 15_000);
});
