// The timeline viewer: GET /v1/sessions/:id/timeline drawn one row per turn, each event at
// its +ms from the user's input, so that why a turn did what it did shows at a glance; with
// the session's recording (GET …/recording) in a player, each reply and tool row a click away
// from its moment in it.
const $ = (id) => document.getElementById(id);
const sessionId = new URLSearchParams(location.search).get("session");

/** How each timeline row kind is drawn: its class (colour) and its label. */
const KINDS = {
  USER: ["user", "user input"],
  MODEL_TEXT: ["model", "model text"],
  MODEL_AUDIO: ["model", "model audio"],
  TOOL_CALL: ["tool", "tool call"],
  TOOL_RESPONSE: ["tool", "tool result"],
  TOOL_RESULT_WITHHELD: ["guard", "result withheld"],
  TOOL_CANCELLED: ["trouble", "tool cancelled"],
  TURN_COMPLETE: ["end", "turn complete"],
  MODEL_TURN_COMPLETE: ["model", "model turn complete"],
  INTERRUPTED: ["trouble", "interrupted"],
  SUPPRESSED: ["guard", "suppressed generation"],
  DUPLICATE_CALL: ["guard", "duplicate call"],
  DUPLICATE_RESULT: ["guard", "duplicate result"],
  RETRY_EMPTY: ["guard", "empty-reply retry"],
  EMPTY_RESPONSE: ["trouble", "empty response"],
  REPEATED_REPLY: ["guard", "repeated reply"],
  WATCHDOG_NUDGE: ["guard", "watchdog nudge"],
  TURN_CARRIED: ["link", "turn carried"],
  RESUME_TURN: ["link", "turn resumed"],
  HANDOFF: ["link", "handoff"],
  HANDOFF_ANNOUNCE: ["link", "new agent asked to announce"],
  UPSTREAM_RECONNECT: ["link", "reconnect"],
  UPSTREAM_CLOSED: ["trouble", "model connection closed"],
  UPSTREAM_LIVE: ["link", "model connection live"],
  MODEL_TIMEOUT: ["trouble", "model timeout"],
  LIMIT_REACHED: ["trouble", "limit reached"],
  LIMIT_GOODBYE: ["link", "goodbye asked"],
  RECORDING_STARTED: ["link", "recording started"],
  RECORDING_STOPPED: ["trouble", "recording stopped"],
};

/** Rows a click plays the recording from: what was said, heard and called. */
const SEEKABLE = new Set([
  "USER",
  "MODEL_TEXT",
  "MODEL_AUDIO",
  "TOOL_CALL",
  "TOOL_RESPONSE",
  "TURN_COMPLETE",
  "INTERRUPTED",
]);

/** The session's recording, once loaded: the player plays from a row's moment (its `ms`). */
function seekTo(ms) {
  const audio = $("recording");
  if ($("player").hidden) return;
  audio.currentTime = ms / 1000;
  void audio.play().catch(() => undefined);
}

/** Marks a row or mark as one a click plays the recording from. */
function seekable(node, row) {
  if (!SEEKABLE.has(row.kind)) return node;
  node.classList.add("seek");
  node.dataset.ms = String(row.ms);
  node.title = `play the recording from ${(row.ms / 1000).toFixed(2)} s`;
  node.addEventListener("click", () => seekTo(row.ms));
  return node;
}

/**
 * The session's recording (GET …/recording: a WAV whose second 0 is the session's start, as
 * the timeline's ms 0 is), loaded whole so that the player seeks anywhere at once.
 */
async function loadRecording(query) {
  const res = await fetch(`/v1/sessions/${sessionId}/recording${query}`);
  if (!res.ok) {
    $("player").hidden = true;
    document.body.dataset.recording = "none";
    return;
  }
  const blob = await res.blob();
  const audio = $("recording");
  if (audio.src) URL.revokeObjectURL(audio.src);
  audio.src = URL.createObjectURL(blob);
  $("player").hidden = false;
  window.livelineRecording = { audio, blob };
  document.body.dataset.recording = "loaded";
}

