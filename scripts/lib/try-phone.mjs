/**
 * `npm run try -- --phone`: a phone call from the terminal, through the carrier stand-in
 * (src/simulator/twilio, loaded by Node's type stripping and scripts/lib/ts-resolve.mjs). It
 * rings the gateway's voice webhook signed with TWILIO_AUTH_TOKEN, prints what the caller
 * hears as it plays ("heard 2.4 s of speech") and the lines the session recorded (its history,
 * read with API_KEY when the server wants one), and speaks each typed line (espeak-ng, then
 * sox to μ-law 8 kHz) at real-time pace, followed by 900 ms of silence. `#5` presses 5; an
 * empty line or Ctrl-D hangs up. `--say "…"` (repeatable): speak those lines, each once the
 * previous reply was heard, hang up and exit 0 when every reply was heard (1 otherwise).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import { createInterface } from "node:readline";
import {
  CallSetupError,
  mulawFromWav,
  TwilioCallStandIn,
  webTransport,
} from "../../src/simulator/twilio/index.js";

/** What `npm run dev -- --var TWILIO_AUTH_TOKEN:dev-twilio-token` signs with (16 characters). */
export const DEV_TWILIO_TOKEN = "dev-twilio-token";
const DEV_HINT = `npm run dev -- --var TWILIO_AUTH_TOKEN:${DEV_TWILIO_TOKEN}`;
const MULAW_SILENCE = 0xff;
const TRAILING_SILENCE_MS = 900;
/** A reply has been heard through once nothing is queued and nothing new played for this long. */
const QUIET_MS = 700;
const GREETING_TIMEOUT_MS = 30_000;
const REPLY_TIMEOUT_MS = 45_000;

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether espeak-ng and sox run; names the missing ones. */
function missingTools() {
  return ["espeak-ng", "sox"].filter(
    (tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).error !== undefined,
  );
}

function run(command, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${stderr.trim()}`)),
    );
    // A child that exits early says why on stderr; its closed stdin is not the error.
    child.stdin.on("error", () => {});
    child.stdin.end(input ?? "");
  });
}

/** `text` spoken by espeak-ng (read from stdin: a line may start with "-"), as μ-law 8 kHz. */
async function spoken(dir, n, text) {
  const wav = joinPath(dir, `line-${n}.wav`);
  const ulaw = joinPath(dir, `line-${n}.ulaw.wav`);
  await run("espeak-ng", ["--stdin", "-w", wav], text);
  await run("sox", [wav, "-r", "8000", "-c", "1", "-e", "u-law", ulaw]);
  return mulawFromWav(new Uint8Array(readFileSync(ulaw)));
}

/** What to say when the webhook refused the call. */
function setupHint(error, base, ownToken) {
  const status = error.answer?.status;
  if (status === 503)
    return `The gateway has no TWILIO_AUTH_TOKEN. Locally: ${DEV_HINT} (then npm run try -- --phone); deployed: npx wrangler secret put TWILIO_AUTH_TOKEN.`;
  if (status === 403)
    return ownToken
      ? `The gateway's TWILIO_AUTH_TOKEN is not your TWILIO_AUTH_TOKEN (or ${base} is not the URL it sees): give its token, or start it with npm run dev -- --var TWILIO_AUTH_TOKEN:$TWILIO_AUTH_TOKEN`
      : `The gateway's TWILIO_AUTH_TOKEN is not ${DEV_TWILIO_TOKEN}: give its token as TWILIO_AUTH_TOKEN=… npm run try -- --phone, or start it with ${DEV_HINT}.`;
  return undefined;
}

/**
 * Places the call and runs it; resolves with the exit code.
 * @param {{ base: string, from?: string, to?: string, say: string[], apiKey?: string }} options
 */
