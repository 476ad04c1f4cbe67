/**
 * Recordings, end to end, on the browser project's gateway (test/end-to-end/browser-gateway-setup.mjs):
 * a recorded browser session and a recorded phone call played back in the timeline viewer in
 * real Chromium (the model's speech where its rows are, within 50 ms; a PIN typed to a
 * keypad-tools agent silent, a key typed to a keypad-said one kept: the control); the wire
 * fixtures under test/fixtures/recordings/ replayed (`npm run replay`), the duplicate-prone one
 * also against the naive relay (the control: the call runs twice); and `npm run check:live`
 * against the simulator through the real adapters, printing its tables. The four run at once
 * (each waits on sockets, the browser and real-time audio, not the CPU).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, history, ROOT } from "../../scripts/lib/harness.mjs";
import { readWireRecording, replay } from "../../scripts/lib/replay.mjs";
import { sharedGateway } from "../support/shared-gateway.mjs";
import { PLACEHOLDER_KEY } from "./browser-gateway-setup.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OUT = join(ROOT, "test-results/browser");
const FIXTURES = join(ROOT, "test/fixtures/recordings");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A spoken line for the fake microphone (espeak-ng, else a tone from sox). */
function microphoneWav() {
  const wav = join(OUT, "recorded-microphone.wav");
  if (spawnSync("espeak-ng", ["-w", wav, "what are your opening hours"]).status === 0) return wav;
  const tone = spawnSync("sox", ["-n", "-r", "16000", "-c", "1", wav, "synth", "2", "sine", "440"]);
  if (tone.status !== 0) throw new Error("neither espeak-ng nor sox could make a WAV");
  return wav;
}

let server;
let browser;
beforeAll(async () => {
  server = await sharedGateway();
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it`);
  mkdirSync(OUT, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${microphoneWav()}`,
      "--autoplay-policy=no-user-gesture-required",
    ],
  });
}, 200_000);
afterAll(async () => {
  await browser?.close();
});

/**
 * Opens the session's timeline in `context` and reads its recording in the page: the WAV's
 * rate, where each track is loud (runs of ms), and the rows a click plays from.
 */
async function viewerOf(context, sessionId) {
  const page = await context.newPage();
  await page.goto(`${server.base}/timeline.html?session=${sessionId}`);
  await page.waitForFunction(() => document.body.dataset.loaded === "true", null, {
    timeout: 15_000,
  });
  expect(await page.evaluate(() => document.body.dataset.recording)).toBe("loaded");
  const read = await page.evaluate(async () => {
    const bytes = await window.livelineRecording.blob.arrayBuffer();
    const view = new DataView(bytes);
    const channels = view.getUint16(22, true);
    const rate = view.getUint32(24, true);
    const samples = new Int16Array(bytes, 44, (bytes.byteLength - 44) / 2);
    /** Runs of a channel louder than `floor`, as [fromMs, toMs], gaps under `gapMs` joined. */
    const runs = (channel, floor, gapMs) => {
      const out = [];
      const gap = (gapMs * rate) / 1000;
      for (let i = channel; i < samples.length; i += channels) {
        if (Math.abs(samples[i]) <= floor) continue;
        const at = (i - channel) / channels;
        const last = out.at(-1);
        if (last !== undefined && at - last[1] <= gap) last[1] = at + 1;
        else out.push([at, at + 1]);
      }
      return out.map(([a, b]) => [(a * 1000) / rate, (b * 1000) / rate]);
    };
    const rows = [...document.querySelectorAll("tr.seek")].map((tr) => ({
      kind: tr.dataset.kind,
      ms: Number(tr.dataset.ms),
    }));
    return {
      rate,
      channels,
      heard: runs(0, 1000, 60),
      said: runs(1, 300, 60),
      rows,
    };
  });
  return { page, ...read };
}

/** Runs a script of this repository with Node (as npm runs it); its exit code and output. */
function node(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.on("exit", (code) => resolve({ code, out }));
  });
}

