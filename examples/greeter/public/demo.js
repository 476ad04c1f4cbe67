// The demo page: text chat, push-to-talk, spoken replies (from a model with a voice), chips
// from suggest_topics, a connection light and a button that drops the socket to show the
// resume. A new session is greeted without a word from the user. It uses liveline/client
// (bundled as /liveline-client.js) and nothing else.
import { connect, createPlayer, startMicrophone } from "/liveline-client.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

/**
 * What the page tells the model when it opens a new session, so that it greets the user first
 * (as a phone call's connection is said to the model). Recorded like any line, never shown.
 */
const OPENING = "(The user has opened the chat. Greet them.)";

/** The simulator's wires: `?wire=` (the header's switch) picks the one a new session speaks. */
const WIRES = ["gemini", "openai", "gpt-live"];
const wire = WIRES.includes(params.get("wire")) ? params.get("wire") : null;

/** The demo's simulator knobs: `?simulator=` (the tests' pacing), and the wire picked. */
function demoKnobs() {
  const knobs = params.has("simulator")
    ? Object.fromEntries(new URLSearchParams(params.get("simulator")))
    : {};
  if (wire !== null) knobs.wire = wire;
  return Object.keys(knobs).length === 0 ? undefined : knobs;
}

/**
 * The model behind the page (GET /health): with the built-in simulator the page offers its
 * wires, and says that it has no voice instead of promising spoken replies.
 */
fetch("/health")
  .then((res) => res.json())
  .then((health) => {
    const simulated = health.provider === "simulator";
    document.body.dataset.provider = health.provider ?? "";
    $("wire-pick").hidden = !simulated;
    $("wire").value = wire ?? "gemini";
    if (!simulated) return;
    $("notice").hidden = false;
    $("notice").textContent =
      "You are talking to liveline's built-in simulator, a stand-in for a live model: it " +
      "answers in text and has no voice (on a call you hear a tone), and it hears speech as " +
      "one of a few set questions. Set GEMINI_API_KEY or OPENAI_API_KEY for a real model " +
      "with spoken replies.";
  })
  .catch(() => {});
$("wire").onchange = () => {
  // A new session on the wire picked (this tab's session is left as it is).
  sessionStorage.removeItem("liveline.session");
  const next = new URLSearchParams(params);
  next.set("wire", $("wire").value);
  location.search = next.toString();
};

async function post(path, body, grant) {
  const res = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(grant ? { "X-Demo-Grant": grant } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(json.error?.message ?? `${path}: ${res.status}`);
  return json;
}

/** A fatal problem, said on the page (never a silent "starting…"). */
function fatal(message) {
  $("status").textContent = message;
  $("light").className = "light closed";
  document.body.dataset.status = "closed";
}

// One session per tab: reloading the page resumes it (the transcript is replayed once). The
// grant (kept per session in localStorage, for the timeline tab too) asks for fresh tokens.
let sessionId = sessionStorage.getItem("liveline.session") ?? params.get("session");
let first = null;
const grantOf = (id) => localStorage.getItem(`liveline.grant.${id}`);
try {
  if (sessionId !== null && !/^[0-9a-f-]{36}$/.test(sessionId))
    throw new Error(`"${sessionId}" is not a session id`);
  if (sessionId !== null && grantOf(sessionId) === null)
    throw new Error("this browser did not create that session (no grant): open / for a new one");
  if (sessionId === null) {
    const simulator = demoKnobs();
    // `?record=1`: the session's audio and wire are recorded (the timeline viewer plays them).
    const record = params.get("record") === "1" ? { record: true } : {};
    first = await post(
      "/demo/sessions",
      simulator === undefined ? record : { simulator, ...record },
    );
    sessionId = first.sessionId;
    sessionStorage.setItem("liveline.session", sessionId);
    localStorage.setItem(`liveline.grant.${sessionId}`, first.demoGrant);
  }
} catch (err) {
  fatal(String(err.message ?? err));
  throw err;
}
let token = first?.token ?? null;
$("timeline").href = `/timeline?session=${encodeURIComponent(sessionId)}`;

const transcript = $("transcript");
/** The bubble of each turn's reply, by turn id: text pieces are appended to it. */
const replies = new Map();
function add(kind, text) {
  const li = document.createElement("li");
  li.className = kind;
  li.textContent = text;
  transcript.append(li);
  li.scrollIntoView({ block: "end" });
  return li;
}
function showChips(topics) {
  const chips = $("chips");
  chips.replaceChildren(
    ...topics.map((topic) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "chip";
      b.textContent = topic;
      b.onclick = () => say(topic);
      return b;
    }),
  );
}

