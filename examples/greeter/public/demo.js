// The demo page: text chat, a microphone, spoken replies, chips from suggest_topics, a
// connection light and a button that drops the socket to show the resume. It uses
// liveline/client (bundled as /liveline-client.js) and nothing else.
import { connect, createPlayer, startMicrophone } from "/liveline-client.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

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
    const simulator = params.has("simulator")
      ? Object.fromEntries(new URLSearchParams(params.get("simulator")))
      : undefined;
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
        // A turn the model opened on its own has no words of the user's to show.
        if (e.source !== "model") add("user", e.text);
        break;
      case "text":
      case "transcript": {
        let li = replies.get(e.turnId);
        if (li === undefined || li !== transcript.lastElementChild) {
          li = add("model", "");
          replies.set(e.turnId, li);
        }
        li.textContent += e.text;
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

let mic = null;
let micStarting = false;
$("mic").onclick = async () => {
  if (micStarting) return; // a second click while the first still asks for the device
  if (mic !== null) {
    mic.stop();
    mic = null;
    client.endAudio();
    $("mic").setAttribute("aria-pressed", "false");
    return;
  }
  micStarting = true;
  try {
    player ??= createPlayer();
    mic = await startMicrophone(client);
    $("mic").setAttribute("aria-pressed", "true");
  } catch (err) {
    add("note", `microphone: ${err.message ?? err}`);
  } finally {
    micStarting = false;
  }
};