/** Waits until the session's recording (read with the API key) holds `replies` replies. */
async function recordingHolds(sessionId, replies) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await fetch(`${server.base}/v1/sessions/${sessionId}/recording`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    if (res.ok) {
      const bytes = new Uint8Array(await res.arrayBuffer());
      const samples = new Int16Array(bytes.buffer, 44, (bytes.length - 44) >> 1);
      let runs = 0;
      let quiet = Number.POSITIVE_INFINITY;
      for (let i = 1; i < samples.length; i += 2) {
        if (Math.abs(samples[i]) > 300) {
          if (quiet > 1600) runs++;
          quiet = 0;
        } else quiet++;
      }
      if (runs >= replies) return;
    }
    if (Date.now() > deadline) throw new Error(`the recording never held ${replies} replies`);
    await sleep(250);
  }
}

/**
 * Each MODEL_AUDIO row whose moment the said track was quiet before: the offset from its row
 * to where the said track begins to sound (what the viewer's click would play).
 */
function replyOffsets(viewer) {
  const offsets = [];
  for (const row of viewer.rows.filter((r) => r.kind === "MODEL_AUDIO")) {
    const busy = viewer.said.some(([from, to]) => from < row.ms - 80 && to > row.ms - 80);
    if (busy) continue; // the reply before still played: this one was queued after it
    const onset = viewer.said.find(([from]) => from >= row.ms - 80);
    offsets.push(onset === undefined ? Number.POSITIVE_INFINITY : onset[0] - row.ms);
  }
  return offsets;
}

/** How many user turns a log holds. */
const userTurns = (log) => log.filter((e) => e.kind === "user").length;

/** A click on the row plays the recording from its moment. */
async function clickPlays(page, kind) {
  const row = page.locator(`tr.seek[data-kind="${kind}"]`).first();
  const ms = Number(await row.getAttribute("data-ms"));
  await row.click();
  await page.waitForFunction(() => !window.livelineRecording.audio.paused, null, {
    timeout: 5000,
  });
  const at = await page.evaluate(() => window.livelineRecording.audio.currentTime * 1000);
  expect(Math.abs(at - ms)).toBeLessThan(300);
}