export async function runPhoneCall({
  base,
  from = "+15550001111",
  to = "+15550002222",
  say,
  apiKey,
}) {
  const missing = missingTools();
  if (missing.length > 0) {
    console.error(
      `--phone speaks your lines with espeak-ng and sox; missing: ${missing.join(", ")} (apt-get install espeak-ng sox).`,
    );
    return 1;
  }
  const ownToken = process.env.TWILIO_AUTH_TOKEN;
  const authToken = ownToken || DEV_TWILIO_TOKEN;
  if (!ownToken)
    console.log(
      `(TWILIO_AUTH_TOKEN unset: signing with ${DEV_TWILIO_TOKEN}, as ${DEV_HINT} expects)`,
    );

  const call = new TwilioCallStandIn({
    transport: webTransport(),
    allowInsecureStream: base.startsWith("http:"),
  });
  let placed;
  try {
    placed = await call.placeCall({ baseUrl: base, authToken, from, to });
  } catch (error) {
    if (error instanceof CallSetupError) {
      console.error(`The call did not connect: ${error.message}`);
      const hint = setupHint(error, base, Boolean(ownToken));
      if (hint) console.error(hint);
    } else {
      const why = error instanceof Error ? (error.cause?.message ?? error.message) : String(error);
      console.error(`Nothing answered at ${base} (${why}): start the gateway, e.g. ${DEV_HINT}`);
    }
    return 1;
  }
  const sessionId = placed.streamUrl.split("/").at(-1);
  console.log(`calling ${to} from ${from}: session ${sessionId}\n`);

  // The record: new events since the last look, when the server lets us read it.
  let lastSeq = -1;
  let canRead = true;
  let reading = Promise.resolve();
  /** Prints what the record gained since the last look (one look at a time). */
  const transcript = () => {
    reading = reading.then(readTranscript);
    return reading;
  };
  const readTranscript = async () => {
    if (!canRead) return;
    let res;
    try {
      res = await fetch(`${base}/v1/sessions/${sessionId}/history`, {
        headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
      });
    } catch {
      return;
    }
    if (!res.ok) {
      canRead = false;
      console.log(
        res.status === 401
          ? "  (no transcript: the server wants API_KEY=… to read the session's history)"
          : `  (no transcript: the history answered ${res.status})`,
      );
      return;
    }
    const { events } = await res.json();
    // The model's words come in pieces: one line per run of them.
    let words = "";
    const flush = () => {
      if (words.trim() !== "") console.log(`  liveline: ${words.trim().replace(/\s+/g, " ")}`);
      words = "";
    };
    for (const e of events) {
      if (e.seq <= lastSeq) continue;
      lastSeq = e.seq;
      if (e.kind === "transcript" || e.kind === "model_text") {
        words += e.text;
        continue;
      }
      flush();
      const line = describe(e);
      if (line) console.log(`  ${line}`);
    }
    flush();
  };

  // What the caller hears: a reply is a run of playback, ended by QUIET_MS of nothing new.
  let replies = 0;
  let replyFrom = null;
  let lastHeard = 0;
  let lastChangeAt = performance.now();
  let clears = 0;
  const waiters = [];
  const watch = setInterval(() => {
    const heard = call.heardMs();
    const now = performance.now();
    if (call.clears > clears) {
      clears = call.clears;
      console.log("← clear: the rest of the reply was dropped (you spoke over it)");
    }
    // Once liveline has ended the call (after its goodbye played), a reply under way is done.
    const ended = call.closed !== null;
    if (heard !== lastHeard || (!ended && call.queuedMs() > 0)) {
      if (replyFrom === null) replyFrom = lastHeard;
      if (heard !== lastHeard) lastChangeAt = now;
      lastHeard = heard;
      if (!ended) return;
    }
    if (replyFrom !== null && (ended || now - lastChangeAt >= QUIET_MS)) {
      console.log(`← heard ${seconds(heard - replyFrom)} of speech`);
      replyFrom = null;
      replies += 1;
      void transcript().then(() => {
        for (const w of waiters.splice(0)) w();
      });
    }
  }, 50);
  /** Resolves once `count` replies have been heard, or false after `timeoutMs`. */
  const repliesHeard = async (count, timeoutMs) => {
    const deadline = performance.now() + timeoutMs;
    while (replies < count) {
      if ((call.closed !== null && replyFrom === null) || performance.now() > deadline)
        return false;
      await Promise.race([new Promise((resolve) => waiters.push(resolve)), sleep(250)]);
    }
    return true;
  };

  const dir = mkdtempSync(joinPath(tmpdir(), "liveline-try-phone-"));
  let lines = 0;
  /** Speaks one line, or presses keys for `#…`; false for anything it cannot send. */
  const send = async (line) => {
    if (line.startsWith("#")) {
      const digits = line.slice(1).trim();
      if (!/^[0-9*#]+$/.test(digits)) {
        console.log(`  (${line}: DTMF takes 0-9, * and #)`);
        return false;
      }
      for (const digit of digits) {
        call.sendDtmf(digit);
        console.log(`→ pressed ${digit}`);
      }
      return true;
    }
    const audio = await spoken(dir, ++lines, line);
    console.log(`→ saying "${line}" (${seconds(audio.length / 8)})`);
    await call.sendAudio(audio, { realTime: true });
    await call.sendAudio(new Uint8Array(TRAILING_SILENCE_MS * 8).fill(MULAW_SILENCE), {
      realTime: true,
    });
    return true;
  };

  const finish = async (code) => {
    if (call.closed === null) {
      call.hangUp();
      console.log("hung up");
    } else if (call.closed.by === "liveline")
      console.log(`liveline hung up (${call.closed.code} ${call.closed.reason})`);
    clearInterval(watch);
    await sleep(300);
    await transcript();
    if (call.violations.length > 0) {
      console.error(`protocol violations:\n  ${call.violations.join("\n  ")}`);
      code = 1;
    }
    rmSync(dir, { recursive: true, force: true });
    return code;
  };

  if (say.length > 0) {
    const noReply = (what, timeoutMs) =>
      console.error(
        call.closed === null
          ? `no ${what} heard within ${seconds(timeoutMs)}`
          : `liveline ended the call before the ${what} was heard`,
      );
    if (!(await repliesHeard(1, GREETING_TIMEOUT_MS))) {
      noReply("greeting", GREETING_TIMEOUT_MS);
      return finish(1);
    }
    for (const line of say) {
      if (call.closed !== null) {
        console.error(`liveline ended the call before "${line}" was said`);
        return finish(1);
      }
      const before = replies;
      if (!(await send(line))) return finish(1);
      if (!(await repliesHeard(before + 1, REPLY_TIMEOUT_MS))) {
        noReply(`reply to "${line}"`, REPLY_TIMEOUT_MS);
        return finish(1);
      }
    }
    return finish(0);
  }

  console.log("Type a line to say it, #5 to press 5; an empty line or Ctrl-D hangs up.\n");
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    let queue = Promise.resolve(true);
    let ended = false;
    let closedWatch = null;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(closedWatch);
      rl.close();
      // What was typed before is said first.
      void queue.then(() => finish(0)).then(resolve);
    };
    rl.on("line", (line) => {
      if (line.trim() === "") return end();
      queue = queue.then(() => send(line.trim())).catch((error) => console.error(String(error)));
    });
    rl.on("close", end);
    // liveline may end the call itself.
    closedWatch = setInterval(() => {
      if (call.closed !== null) end();
    }, 100);
  });
}

/** One line of the record, as the terminal shows it (null: not worth a line). */
function describe(e) {
  switch (e.kind) {
    case "user":
      return `caller${e.source === "audio" ? " (heard)" : ""}: ${e.text}`;
    case "tool_call":
      return `tool ${e.name}(${JSON.stringify(e.args)})`;
    case "tool_result":
      return `tool ${e.name} → ${JSON.stringify(e.error ?? e.result)}`;
    case "interrupted":
      return `(interrupted: ${e.reason})`;
    case "error":
      return `error ${e.code}: ${e.message}`;
    case "handoff":
      return `(handed to ${e.to})`;
    default:
      return null;
  }
}
