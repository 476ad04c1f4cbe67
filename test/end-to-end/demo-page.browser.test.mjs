/**
 * The demo page in real Chromium (Debian's, driven by playwright-core), served by wrangler
 * dev with the simulator as people meet it (no answer tags): a greeting with no word typed,
 * a question answered by a tool in words, its chips, a chip clicked, the connection dropped
 * from the page and resumed with no duplicate and no gap, a push-to-talk voice turn from a
 * fake microphone (a WAV spoken by espeak-ng, or a tone), a phone call from the call view
 * through the carrier stand-in, and screenshots of the page, the call and the timeline viewer
 * (test-results/browser/). The gateway is the browser project's (test/end-to-end/browser-gateway-setup.mjs).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY, history, ROOT } from "../../scripts/lib/harness.mjs";
import { sharedGateway } from "../support/shared-gateway.mjs";

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
  // The project's gateway (test/end-to-end/browser-gateway-setup.mjs), its call view's webhook signed;
  // its answers as people see them, without the tests' tags (one test turns them on).
  server = await sharedGateway();
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
});

const turnEnds = (events) =>
  events.filter((e) => e.type === "turn_complete" || e.type === "interrupted");

/** How many times each user turn of a session's record has ended. */
function endsByTurn(log) {
  const ends = new Map();
  for (const e of log)
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId, (ends.get(e.turnId) ?? 0) + 1);
  return ends;
}

