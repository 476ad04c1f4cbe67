/**
 * The demo page in real Chromium (Debian's, driven by playwright-core), served by wrangler
 * dev with the simulator: a greeting and its chips, a chip clicked, the connection dropped
 * from the page and resumed with no duplicate and no gap, a voice turn from a fake
 * microphone (a WAV spoken by espeak-ng, or a tone), and screenshots of the page and the
 * timeline viewer (test-results/browser/).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { history, ROOT, startServer } from "../../scripts/lib/harness.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OUT = join(ROOT, "test-results/browser");

/** A spoken line for the fake microphone: espeak-ng when installed, else a tone from sox. */
function microphoneWav() {
  const wav = join(OUT, "microphone.wav");
  const spoken = spawnSync("espeak-ng", ["-w", wav, "what are your opening hours"]);
  if (spoken.status === 0) return wav;
  const tone = spawnSync("sox", ["-n", "-r", "16000", "-c", "1", wav, "synth", "2", "sine", "440"]);
  if (tone.status !== 0) throw new Error("neither espeak-ng nor sox could make a WAV");
  return wav;
}

let server;
let browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs it`);
  mkdirSync(OUT, { recursive: true });
  server = await startServer();
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
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const turnEnds = (events) =>
  events.filter((e) => e.type === "turn_complete" || e.type === "interrupted");

describe("the demo page in Chromium", () => {
  it("greets once with three chips, takes a chip, resumes a dropped connection, takes a voice turn", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (err) => problems.push(String(err)));
    await page.goto(`${server.base}/?simulator=${encodeURIComponent("timeScale=0.2")}`);
    await page.waitForFunction(() => document.body.dataset.status === "live", null, {
      timeout: 20_000,
    });
    const events = () => page.evaluate(() => window.livelineEvents);
    const waitTurns = (n) =>
      page.waitForFunction(
        (count) =>
          window.livelineEvents.filter(
            (e) => e.type === "turn_complete" || e.type === "interrupted",
          ).length >= count,
        n,
        { timeout: 20_000 },
      );

    // Hello: exactly one greeting, and the three chips suggest_topics asked for.
    await page.fill("#line", "hello");
    await page.press("#line", "Enter");
    await waitTurns(1);
    await page.waitForSelector(".chip");
    expect(await page.locator("#transcript li.model").count()).toBe(1);
    expect(await page.locator("#transcript li.model").first().textContent()).toMatch(/^Hello!/);
    expect(await page.locator(".chip").count()).toBe(3);

    // A chip is sent as the user's line.
    const chip = await page.locator(".chip").first().textContent();
    await page.locator(".chip").first().click();
    await waitTurns(2);
    expect(await page.locator("#transcript li.user").nth(1).textContent()).toBe(chip);

    // Dropped from the page mid-turn: it resumes, with no duplicate and no gap.
    await page.fill("#line", "tell me something long please");
    await page.press("#line", "Enter");
    await page.waitForFunction(() => window.livelineEvents.at(-1)?.type === "text");
    await page.click("#drop");
    await page.waitForFunction(() => document.body.dataset.status === "reconnecting");
    await page.waitForFunction(() => document.body.dataset.status === "live", null, {
      timeout: 20_000,
    });
    await waitTurns(3);

    // The microphone: a voice turn (its user line is the model's transcription).
    await page.click("#mic");
    await page.waitForTimeout(2_000);
    await page.click("#mic"); // stop: audio_end
    await page.waitForFunction(
      () => window.livelineEvents.some((e) => e.type === "user" && e.turnId === "t4"),
      null,
      { timeout: 20_000 },
    );
    await waitTurns(4);

    const seen = await events();
    const sessionId = await page.evaluate(() => sessionStorage.getItem("liveline.session"));
    const log = await history(server, sessionId);
    // Every durable frame once, in order, as the log has it.
    expect(seen.map((e) => e.seq)).toEqual(log.map((e) => e.seq));
    expect(turnEnds(seen)).toHaveLength(4);
    // The transcript shows each reply once.
    const replies = await page.locator("#transcript li.model").allTextContents();
    expect(new Set(replies).size).toBe(replies.length);
    expect(problems).toEqual([]);
    await page.screenshot({ path: join(OUT, "demo.png"), fullPage: true });

    // Same browser context: the timeline tab finds the session's grant in localStorage.
    const timeline = await context.newPage();
    await timeline.goto(`${server.base}/timeline.html?session=${sessionId}`);
    await timeline.waitForFunction(() => document.body.dataset.loaded === "true");
    expect(await timeline.locator("section.turn").count()).toBeGreaterThanOrEqual(4);
    expect(await timeline.locator('tr[data-kind="TOOL_CALL"]').count()).toBeGreaterThan(0);
    await timeline.screenshot({ path: join(OUT, "timeline.png"), fullPage: true });
    expect(
      await timeline.locator("td.kind", { hasText: "tool result (silent)" }).count(),
    ).toBeGreaterThan(0);
    console.log(`browser: ${seen.length} frames, screenshots in ${OUT}`);
  }, 180_000);

  it("plays the model's speech (24 kHz PCM16 through the jitter buffer)", async () => {
    const page = await browser.newPage();
    await page.goto(
      `${server.base}/?simulator=${encodeURIComponent("modality=AUDIO&timeScale=0.2")}`,
    );
    await page.waitForFunction(() => document.body.dataset.status === "live", null, {
      timeout: 20_000,
    });
    await page.fill("#line", "hello");
    await page.press("#line", "Enter");
    await page.waitForFunction(
      () => window.livelineEvents.some((e) => e.type === "turn_complete"),
      null,
      { timeout: 20_000 },
    );
    // Audio came as binary frames and is playing (or has played) through the page's player.
    await page.waitForFunction(() => (window.livelinePlayer?.receivedMs ?? 0) > 500, null, {
      timeout: 10_000,
    });
    // …and the audio output runs (autoplay allowed): what was scheduled is played.
    expect(await page.evaluate(() => window.livelinePlayer.running)).toBe(true);
    // The spoken reply is in the transcript too (transcript frames).
    expect(await page.locator("#transcript li.model").count()).toBe(1);
  }, 60_000);
});