async function token() {
  const grant = localStorage.getItem(`liveline.grant.${sessionId}`) ?? "";
  const res = await fetch(`/demo/sessions/${encodeURIComponent(sessionId)}/token`, {
    method: "POST",
    headers: { "X-Demo-Grant": grant },
  });
  const body = await res.json().catch(() => ({}));
  if (res.ok) return body.token;
  // An ended session (a call hung up) gets no fresh token: the call view kept one for this.
  const kept = localStorage.getItem(`liveline.token.${sessionId}`);
  if (kept !== null) return kept;
  throw new Error(body.error?.message ?? `token: ${res.status}`);
}

/**
 * Rows grouped by turn: a row names its turn, or its call's turn (a late tool result), or
 * belongs to the turn open at that moment; the rest (connections, clients) are shown between
 * turns, so that every row is drawn.
 */
function byTurn(rows) {
  const turns = [];
  const callTurn = new Map();
  let open = null;
  let between = null;
  for (const row of rows) {
    const id = row.detail?.turnId ?? callTurn.get(row.detail?.callId);
    if (row.kind === "USER") {
      open = { id, start: row.ms, rows: [] };
      turns.push(open);
      between = null;
    }
    const turn = (id !== undefined && turns.findLast((t) => t.id === id)) || open;
    if (turn) {
      turn.rows.push(row);
      if (row.kind === "TOOL_CALL" && row.detail?.callId) callTurn.set(row.detail.callId, turn.id);
    } else {
      between ??= { id: undefined, start: row.ms, rows: [] };
      if (!turns.includes(between)) turns.push(between);
      between.rows.push(row);
    }
    if ((row.kind === "TURN_COMPLETE" || row.kind === "INTERRUPTED") && turn === open) open = null;
  }
  return turns;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

/** A cost as the session resource gives it: dollars, or why there is no figure. */
function costText(cost) {
  if (cost === undefined) return "";
  if (cost.status === "unpriced") return "unpriced";
  const usd = `$${cost.usd.toFixed(cost.usd < 0.01 ? 6 : 4)}`;
  return cost.status === "partial" ? `${usd} + unpriced ${cost.unpriced.join(", ")}` : usd;
}

const ms = (v) => (v === null || v === undefined ? "–" : `${v} ms`);

/** A turn's figures: what it cost, its first byte and its length, its tools' runs. */
function turnFigures(report) {
  if (report === undefined) return "";
  const parts = [costText(report.cost)];
  if (report.firstByteMs !== null) parts.push(`first byte ${ms(report.firstByteMs)}`);
  if (report.turnMs !== null) parts.push(`turn ${ms(report.turnMs)}`);
  for (const tool of report.tools) parts.push(`${tool.name} ${ms(tool.ms)} (${tool.outcome})`);
  return parts.join(" · ");
}

/** LABEL_PX per character of a mark's label (0.7rem sans-serif), to stack labels apart. */
const LABEL_PX = 6.2;
/** A mark's width (timeline.css `.mark`). */
const MARK_PX = 2;

/**
 * Each mark's label: its level (labels that would overlap on one line go one level up, so
 * none collide however close their moments are), and whether it reads leftwards from its
 * mark (one that would run past the lane's right edge).
 */
function labelPlaces(marks, laneWidth) {
  const ends = [];
  return marks.map(({ left, label }) => {
    const x = (left / 100) * laneWidth;
    const width = label.length * LABEL_PX + 8;
    const leftwards = x + width > laneWidth;
    // A leftwards label ends at its mark's right edge (it is MARK_PX wide), not at its left.
    const start = leftwards ? x + MARK_PX - width : x;
    let level = ends.findIndex((end) => end <= start);
    if (level === -1) level = ends.length;
    ends[level] = start + width;
    return { level, leftwards };
  });
}

function draw(body, resource) {
  $("session").textContent = `${body.sessionId} · started ${body.startedAt}`;
  const turns = byTurn(body.rows);
  const reports = new Map((resource?.turns ?? []).map((t) => [t.turnId, t]));
  const latency = resource?.latency;
  $("legend").textContent = [
    `${body.rows.length} rows, ${turns.filter((t) => t.id !== undefined).length} turns`,
    resource ? `cost ${costText(resource.cost)}` : "",
    latency
      ? `first byte p50 ${ms(latency.firstByteMs.p50)} / p95 ${ms(latency.firstByteMs.p95)} · turn p50 ${ms(latency.turnMs.p50)} / p95 ${ms(latency.turnMs.p95)}`
      : "",
  ]
    .filter((t) => t !== "")
    .join(" · ");
  const laneWidth = Math.max(200, $("turns").clientWidth - 40);
  $("turns").replaceChildren(
    ...turns.map((turn) => {
      const shown = turn.rows;
      const span = Math.max(1, ...shown.map((r) => r.ms - turn.start));
      const marks = shown.map((r) => {
        const [cls, label] = KINDS[r.kind] ?? ["link", r.kind.toLowerCase().replaceAll("_", " ")];
        return { cls, label, left: ((r.ms - turn.start) / span) * 97 };
      });
      const places = labelPlaces(marks, laneWidth);
      const levels = Math.max(0, ...places.map((p) => p.level)) + 1;
      const lane = el("div", { class: "lane", style: `height:${1.9 + levels * 0.95}rem` });
      marks.forEach(({ cls, label, left }, i) => {
        const { level, leftwards } = places[i];
        const side = leftwards ? "right:0" : "left:0";
        lane.append(
          seekable(
            el(
              "div",
              { class: `mark ${cls}`, style: `left:${left}%` },
              el("span", { style: `bottom:${1.7 + level * 0.95}rem;${side}` }, label),
            ),
            shown[i],
          ),
        );
      });
      // The turn's latencies drawn as bars along the lane's foot: the wait for the model's
      // first byte, and each tool call's run (from its call to its outcome).
      const report = reports.get(turn.id ?? null);
      const bar = (cls, from, length, title) =>
        lane.append(
          el("div", {
            class: `bar ${cls}`,
            style: `left:${((from - turn.start) / span) * 97}%;width:${Math.max(0.3, (length / span) * 97)}%`,
            title,
          }),
        );
      if (report?.firstByteMs != null)
        bar("model", turn.start, report.firstByteMs, `first byte ${report.firstByteMs} ms`);
      for (const tool of report?.tools ?? []) {
        const call = shown.find((r) => r.kind === "TOOL_CALL" && r.detail?.callId === tool.callId);
        if (call !== undefined && tool.ms !== null)
          bar("tool", call.ms, tool.ms, `${tool.name} ${tool.ms} ms (${tool.outcome})`);
      }
      const table = el(
        "table",
        {},
        ...shown.map((r) => {
          const [cls, named] = KINDS[r.kind] ?? ["link", r.kind.toLowerCase().replaceAll("_", " ")];
          // A tool result says whether the model was to speak about it.
          const label =
            r.kind === "TOOL_RESPONSE" && r.detail?.followUp
              ? `${named} (${r.detail.followUp})`
              : named;
          const detail = r.detail === undefined ? "" : JSON.stringify(r.detail);
          return seekable(
            el(
              "tr",
              { "data-kind": r.kind },
              el("td", { class: "ms" }, `+${r.ms - turn.start} ms`),
              el("td", { class: `kind ${cls}`, style: "background:none" }, label),
              el(
                "td",
                { class: "muted" },
                detail.length > 160 ? `${detail.slice(0, 160)}…` : detail,
              ),
            ),
            r,
          );
        }),
      );
      return el(
        "section",
        { class: "turn", "data-turn": turn.id ?? "" },
        el("h2", {}, turn.id === undefined ? "between turns" : `turn ${turn.id}`),
        el("p", { class: "figures muted" }, turnFigures(report)),
        lane,
        table,
      );
    }),
  );
  document.body.dataset.loaded = "true";
}

async function load() {
  if (sessionId === null) {
    $("legend").textContent = "open this page as /timeline.html?session=<id>";
    return;
  }
  const query = `?token=${encodeURIComponent(await token())}`;
  const [res, session] = await Promise.all([
    fetch(`/v1/sessions/${sessionId}/timeline${query}`),
    fetch(`/v1/sessions/${sessionId}${query}`),
    loadRecording(query),
  ]);
  if (!res.ok) {
    $("legend").textContent = `timeline: ${res.status} ${await res.text()}`;
    return;
  }
  // Cost and latency are extras: the trace is drawn without them if they cannot be read.
  draw(await res.json(), session.ok ? await session.json() : undefined);
}
$("reload").onclick = load;
await load();
