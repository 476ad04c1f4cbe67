#!/usr/bin/env node
// Try a live session from the terminal: creates a session on a running liveline (default
// http://localhost:8787, as `npm run dev` serves it), connects over WebSocket, says "hi",
// answers client tool calls (the UI chips) like an app would, and prints every frame.
// Then each line you type is a text turn; Ctrl-D ends. Usage: [API_KEY=…] npm run try [-- BASE_URL]
// `--agent NAME`: a session of that agent (default greeter; e.g. orders, whose tools are an MCP
// server's).
//
// `--phone`: a phone call instead, through the Twilio stand-in (scripts/lib/try-phone.mjs):
// the voice webhook signed with TWILIO_AUTH_TOKEN (unset: dev-twilio-token, for
// `npm run dev -- --var TWILIO_AUTH_TOKEN:dev-twilio-token`); prints what the caller hears
// ("heard 2.4 s of speech") and the recorded lines (the history; API_KEY when the server wants
// one). Each typed line is spoken (espeak-ng, sox: μ-law 8 kHz) at real-time pace, `#5`
// presses 5, an empty line or Ctrl-D hangs up. `--to`/`--from` the numbers; `--say "…"`
// (repeatable) says those lines, one per reply, hangs up, and exits 0 once every reply was heard.
//   [TWILIO_AUTH_TOKEN=…] [API_KEY=…] npm run try -- --phone [--say "…"]… [BASE_URL]
// `--carrier telnyx|plivo|vonage`: the call through that carrier's stand-in instead of Twilio's
// (signed with its local development key; the hint says how to start the gateway with it).
import { createInterface } from "node:readline";

/** `--phone`, `--to`/`--from`/`--say <value>` (`--say` repeatable), and the base URL. */
function parseArgs(argv) {
  const out = { phone: false, say: [], url: undefined, agent: "greeter" };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--phone") out.phone = true;
    else if (["--to", "--from", "--say", "--agent", "--carrier"].includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (arg === "--say") out.say.push(value);
      else out[arg.slice(2)] = value;
    } else if (arg.startsWith("--")) throw new Error(`unknown option ${arg}`);
    else out.url = arg;
  }
  return out;
}
let args;
try {
  args = parseArgs(process.argv.slice(2));
} catch (error) {
  console.error(
    `${error.message}. Usage: npm run try -- [--agent NAME] [--phone [--carrier twilio|telnyx|plivo|vonage] [--to N] [--from N] [--say "…"]…] [BASE_URL]`,
  );
  process.exit(2);
}
const base = (args.url ?? process.env.LIVELINE_URL ?? "http://localhost:8787").replace(/\/$/, "");
if (args.phone) {
  const { runPhoneCall } = await import("./lib/try-phone.mjs");
  process.exit(await runPhoneCall({ base, ...args, apiKey: process.env.API_KEY || undefined }));
}
if (args.say.length > 0 || args.to !== undefined || args.from !== undefined || args.carrier) {
  console.error("--say, --to, --from and --carrier go with --phone.");
  process.exit(2);
}
const headers = { "Content-Type": "application/json" };
if (process.env.API_KEY) headers.Authorization = `Bearer ${process.env.API_KEY}`;

const res = await fetch(`${base}/v1/sessions`, {
  method: "POST",
  headers,
  body: JSON.stringify({ agent: args.agent }),
});
if (res.status !== 201) {
  console.error(`POST /v1/sessions answered ${res.status}: ${await res.text()}`);
  if (res.status === 401)
    console.error(
      process.env.API_KEY
        ? "The server refused API_KEY: give the key it was set up with (wrangler secret put API_KEY, or .dev.vars)."
        : `This server wants an API key: API_KEY=<its key> npm run try -- ${base}`,
    );
  if (res.status === 503)
    console.error("The server is not configured: GET /health names the setting to fix.");
  process.exit(1);
}
const { sessionId, wsUrl } = await res.json();
console.log(`session ${sessionId}\n`);

const ws = new WebSocket(wsUrl);
ws.binaryType = "arraybuffer";
let audioBytes = 0;
let turnOpen = false;
/** Lines typed while the model answers wait for the turn to end (no accidental barge-in). */
const pending = [];
let inputEnded = false;
const say = (text) => {
  const frame = { type: "text", text };
  console.log(`→ ${JSON.stringify(frame)}`);
  ws.send(JSON.stringify(frame));
  turnOpen = true;
};
const next = () => {
  if (turnOpen) return;
  const line = pending.shift();
  if (line !== undefined) say(line);
  else if (inputEnded) ws.close(1000, "bye");
};
ws.addEventListener("message", (event) => {
  if (typeof event.data !== "string") {
    audioBytes += event.data.byteLength; // model audio (24 kHz PCM16): counted, not played
    return;
  }
  const frame = JSON.parse(event.data);
  console.log(`← ${JSON.stringify(frame)}`);
  if (frame.type === "tool_call" && frame.runOn === "client") {
    const answer = { type: "tool_result", callId: frame.callId, result: { shown: true } };
    console.log(`→ ${JSON.stringify(answer)}`);
    ws.send(JSON.stringify(answer));
  }
  if (frame.type === "turn_complete" || frame.type === "interrupted") {
    turnOpen = false;
    setTimeout(next, 200);
  }
  if (frame.type === "turn_complete" && audioBytes > 0) {
    console.log(`  (${audioBytes} bytes of audio)`);
    audioBytes = 0;
  }
});
ws.addEventListener("close", (event) => {
  console.log(`closed ${event.code} ${event.reason}`);
  process.exit(0);
});
ws.addEventListener("open", () => {
  say("hi");
  const rl = createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    if (line.trim() === "") return;
    pending.push(line);
    next();
  });
  rl.on("close", () => {
    inputEnded = true;
    next();
  });
});
