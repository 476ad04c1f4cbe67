// The call view: a phone call to the gateway, placed through the carrier stand-in the tests
// use (src/simulator/twilio, or telnyx, plivo, vonage: the carrier picked in the view or
// `?carrier=`; bundled as /liveline-phone.js), so the page hears what a caller hears. The
// Worker plays the voice webhook (POST /demo/calls: it signs it with its own key, which a page
// must never hold); the page's stand-in follows the answer to the call's media stream. The
// microphone goes out in the line's codec (μ-law 8 kHz for Twilio and Plivo, what the answer
// asked for Telnyx, 16 kHz PCM for Vonage); what the stand-in plays of the gateway's audio (at
// the line's pace, stopped by a clear) is what the speakers play. The view switch (Chat /
// Call) lives here too.
import { createPlayer, startMicrophone } from "/liveline-client.js";
import {
  createResampler,
  lineToPcm,
  mulawToPcm16,
  PlivoCallStandIn,
  pcm16ToMulaw,
  TelnyxCallStandIn,
  TwilioCallStandIn,
  VonageCallStandIn,
  webTransport,
} from "/liveline-phone.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
/** The demo's knobs (`?simulator=timeScale%3D0.2`) go to the call's simulator too. */
const knobs = params.has("simulator")
  ? Object.fromEntries(new URLSearchParams(params.get("simulator")))
  : undefined;
const MULAW_SILENCE = 0xff;
/** The other carriers' stand-ins (the generic line engine, src/simulator/phone-line.ts). */
const LINE_STAND_INS = {
  telnyx: TelnyxCallStandIn,
  plivo: PlivoCallStandIn,
  vonage: VonageCallStandIn,
};
if (params.has("carrier")) $("call-carrier").value = params.get("carrier");
/** How often the stand-in's playback is read into the speakers: one `media` chunk. */
const PUMP_MS = 20;
/** `?record=1`: the call is recorded (as a number's voice URL with `?record=audio,wire`). */
const record = params.get("record") === "1";
/**
 * `?keytones=1`: a key is its DTMF tone in the line's audio, then the carrier's key event, as
 * on a real line (a recording keeps or silences the tone). Off, only the event goes.
 */
const keyTones = params.get("keytones") === "1";
/** A key's tone on the line (as a phone sends it, in the audio), in 20 ms chunks. */
const KEY_TONE_MS = 200;
/** DTMF: each key is a low and a high frequency (ITU-T Q.23). */
const DTMF_HZ = {
  1: [697, 1209],
  2: [697, 1336],
  3: [697, 1477],
  4: [770, 1209],
  5: [770, 1336],
  6: [770, 1477],
  7: [852, 1209],
  8: [852, 1336],
  9: [852, 1477],
  "*": [941, 1209],
  0: [941, 1336],
  "#": [941, 1477],
};