describe("recordings in the timeline viewer (Chromium)", () => {
  it.concurrent("a recorded browser session: heard and said on the timeline's clock, a row's click plays from its moment", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const knobs = "modality=AUDIO&timeScale=0.2&msPerWord=40";
    await page.goto(`${server.base}/?record=1&simulator=${encodeURIComponent(knobs)}`);
    await page.waitForFunction(() => document.body.dataset.status === "live", null, {
      timeout: 20_000,
    });
    const turnsEnded = (n) =>
      page.waitForFunction(
        (count) =>
          window.livelineEvents.filter(
            (e) => e.type === "turn_complete" || e.type === "interrupted",
          ).length >= count,
        n,
        { timeout: 20_000 },
      );
    const played = async () => {
      await page.waitForFunction(() => (window.livelinePlayer?.bufferedMs ?? 0) === 0, null, {
        timeout: 15_000,
      });
      await page.waitForTimeout(200);
    };
    // The greeting, with no word typed (its speech played); a push-to-talk voice turn from
    // the microphone (held 1.5 s), then (its answer played) a typed one.
    await turnsEnded(1);
    await played();
    await page.hover("#mic");
    await page.mouse.down();
    await page.waitForFunction(() => document.getElementById("mic").ariaPressed === "true");
    await page.waitForTimeout(1500);
    await page.mouse.up();
    await turnsEnded(2);
    await played();
    await page.fill("#line", "hello");
    await page.press("#line", "Enter");
    await turnsEnded(3);
    const sessionId = await page.evaluate(() => sessionStorage.getItem("liveline.session"));
    // The session goes on: its recording is written a part (a second here) behind it.
    await recordingHolds(sessionId, 3);
    const viewer = await viewerOf(context, sessionId);
    expect(viewer).toMatchObject({ rate: 16000, channels: 2 });
    // What it heard: the microphone's line; what it said: each reply where its row is.
    expect(viewer.heard.length).toBeGreaterThan(0);
    const offsets = replyOffsets(viewer);
    expect(offsets.length).toBe(3);
    for (const offset of offsets) expect(Math.abs(offset)).toBeLessThanOrEqual(50);
    await clickPlays(viewer.page, "MODEL_AUDIO");
    await viewer.page.screenshot({ path: join(OUT, "timeline-recorded.png"), fullPage: true });
    console.log(`browser session: reply offsets ${offsets.map((o) => o.toFixed(1)).join(", ")} ms`);
    await context.close();
  }, 90_000);

  it.concurrent("a recorded call: a PIN typed to keypad-tools billing is silent, a key typed to the greeter is kept (control)", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // The keys' tones are no speech to the simulator (its energy threshold above them).
    const knobs = "timeScale=0.2&msPerWord=30&calls=greeting:;*:&vadThreshold=20000";
    await page.goto(
      `${server.base}/?record=1&keytones=1&simulator=${encodeURIComponent(knobs)}#call`,
    );
    await page.waitForFunction(() => document.body.dataset.callState === "idle");
    // Muted: the line carries silence, so only the keys' tones are loud on the heard track.
    await page.click("#call-mute");
    await page.click("#call-dial");
    await page.waitForFunction(() => document.body.dataset.callState === "connected", null, {
      timeout: 10_000,
    });
    const sessionId = await page.evaluate(() => document.body.dataset.callSession);
    await page.waitForFunction(() => document.body.dataset.callMic === "on");
    const heardThrough = async (users) => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const log = await history(server, sessionId);
        const ended = new Set(
          log
            .filter((e) => e.kind === "turn_complete" || e.kind === "interrupted")
            .map((e) => e.turnId),
        );
        const lines = log.filter((e) => e.kind === "user");
        if (lines.length >= users && lines.every((e) => ended.has(e.turnId))) break;
        if (Date.now() > deadline)
          throw new Error(`not ${users} ended turns: ${JSON.stringify(log)}`);
        await sleep(100);
      }
      await page.waitForFunction(() => window.livelineCall.queuedMs() === 0, null, {
        timeout: 15_000,
      });
      await sleep(300);
    };
    await heardThrough(1);
    // The greeter hears keys (keypad "said"): its key stays in the recording (the control).
    const keptAt = Date.now();
    await page.click('#keypad button[data-digit="5"]');
    await sleep(260);
    await page.click('#keypad button[data-digit="#"]');
    await heardThrough(2);
    // To billing, whose keypad is "tools": the PIN is silent in the recording.
    const handoff = await fetch(`${server.base}/v1/sessions/${sessionId}/handoff`, {
      method: "POST",
      headers: { Authorization: `Bearer ${API_KEY}`, "Content-Type": "application/json" },
      body: JSON.stringify({ agent: "billing", reason: "the caller's invoice" }),
    });
    expect(handoff.status).toBe(202);
    const handedOff = Date.now() + 10_000;
    for (;;) {
      const log = await history(server, sessionId);
      const at = log.findIndex((e) => e.kind === "handoff" && e.to === "billing");
      if (at !== -1 && log.slice(at).some((e) => e.kind === "status" && e.state === "live")) break;
      if (Date.now() > handedOff) throw new Error(`no handoff: ${JSON.stringify(log)}`);
      await sleep(100);
    }
    const beforePin = userTurns(await history(server, sessionId));
    await heardThrough(beforePin);
    for (const digit of ["1", "2", "#"]) {
      await page.click(`#keypad button[data-digit="${digit}"]`);
      await sleep(260);
    }
    await heardThrough(beforePin + 1);
    const log = await history(server, sessionId);
    const lines = log.filter((e) => e.kind === "user").map((e) => e.text);
    expect(lines).toContain("(key 5 pressed on the phone)");
    expect(lines.at(-1)).toMatch(/typed 2 keys/);
    await page.click("#call-hangup");
    await page.waitForFunction(() => document.body.dataset.callState === "ended");
    await sleep(500);
    const viewer = await viewerOf(context, sessionId);
    expect(viewer).toMatchObject({ rate: 8000, channels: 2 });
    // The greeter's two keys' tones on the heard track (5 and #, about 200 ms each; a tone may
    // come in pieces, as the line's chunks came), all before the handoff on the recording's
    // clock (the timeline's): the PIN's three, typed to billing after it, left nothing. How
    // much of each tone is heard is the machine's: a loaded one sheds the oldest audio (seen:
    // the 5 kept for 21 ms), and spaces the two keys 1.5 s apart where they were 260 ms.
    const loud = viewer.heard.reduce((n, [a, b]) => n + b - a, 0);
    const seen = JSON.stringify(viewer.heard.map(([a, b]) => [Math.round(a), Math.round(b)]));
    expect(loud, seen).toBeGreaterThan(0);
    expect(loud, seen).toBeLessThan(600);
    const timeline = await fetch(`${server.base}/v1/sessions/${sessionId}/timeline`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    }).then((r) => r.json());
    const handoffMs = timeline.rows.find(
      (r) => r.kind === "HANDOFF" && JSON.stringify(r).includes("billing"),
    )?.ms;
    expect(handoffMs, JSON.stringify(timeline.rows.map((r) => r.kind))).toBeGreaterThan(0);
    for (const [, to] of viewer.heard)
      expect(to, `${seen} handoff at ${handoffMs}`).toBeLessThan(handoffMs);
    const offsets = replyOffsets(viewer);
    expect(offsets.length).toBeGreaterThanOrEqual(2);
    for (const offset of offsets) expect(Math.abs(offset)).toBeLessThanOrEqual(50);
    await clickPlays(viewer.page, "MODEL_AUDIO");
    console.log(
      `call: keys 5# kept (${loud.toFixed(0)} ms, ${Date.now() - keptAt} ms ago; heard ${seen}, the handoff at ${handoffMs} ms), PIN silent; reply offsets ${offsets.map((o) => o.toFixed(1)).join(", ")} ms`,
    );
    await context.close();
  }, 120_000);
});

