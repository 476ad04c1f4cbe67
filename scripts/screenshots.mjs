#!/usr/bin/env node
// npm run screenshots — the README's pictures, taken from the real page: a `wrangler dev` of
// this repository (the greeter, the built-in simulator as people meet it: no answer tags),
// Debian's Chromium driven by playwright-core. It opens the demo, waits for the greeting (no
// word typed), taps nothing and asks "What are your opening hours?"; then places a call from
// the call view and presses a key; then opens the chat session's timeline. Writes
// examples/greeter/screenshots/{demo,call,timeline}.png. CHROMIUM_PATH overrides
// /usr/bin/chromium.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { ROOT, startServer } from "./lib/harness.mjs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OUT = join(ROOT, "examples/greeter/screenshots");
const VIEWPORT = { width: 1000, height: 640 };
/** Paced as people see it, a little quicker: the pictures do not depend on the pace. */
const KNOBS = encodeURIComponent("timeScale=0.3");
const QUESTION = "What are your opening hours?";

if (!existsSync(CHROMIUM)) {
  console.error(`no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
console.log("starting wrangler dev…");
const server = await startServer({
  answerTags: false,
  vars: { TWILIO_AUTH_TOKEN: "screenshots-twilio-token" },
});
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--use-fake-ui-for-media-stream",
    "--use-fake-device-for-media-stream",
    "--autoplay-policy=no-user-gesture-required",
  ],
});
try {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const ended = (n) =>
    page.waitForFunction(
      (count) =>
        window.livelineEvents.filter((e) => e.type === "turn_complete" || e.type === "interrupted")
          .length >= count,
      n,
      { timeout: 30_000 },
    );

  console.log("the demo: its greeting, then a question");
  await page.goto(`${server.base}/?simulator=${KNOBS}`);
  await ended(1);
  await page.waitForSelector(".chip");
  await page.fill("#line", QUESTION);
  await page.press("#line", "Enter");
  await ended(2);
  await page.screenshot({ path: join(OUT, "demo.png") });
  const sessionId = await page.evaluate(() => sessionStorage.getItem("liveline.session"));

  console.log("the call view: a call placed, greeted, a key pressed");
  const call = await context.newPage();
  await call.goto(`${server.base}/?simulator=${KNOBS}#call`);
  await call.waitForFunction(() => document.body.dataset.callState === "idle");
  await call.click("#call-mute");
  await call.click("#call-dial");
  await call.waitForFunction(() => document.body.dataset.callState === "connected", null, {
    timeout: 20_000,
  });
  await call.waitForFunction(() => window.livelineCall.heardMs() > 1500, null, {
    timeout: 20_000,
  });
  await call.click('#keypad button[data-digit="5"]');
  await call.waitForTimeout(800);
  await call.screenshot({ path: join(OUT, "call.png") });
  await call.click("#call-hangup");

  console.log("the chat session's timeline");
  const timeline = await context.newPage();
  await timeline.setViewportSize({ width: 1000, height: 760 });
  await timeline.goto(`${server.base}/timeline?session=${sessionId}`);
  await timeline.waitForFunction(() => document.body.dataset.loaded === "true");
  await timeline.screenshot({ path: join(OUT, "timeline.png") });
  console.log(
    `written: ${["demo", "call", "timeline"].map((n) => join(OUT, `${n}.png`)).join(", ")}`,
  );
} finally {
  await browser.close();
  await server.stop();
}