/** The key's tone at 8 kHz, as μ-law 20 ms chunks. */
function keyTone(digit) {
  const [low, high] = DTMF_HZ[digit];
  const samples = new Int16Array((8000 * KEY_TONE_MS) / 1000);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(
      6000 * (Math.sin((2 * Math.PI * low * i) / 8000) + Math.sin((2 * Math.PI * high * i) / 8000)),
    );
  const mulaw = pcm16ToMulaw(samples);
  const chunks = [];
  for (let at = 0; at < mulaw.length; at += 160) chunks.push(mulaw.slice(at, at + 160));
  return chunks;
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function show(view) {
  document.body.dataset.view = view;
  $("view-chat").setAttribute("aria-pressed", String(view === "chat"));
  $("view-call").setAttribute("aria-pressed", String(view === "call"));
  history.replaceState(null, "", view === "call" ? "#call" : location.pathname + location.search);
}
$("view-chat").onclick = () => show("chat");
$("view-call").onclick = () => show("call");
show(location.hash === "#call" ? "call" : "chat");

/** The call under way, or null between calls. */
let current = null;
let muted = false;

/** The status line, the buttons each state allows, and the state for the browser tests. */
function setCall(state, text) {
  document.body.dataset.callState = state;
  $("call-status").textContent = text;
  const live = state === "connected";
  $("call-dial").disabled = state === "ringing" || live;
  $("call-hangup").disabled = !live;
  $("keypad").disabled = !live;
}
setCall("idle", "Ready to call");

function showSession(sessionId) {
  const link = document.createElement("a");
  link.href = `/timeline?session=${encodeURIComponent(sessionId)}`;
  link.target = "_blank";
  link.rel = "noopener";
  link.textContent = "Timeline";
  const id = document.createElement("code");
  id.textContent = sessionId;
  $("call-session").replaceChildren("session ", id, " · ", link);
  document.body.dataset.callSession = sessionId;
}

async function placeCall() {
  if (current !== null) return;
  const carrier = $("call-carrier").value;
  // Made in the click, so the browser lets its audio start; the line is 8 kHz but Vonage's.
  const rate = carrier === "vonage" ? 16000 : 8000;
  const player = createPlayer({ sampleRate: rate });
  window.livelineCallPlayer = player;
  const call = {
    carrier,
    rate,
    standIn: null,
    player,
    mic: null,
    pump: null,
    heard: 0,
    clears: 0,
    ended: false,
    // A key's tone takes the line's next chunks; its event goes once the tone was sent.
    keys: [],
  };
  current = call;
  $("call-session").replaceChildren();
  setCall("ringing", "Ringing…");
  let answer;
  try {
    const res = await fetch("/demo/calls", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        ...(knobs === undefined ? {} : { simulator: knobs }),
        ...(record ? { record: true } : {}),
        carrier,
      }),
    });
    answer = await res.json();
    if (!res.ok) throw new Error(answer.error?.message ?? `/demo/calls: ${res.status}`);
    // The grant lets this browser's timeline tab read the call's session, as for a chat.
    localStorage.setItem(`liveline.grant.${answer.sessionId}`, answer.demoGrant);
    showSession(answer.sessionId);
    // A gateway on plain http (npm run dev) names a ws:// stream; carriers take wss:// only.
    const options = {
      transport: webTransport(),
      allowInsecureStream: location.protocol === "http:",
    };
    const StandIn = LINE_STAND_INS[carrier] ?? TwilioCallStandIn;
    call.standIn = new StandIn(options);
    window.livelineCall = call.standIn;
    if (carrier === "twilio") await call.standIn.answerCall(answer.twiml, answer);
    else if (carrier === "telnyx")
      await call.standIn.answerCall(answer.answer, { ...answer, callSid: answer.callId });
    else await call.standIn.answerCall(answer.answer, answer.callId);
  } catch (err) {
    player.close();
    current = null;
    setCall("failed", String(err.message ?? err));
    return;
  }
  setCall("connected", "Connected");
  call.pump = setInterval(() => pump(call), PUMP_MS);
  void keepReadToken(answer.sessionId, answer.demoGrant);
  await startLine(call);
}

/**
 * A token read while the call is up: an ended session gets no fresh one, and the timeline
 * viewer falls back on this one to show a call after it was hung up.
 */
async function keepReadToken(sessionId, grant) {
  const res = await fetch(`/demo/sessions/${encodeURIComponent(sessionId)}/token`, {
    method: "POST",
    headers: { "X-Demo-Grant": grant },
  });
  if (res.ok) localStorage.setItem(`liveline.token.${sessionId}`, (await res.json()).token);
}

/**
 * The microphone as the phone line: 20 ms of PCM16 16 kHz at a time, down to 8 kHz and
 * μ-law, one `media` chunk each. Muted, the line still carries 20 ms every 20 ms, of silence,
 * as a phone's does (and the model hears the end of what was said).
 */