describe("wire recordings replayed (npm run replay)", () => {
  const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith(".wire.jsonl"));
  const load = (name) => readWireRecording(readFileSync(join(FIXTURES, name), "utf8"));

  it.concurrent("every fixture replays with the same durable frames; the duplicate-prone one against the naive relay runs its call twice (control, by the CLI)", async () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(2);
    const file = join(FIXTURES, "gpt-live-call-delivered-twice.wire.jsonl");
    // `npm run replay -- <file> --naive --base …`: the control, through the CLI.
    const naiveCli = node([
      "--import",
      "./scripts/lib/ts-resolve.mjs",
      "--experimental-strip-types",
      "--no-warnings",
      "scripts/replay.mjs",
      file,
      "--base",
      server.base,
      "--naive",
    ]);
    const results = await Promise.all(fixtures.map((name) => replay(server, load(name))));
    for (const [i, result] of results.entries())
      expect(result.checks, fixtures[i]).toEqual(
        result.checks.map((c) => expect.objectContaining({ check: c.check, held: true })),
      );
    const naive = await naiveCli;
    expect(naive.code, naive.out).toBe(1);
    expect(naive.out).toMatch(/\| every result once\s+\| BROKEN \| run twice: call_/);
    expect(naive.out).toMatch(/\| the same durable frames\s+\| BROKEN/);
  }, 60_000);
});

describe("npm run check:live against the simulator", () => {
  it.concurrent("runs the scenarios through the gemini adapter, prints both tables, keeps wires with no key in them", async () => {
    const out = mkdtempSync(join(tmpdir(), "check-live-"));
    const args = [
      "--import",
      "./scripts/lib/ts-resolve.mjs",
      "--experimental-strip-types",
      "--no-warnings",
      "scripts/check-live.mjs",
      "--provider",
      "gemini",
      "--base",
      server.base,
      "--settle",
      "300",
      "--out",
      out,
    ];
    const run = await node(args);
    const printed = run.out;
    expect(run.code, printed).toBe(0);
    for (const scenario of [
      "greeting with fire-and-forget tools",
      "a spoken result",
      "a rebuild",
      "a duplicate-prone turn",
    ])
      expect(printed).toMatch(new RegExp(`\\| ${scenario}[^|]*\\| held`));
    // The stand-in tells its story 50 times faster than speech: on a loaded machine it can end
    // before the typed line reaches the gateway, which check:live then calls "not shown" (by the
    // record's order), never BROKEN; a story cut as it should be is "held".
    expect(printed).toMatch(/\| a barge-in[^|]*\| (held|not shown)/);
    expect(printed).toMatch(/\| the seed itself is not answered[^|]*\| (confirmed|not observed)/);
    const wires = readdirSync(out);
    expect(wires.length).toBe(5);
    for (const wire of wires) {
      const text = readFileSync(join(out, wire), "utf8");
      expect(text).not.toContain(PLACEHOLDER_KEY);
      expect(readWireRecording(text).header.provider).toBe("gemini");
    }
    console.log(printed);
  }, 120_000);
});