/** The record once it holds `users` user turns and every one of them has ended. */
async function settledHistory(sessionId, users, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await history(server, sessionId);
    const lines = log.filter((e) => e.kind === "user");
    const ends = endsByTurn(log);
    if (lines.length >= users && lines.every((e) => ends.has(e.turnId))) return log;
    if (Date.now() > deadline)
      throw new Error(`not ${users} ended turns within ${timeoutMs} ms: ${JSON.stringify(log)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The caller has heard a reply through: more than `sinceMs` played, nothing left queued. */
const heardThrough = (page, sinceMs) =>
  page.waitForFunction(
    (since) => window.livelineCall.heardMs() > since + 300 && window.livelineCall.queuedMs() === 0,
    sinceMs,
    { timeout: 15_000 },
  );
const heardMs = (page) => page.evaluate(() => window.livelineCall.heardMs());

/** The page's words, hidden ones too (a stricter check than what is on screen). */
const pageText = (page) => page.evaluate(() => document.body.textContent);

describe("the demo page in Chromium", () => {
  it("greets with no word typed, and answers the opening hours from its FAQ tool in words: no tags, no JSON", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.base}/?simulator=${encodeURIComponent("timeScale=0.2")}`);
    // The greeting, with nothing typed: no line of the user's on the page.
    await page.waitForFunction(
      () => document.querySelector("#transcript li.model")?.textContent.startsWith("Hello!"),
      null,
      { timeout: 20_000 },
    );
    expect(await page.locator("#transcript li.user").count()).toBe(0);
    // The simulator has no voice: the page says so rather than promising one.
    await page.waitForSelector("#notice:not([hidden])");
    expect(await page.locator("#notice").textContent()).toMatch(/no voice/);

    await page.fill("#line", "What are your opening hours?");
    await page.press("#line", "Enter");
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll("#transcript li.model")].some((li) =>
          li.textContent.includes("We are open Monday to Friday, 9:00 to 17:00"),
        ),
      null,
      { timeout: 20_000 },
    );
    const events = await page.evaluate(() => window.livelineEvents);
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.name)).toContain("lookup_faq");
    const text = await pageText(page);
    expect(text).not.toContain("[#r");
    expect(text).not.toMatch(/[{}]|":/);
    // Control: the same page with the tests' answer tags on shows them (the check can fail).
    const tagged = await context.newPage();
    await tagged.goto(
      `${server.base}/?simulator=${encodeURIComponent("timeScale=0&answerTags=1")}`,
    );
    await tagged.waitForFunction(() => document.body.textContent.includes("[#r1]"), null, {
      timeout: 20_000,
    });
    await context.close();
  }, 60_000);

  it("its Model switch reaches each of the simulator's wires without a key", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.base}/?simulator=${encodeURIComponent("timeScale=0.1")}`);
    await page.waitForSelector("#wire-pick:not([hidden])");
    for (const [wire, model] of [
      ["openai", "gpt-realtime"],
      ["gpt-live", "gpt-live-1"],
    ]) {
      await page.selectOption("#wire", wire);
      await page.waitForURL(new RegExp(`wire=${wire}`));
      await page.waitForFunction(
        () => document.querySelector("#transcript li.model")?.textContent.startsWith("Hello!"),
        null,
        { timeout: 20_000 },
      );
      await page.fill("#line", "What are your opening hours?");
      await page.press("#line", "Enter");
      await page.waitForFunction(
        () => document.body.textContent.includes("We are open Monday to Friday"),
        null,
        { timeout: 20_000 },
      );
      const sessionId = await page.evaluate(() => sessionStorage.getItem("liveline.session"));
      const described = await fetch(`${server.base}/v1/sessions/${sessionId}`, {
        headers: { Authorization: `Bearer ${API_KEY}` },
      }).then((r) => r.json());
      expect(described.model, wire).toBe(model);
      expect(await page.locator("#wire").inputValue()).toBe(wire);
    }
    await context.close();
  }, 60_000);

  it("greets once with three chips, takes a chip, resumes a dropped connection, takes a push-to-talk voice turn", async () => {
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

    // Opened: exactly one greeting, and the three chips suggest_topics asked for — questions
    // the model can answer, not placeholders.
    await waitTurns(1);
    await page.waitForSelector(".chip");
    expect(await page.locator("#transcript li.model").count()).toBe(1);
    expect(await page.locator("#transcript li.model").first().textContent()).toMatch(/^Hello!/);
    expect(await page.locator(".chip").allTextContents()).toEqual([
      "What are your opening hours?",
      "How much does the team plan cost?",
      "What can you do?",
    ]);

    // A chip is sent as the user's line, and answered.
    const chip = await page.locator(".chip").first().textContent();
    await page.locator(".chip").first().click();
    await waitTurns(2);
    expect(await page.locator("#transcript li.user").first().textContent()).toBe(chip);

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

    // Push-to-talk: held for two seconds, then let go (audio_end); its user line is the
    // model's transcription.
    await page.hover("#mic");
    await page.mouse.down();
    await page.waitForFunction(() => document.querySelector("#mic").ariaPressed === "true");
    await page.waitForTimeout(2_000);
    await page.mouse.up();
    expect(await page.locator("#mic").getAttribute("aria-pressed")).toBe("false");
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
    // No two labels of a lane overlap (a newcomer's screenshot showed them colliding), and
    // none runs past its lane's right edge.
    const collisions = await timeline.evaluate(() => {
      const found = [];
      for (const lane of document.querySelectorAll(".lane")) {
        const edge = lane.getBoundingClientRect().right + 1;
        const boxes = [...lane.querySelectorAll(".mark span")].map((s) => ({
          text: s.textContent,
          r: s.getBoundingClientRect(),
        }));
        for (const [i, a] of boxes.entries()) {
          if (a.r.right > edge) found.push(`${a.text} past the edge`);
          for (const b of boxes.slice(i + 1))
            if (
              a.r.left < b.r.right &&
              b.r.left < a.r.right &&
              a.r.top < b.r.bottom &&
              b.r.top < a.r.bottom
            )
              found.push(`${a.text} / ${b.text}`);
        }
      }
      return found;
    });
    expect(collisions).toEqual([]);
    // Each turn shows its cost (the simulator's model is priced) and its latencies.
    const figures = await timeline.locator("section.turn .figures").allTextContents();
    expect(figures.some((f) => /\$\d/.test(f) && /turn \d+ ms/.test(f))).toBe(true);
    expect(await timeline.locator("#legend").textContent()).toMatch(/cost \$\d.*p50/);
    // ...and draws them: a bar for each typed turn's wait for its first byte, one per tool run.
    expect(await timeline.locator(".lane .bar.model").count()).toBeGreaterThan(0);
    expect(await timeline.locator(".lane .bar.tool").count()).toBeGreaterThan(0);
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
    // The greeting, with nothing typed.
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

  it("places a phone call through the carrier stand-in: greeted, spoken over, asked by voice, a key, hung up", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (err) => problems.push(String(err)));
    // Short words (the line plays them at real pace) and the lookup on the question's turn.
    const knobs = "timeScale=0.2&msPerWord=100&calls=greeting:;2:lookup_faq;*:";
    await page.goto(`${server.base}/?simulator=${encodeURIComponent(knobs)}#call`);
    await page.waitForFunction(() => document.body.dataset.callState === "idle");
    // The fake microphone says its line over and over: muted until the question.
    await page.click("#call-mute");
    await page.click("#call-dial");
    await page.waitForFunction(() => document.body.dataset.callState === "connected", null, {
      timeout: 10_000,
    });
    const sessionId = await page.evaluate(() => document.body.dataset.callSession);
    expect(await page.locator("#call-session a").getAttribute("href")).toBe(
      `/timeline?session=${sessionId}`,
    );

    // The greeting plays at the line's pace; the caller speaks over it: the gateway's clear
    // stops it on the line and in the speakers at once.
    await page.waitForFunction(() => window.livelineCall.heardMs() > 400, null, {
      timeout: 10_000,
    });
    await page.waitForFunction(() => document.body.dataset.callMic === "on");
    await page.click("#call-mute");
    const spoke = Date.now();
    // (callClears: the page has seen the clear and stopped its speakers.)
    await page.waitForFunction(() => Number(document.body.dataset.callClears) > 0, null, {
      timeout: 5_000,
    });
    const cleared = await page.evaluate(() => ({
      queuedMs: window.livelineCall.queuedMs(),
      speakersMs: window.livelineCallPlayer.bufferedMs,
      heardMs: window.livelineCall.heardMs(),
    }));
    expect(cleared).toMatchObject({ queuedMs: 0, speakersMs: 0 });
    // The rest of the question, then the line quiet again: the answer is heard through.
    await page.waitForTimeout(Math.max(0, 2_000 - (Date.now() - spoke)));
    await page.click("#call-mute");
    await settledHistory(sessionId, 2);
    await heardThrough(page, cleared.heardMs);
    const answered = await heardMs(page);

    // A key: its line is answered too.
    await page.click('#keypad button[data-digit="5"]');
    const keyed = await settledHistory(sessionId, 3);
    await heardThrough(page, answered);
    expect(keyed.some((e) => e.kind === "user" && /key 5 pressed/.test(e.text))).toBe(true);
    expect(await page.locator("#call-status").textContent()).toMatch(/^Connected · heard \d/);
    await page.screenshot({ path: join(OUT, "call.png"), fullPage: true });

    await page.click("#call-hangup");
    await page.waitForFunction(() => document.body.dataset.callState === "ended");
    expect(await page.locator("#call-status").textContent()).toMatch(/^Call ended by you/);
    const call = await page.evaluate(() => ({
      endedBy: document.body.dataset.callEndedBy,
      violations: Number(document.body.dataset.callViolations),
      heardMs: Number(document.body.dataset.callHeardMs),
      // What reached the speakers: the line's audio, decoded from μ-law.
      playedMs: window.livelineCallPlayer.receivedMs,
    }));
    expect(call).toMatchObject({ endedBy: "caller", violations: 0 });
    expect(call.playedMs).toBeGreaterThan(call.heardMs - 100);

    const log = await history(server, sessionId);
    const lines = log.filter((e) => e.kind === "user");
    expect(lines[0].text).toMatch(/caller is on the line/);
    // Every turn of the call ended exactly once, none with an error.
    const ends = endsByTurn(log);
    for (const line of lines) expect(ends.get(line.turnId), line.text).toBe(1);
    expect(log.filter((e) => e.kind === "error")).toEqual([]);
    expect(log.filter((e) => e.kind === "tool_call").map((e) => e.name)).toEqual(["lookup_faq"]);
    expect(problems).toEqual([]);

    // The call is over, and its timeline still opens (with the token the call view kept).
    const timeline = await context.newPage();
    await timeline.goto(`${server.base}/timeline?session=${sessionId}`);
    await timeline.waitForFunction(() => document.body.dataset.loaded === "true");
    expect(await timeline.locator("section.turn").count()).toBeGreaterThanOrEqual(3);
    await context.close();
  }, 60_000);
});
