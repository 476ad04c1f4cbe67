/**
 * `npm run try -- --phone`: a phone call from the terminal, through the carrier stand-in
 * (src/simulator/twilio, loaded by Node's type stripping and scripts/lib/ts-resolve.mjs). It
 * rings the gateway's voice webhook signed with TWILIO_AUTH_TOKEN, prints what the caller
 * hears as it plays ("heard 2.4 s of speech") and the lines the session recorded (its history,
 * read with API_KEY when the server wants one), and speaks each typed line (espeak-ng, then
 * sox to μ-law 8 kHz) at real-time pace, followed by 900 ms of silence. `#5` presses 5; an
 * empty line or Ctrl-D hangs up. `--say "…"` (repeatable): speak those lines, each once the
 * previous reply was heard, hang up and exit 0 when every reply was heard (1 otherwise).
 * `--carrier telnyx|plivo|vonage`: the same through that carrier's stand-in (src/simulator/…),
 * its webhook signed with the local development key of `CARRIERS` below (or the one its env
 * var names), its line in its own codec (Telnyx: what the answer asked, μ-law or A-law;
 * Vonage: 16 kHz linear PCM).
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

/**
 * The other carriers: the env var whose key the try signs with, its local development value,
 * and the gateway's var that must pair with it. Local only: never a deployment's keys.
 */
export const CARRIERS = {
  telnyx: {
    env: "TELNYX_SIGNING_KEY",
    // A local Ed25519 pair: the gateway verifies with the public half.
    dev: "MC4CAQAwBQYDK2VwBCIEIFcxI+UxP9Sf9EHJ3nsntvMgv5fzVHeOt/aeoI4yd8C+",
    gatewayVar: "TELNYX_PUBLIC_KEY:eEUDi9KMniYLR38w+lkcZZxtfammY3tBtbeXDRkxjOk=",
  },
  plivo: {
    env: "PLIVO_AUTH_TOKEN",
    dev: "dev-plivo-auth-token",
    gatewayVar: "PLIVO_AUTH_TOKEN:dev-plivo-auth-token",
  },
  vonage: {
    env: "VONAGE_SIGNATURE_SECRET",
    dev: "dev-vonage-signature-secret",
    gatewayVar: "VONAGE_SIGNATURE_SECRET:dev-vonage-signature-secret",
  },
};

/** The stand-in of `carrier`, and how it places a call signed with `key`. */
async function standInOf(carrier, options) {
  if (carrier === "telnyx") {
    const { TelnyxCallStandIn } = await import("../../src/simulator/telnyx/index.ts");
    const call = new TelnyxCallStandIn(options);
    return { call, place: (p) => call.placeCall({ ...p, privateKey: p.key }) };
  }
  if (carrier === "plivo") {
    const { PlivoCallStandIn } = await import("../../src/simulator/plivo/index.ts");
    const call = new PlivoCallStandIn(options);
    return { call, place: (p) => call.placeCall({ ...p, authToken: p.key }) };
  }
  const { VonageCallStandIn } = await import("../../src/simulator/vonage/index.ts");
  const call = new VonageCallStandIn(options);
  return { call, place: (p) => call.placeCall({ ...p, signatureSecret: p.key }) };
}
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

/** `text` spoken by espeak-ng as PCM16 at `rate` (the other carriers' stand-ins encode it). */
async function spokenPcm(dir, n, text, rate) {
  const wav = joinPath(dir, `line-${n}.wav`);
  const raw = joinPath(dir, `line-${n}.raw`);
  await run("espeak-ng", ["--stdin", "-w", wav], text);
  await run("sox", [
    wav,
    "-r",
    String(rate),
    "-c",
    "1",
    "-e",
    "signed",
    "-b",
    "16",
    "-t",
    "raw",
    raw,
  ]);
  const bytes = readFileSync(raw);
  return new Int16Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 2));
}

/** What to say when the webhook refused the call. */
function setupHint(error, base, ownToken, carrier = "twilio") {
  const status = error.answer?.status;
  const other = CARRIERS[carrier];
  if (other !== undefined) {
    const hint = `npm run dev -- --var ${other.gatewayVar}`;
    if (status === 503) return `The gateway has no key for ${carrier}. Locally: ${hint}`;
    if (status === 403)
      return ownToken
        ? `The gateway's ${carrier} key does not pair with your ${other.env} (or ${base} is not the URL it sees).`
        : `The gateway's ${carrier} key is not the local development one: start it with ${hint}, or give ${other.env}=….`;
    return undefined;
  }
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
  carrier = "twilio",
}) {
  if (carrier !== "twilio" && CARRIERS[carrier] === undefined) {
    console.error(`--carrier takes twilio, ${Object.keys(CARRIERS).join(", ")}; not ${carrier}.`);
    return 2;
  }
  const missing = missingTools();
  if (missing.length > 0) {
    console.error(
      `--phone speaks your lines with espeak-ng and sox; missing: ${missing.join(", ")} (apt-get install espeak-ng sox).`,
    );
    return 1;
  }
  const other = CARRIERS[carrier];
  const envName = other?.env ?? "TWILIO_AUTH_TOKEN";
  const ownToken = process.env[envName];
  const authToken = ownToken || (other?.dev ?? DEV_TWILIO_TOKEN);
  if (!ownToken)
    console.log(
      other === undefined
        ? `(TWILIO_AUTH_TOKEN unset: signing with ${DEV_TWILIO_TOKEN}, as ${DEV_HINT} expects)`
        : `(${envName} unset: signing with the local development key, as npm run dev -- --var ${other.gatewayVar} expects)`,
    );

  const options = { transport: webTransport(), allowInsecureStream: base.startsWith("http:") };
  const line =
    other === undefined
      ? { call: new TwilioCallStandIn(options), place: null }
      : await standInOf(carrier, options);
  const call = line.call;
  let placed;
  try {
    placed =
      line.place === null
        ? await call.placeCall({ baseUrl: base, authToken, from, to })
        : await line.place({ baseUrl: base, key: authToken, from, to });
  } catch (error) {
    if (error instanceof CallSetupError || error?.name === "CallSetupError") {
      console.error(`The call did not connect: ${error.message}`);
      const hint = setupHint(error, base, Boolean(ownToken), carrier);
      if (hint) console.error(hint);
    } else {
      const why = error instanceof Error ? (error.cause?.message ?? error.message) : String(error);
      const start = other === undefined ? DEV_HINT : `npm run dev -- --var ${other.gatewayVar}`;
      console.error(`Nothing answered at ${base} (${why}): start the gateway, e.g. ${start}`);
    }
    return 1;
  }
  const sessionId = placed.streamUrl.split("/").at(-1);
  console.log(`calling ${to} from ${from} through ${carrier}: session ${sessionId}\n`);

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
    if (other !== undefined) {
      // The line's own codec and rate: the stand-in encodes the PCM as its start declared.
      const rate = call.callerCodec.kind === "l16" ? call.callerCodec.rate : 8000;
      const pcm = await spokenPcm(dir, ++lines, line, rate);
      console.log(`→ saying "${line}" (${seconds((pcm.length * 1000) / rate)})`);
      await call.say(pcm, { realTime: true });
      await call.say(new Int16Array((TRAILING_SILENCE_MS * rate) / 1000), { realTime: true });
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