async function startLine(call) {
  const down = createResampler(16000, call.rate);
  try {
    const mic = await startMicrophone({
      sendAudio(pcm) {
        if (call.ended) return;
        // Always through the resampler, so that unmuting starts without a seam.
        const samples = down.push(new Int16Array(pcm));
        if (call.carrier !== "twilio") {
          // The stand-in speaks it in the line's codec, as the stream's start declared.
          if (muted) samples.fill(0);
          void call.standIn.say(samples, { realTime: false });
          return;
        }
        let line = pcm16ToMulaw(samples);
        if (muted) line.fill(MULAW_SILENCE);
        // A key pressed: its tone replaces the microphone, then its event follows.
        const key = call.keys[0];
        if (key !== undefined) {
          line = key.tone.shift() ?? line;
          if (key.tone.length === 0) {
            call.keys.shift();
            void call.standIn.sendAudio(line, { realTime: false }).then(() => {
              if (!call.ended) call.standIn.sendDtmf(key.digit);
            });
            return;
          }
        }
        void call.standIn.sendAudio(line, { realTime: false });
      },
    });
    if (call.ended) return mic.stop();
    call.mic = mic;
    document.body.dataset.callMic = "on";
  } catch (err) {
    document.body.dataset.callMic = "failed";
    if (!call.ended) $("call-status").textContent = `Connected · no microphone: ${err.message}`;
  }
}

/** The line's chunks as one PCM16 buffer at the line's rate for the player. */
function decode(call, chunks) {
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  if (call.carrier === "twilio") return mulawToPcm16(bytes).buffer;
  return lineToPcm(call.standIn.call.answer.replyCodec, bytes).slice().buffer;
}

/** What the stand-in has played since the last pump goes to the speakers; the line's state to the page. */
function pump(call) {
  const { standIn, player } = call;
  const heardMs = standIn.heardMs(); // steps the stand-in's playback to now
  const fresh = standIn.heard.slice(call.heard);
  call.heard = standIn.heard.length;
  if (standIn.clears > call.clears) {
    // A clear: the line dropped what it had not played, and the speakers drop what they hold
    // ahead (the ≤ 20 ms played just before it are dropped with it).
    call.clears = standIn.clears;
    player.flush();
  } else if (fresh.length > 0) {
    player.enqueue(decode(call, fresh));
  }
  const violations = standIn.violations.length;
  Object.assign(document.body.dataset, {
    callHeardMs: String(Math.round(heardMs)),
    callClears: String(standIn.clears),
    callViolations: String(violations),
  });
  if (standIn.closed !== null) return ended(call, heardMs);
  const broken = violations === 0 ? "" : ` · ${violations} protocol violation(s), see the console`;
  $("call-status").textContent = `Connected · heard ${seconds(heardMs)}${broken}`;
}

function ended(call, heardMs) {
  if (call.ended) return;
  call.ended = true;
  clearInterval(call.pump);
  call.mic?.stop();
  call.player.flush();
  call.player.close();
  current = null;
  for (const v of call.standIn.violations) console.warn(`carrier stand-in: ${v}`);
  const { by, code, reason } = call.standIn.closed;
  document.body.dataset.callEndedBy = by;
  document.body.dataset.callMic = "off";
  const who = by === "caller" ? "you" : `liveline (${code}${reason ? ` ${reason}` : ""})`;
  setCall("ended", `Call ended by ${who} · heard ${seconds(heardMs)}`);
}

$("call-dial").onclick = () => void placeCall();
$("call-hangup").onclick = () => {
  if (current?.standIn == null || current.ended) return;
  current.standIn.hangUp();
  pump(current);
};
$("call-mute").onclick = () => {
  muted = !muted;
  $("call-mute").setAttribute("aria-pressed", String(muted));
};
$("keypad").onclick = (event) => {
  const digit = event.target.closest("button")?.dataset.digit;
  if (digit === undefined || current?.standIn == null || current.ended) return;
  // With key tones, the key is its tone on the line (in the audio), then the carrier's key
  // event; without them, or a microphone to carry the tone, the event goes at once.
  if (!keyTones || current.mic === null) current.standIn.sendDtmf(digit);
  else current.keys.push({ digit, tone: keyTone(digit) });
};
