// The timeline viewer: GET /v1/sessions/:id/timeline drawn one row per turn, each event at
// its +ms from the user's input, so that why a turn did what it did shows at a glance.
const $ = (id) => document.getElementById(id);
const sessionId = new URLSearchParams(location.search).get("session");

/** How each timeline row kind is drawn: its class (colour) and its label. */
const KINDS = {
  USER: ["user", "user input"],
  MODEL_TEXT: ["model", "model text"],
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
};

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

function draw(body) {
  $("session").textContent = `${body.sessionId} · started ${body.startedAt}`;
  const turns = byTurn(body.rows);
  $("legend").textContent = `${body.rows.length} rows, ${turns.length} turns`;
  $("turns").replaceChildren(
    ...turns.map((turn) => {
      const shown = turn.rows;
      const span = Math.max(1, ...shown.map((r) => r.ms - turn.start));
      const lane = el("div", { class: "lane" });
      for (const r of shown) {
        const [cls, label] = KINDS[r.kind] ?? ["link", r.kind];
        const left = ((r.ms - turn.start) / span) * 97;
        lane.append(
          el("div", { class: `mark ${cls}`, style: `left:${left}%` }, el("span", {}, label)),
        );
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
          return el(
            "tr",
            { "data-kind": r.kind },
            el("td", { class: "ms" }, `+${r.ms - turn.start} ms`),
            el("td", { class: `kind ${cls}`, style: "background:none" }, label),
            el("td", { class: "muted" }, detail.length > 160 ? `${detail.slice(0, 160)}…` : detail),
          );
        }),
      );
      return el(
        "section",
        { class: "turn", "data-turn": turn.id ?? "" },
        el("h2", {}, turn.id === undefined ? "between turns" : `turn ${turn.id}`),
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
  const res = await fetch(
    `/v1/sessions/${sessionId}/timeline?token=${encodeURIComponent(await token())}`,
  );
  if (!res.ok) {
    $("legend").textContent = `timeline: ${res.status} ${await res.text()}`;
    return;
  }
  draw(await res.json());
}
$("reload").onclick = load;
await load();