let player = null;
/** Every durable frame, in order (read by the browser tests). */
const events = [];
window.livelineEvents = events;
const client = connect({
  baseUrl: location.origin,
  sessionId,
  getToken: async () => {
    if (token !== null) {
      const t = token;
      token = null;
      return t;
    }
    const fresh = await post(
      `/demo/sessions/${encodeURIComponent(sessionId)}/token`,
      undefined,
      grantOf(sessionId),
    );
    sessionStorage.setItem("liveline.token", fresh.token);
    return { token: fresh.token, expiresAt: fresh.expiresAt };
  },
  tools: {
    suggest_topics: ({ topics }) => {
      showChips(Array.isArray(topics) ? topics.map(String) : []);
      return { shown: true };
    },
    get_user_profile: () => ({ name: "Demo user", plan: "team" }),
  },
  onEvent(e) {
    events.push(e);
    switch (e.type) {
      case "user":
        // A turn the model opened on its own has no words of the user's to show, nor has the
        // page's opening line (the model's cue to greet).
        if (e.source !== "model" && e.text !== OPENING) add("user", e.text);
        break;
      case "text":
      case "transcript": {
        let li = replies.get(e.turnId);
        if (li === undefined || li !== transcript.lastElementChild) {
          li = add("model", "");
          replies.set(e.turnId, li);
        }
        // A model without turns (GPT-Live) says a reply in pieces: a new sentence gets its space.
        const gap = /[.!?]$/.test(li.textContent) && /^\S/.test(e.text) ? " " : "";
        li.textContent += gap + e.text;
        li.scrollIntoView({ block: "end" });
        break;
      }
      case "tool_call":
        add("tool", `→ ${e.name}`);
        break;
      case "handoff":
        add("note", `handed from ${e.from} to ${e.to}`);
        break;
      case "interrupted":
        if (player !== null) client.played(player.flush());
        add("note", `interrupted (${e.reason})`);
        break;
      case "turn_complete":
        player?.endReply();
        break;
      case "error":
        add("note", `${e.code}: ${e.message}`);
        break;
    }
  },
  onAudio(pcm) {
    player ??= createPlayer();
    window.livelinePlayer = player;
    player.enqueue(pcm);
  },
  onStatus(s) {
    if (s.state === "closed") sessionStorage.removeItem("liveline.session");
    $("light").className = `light ${s.state}`;
    $("status").textContent =
      s.state === "reconnecting"
        ? `reconnecting (${s.why})`
        : s.state === "live"
          ? "live"
          : s.state;
    document.body.dataset.status = s.state;
  },
  onError(e) {
    add("note", `${e.code}: ${e.message}`);
  },
});
window.liveline = client; // for the browser tests and the curious
// A new session: the model speaks first.
if (first !== null) client.sendText(OPENING);

function say(text) {
  if (text.trim() === "") return;
  $("chips").replaceChildren();
  try {
    client.sendText(text);
  } catch (err) {
    add("note", err.message);
  }
}
$("composer").onsubmit = (event) => {
  event.preventDefault();
  say($("line").value);
  $("line").value = "";
};
$("drop").onclick = () => client.dropConnection();

// Push-to-talk: the microphone is open while the button is held (pointer, or Space/Enter on
// the focused button); letting go ends the utterance (audio_end), which the model answers.
let mic = null;
let held = false;
let opening = null;
async function talk() {
  if (held) return;
  held = true;
  $("mic").setAttribute("aria-pressed", "true");
  $("mic").textContent = "Release to send";
  try {
    player ??= createPlayer();
    opening = startMicrophone(client);
    const started = await opening;
    // Let go while the browser still asked for the device: nothing is said.
    if (!held) started.stop();
    else mic = started;
  } catch (err) {
    add("note", `microphone: ${err.message ?? err}`);
    release();
  } finally {
    opening = null;
  }
}
function release() {
  if (!held) return;
  held = false;
  $("mic").setAttribute("aria-pressed", "false");
  $("mic").textContent = "Hold to talk";
  if (mic !== null) {
    mic.stop();
    mic = null;
    client.endAudio();
  }
}
$("mic").addEventListener("pointerdown", (e) => {
  $("mic").setPointerCapture?.(e.pointerId);
  talk();
});
for (const name of ["pointerup", "pointercancel", "lostpointercapture"])
  $("mic").addEventListener(name, release);
$("mic").addEventListener("keydown", (e) => {
  if ((e.key === " " || e.key === "Enter") && !e.repeat) {
    e.preventDefault();
    talk();
  }
});
$("mic").addEventListener("keyup", (e) => {
  if (e.key === " " || e.key === "Enter") release();
});
