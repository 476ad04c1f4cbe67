/**
 * A recorded model wire played back against a gateway (`npm run replay`, and the fixtures'
 * replays in npm test). The model side is scripted from the recording: a WebSocket server
 * (ScriptedModel) that plays each recorded connection's frames from the model, each once the
 * gateway has sent what preceded it on the wire (its non-audio frames, counted) and after the
 * recorded gap. The client side is scripted from the recorded client frames: each client
 * connects, sends and leaves at its recorded moment, a frame once the durable frames before
 * it have reached it. `speed` compresses the gaps (2: twice as fast). Then the guarantees are
 * checked on what the gateway recorded: one reply per turn, every result once, no split pair,
 * and the same durable frames as the recording's.
 *
 * A recording's client audio is its length only: it is played as that much silence (the model
 * is scripted, so what was said does not change what it says).
 */
import { WebSocketServer } from "ws";
import { validateHistory } from "../../src/history/validate.ts";
import { WireHeader } from "../../src/recording/layout.ts";
import { WireEntry } from "../../src/recording/wire-format.ts";
import { frameOf } from "../../src/vocabulary/frames.ts";
import { API_KEY, createSession, history } from "./harness.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A frame to the model that carries the user's audio (not counted: how many chunks a replay
 * sends depends on its pacing, not on what the model was answering).
 */
const AUDIO_TO_MODEL =
  /^\s*\{\s*"(realtimeInput"\s*:\s*\{\s*"(audio|mediaChunks)"|type"\s*:\s*"(input_audio_buffer\.append|session\.input_audio\.append)")/;

/** How long a model frame waits for the gateway's frame it followed, past its recorded gap. */
const TRIGGER_GRACE_MS = 3000;

/** A wire recording (GET …/recording?kind=wire) read: its header and its entries. */
export function readWireRecording(text) {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) throw new Error("an empty recording");
  const header = WireHeader.parse(JSON.parse(lines[0]));
  const entries = lines.slice(1).map((line, i) => {
    const parsed = WireEntry.safeParse(JSON.parse(line));
    if (!parsed.success) throw new Error(`entry ${i + 1}: ${parsed.error.message}`);
    return parsed.data;
  });
  return { header, entries };
}

/** The durable frames a recording holds, in order (by seq, each once). */
export function recordedDurable({ entries }) {
  const bySeq = new Map();
  for (const e of entries) if (e.dir === "durable") bySeq.set(e.frame.seq, e.frame);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Each recorded model connection's script: what the model sent, and what each waited for. */
function modelScripts(entries) {
  const scripts = new Map();
  const scriptOf = (conn, ms) => {
    let script = scripts.get(conn);
    if (script === undefined) {
      script = { conn, openedMs: ms, items: [], outCount: 0, lastOutMs: ms };
      scripts.set(conn, script);
    }
    return script;
  };
  for (const e of entries) {
    if (e.dir === "model_open") scriptOf(e.conn, e.ms);
    else if (e.dir === "to_model") {
      const script = scriptOf(e.conn, e.ms);
      if (e.text === undefined || !AUDIO_TO_MODEL.test(e.text)) {
        script.outCount++;
        script.lastOutMs = e.ms;
      }
    } else if (e.dir === "from_model" || (e.dir === "model_closed" && e.by === "model")) {
      const script = scriptOf(e.conn, e.ms);
      script.items.push({ entry: e, after: script.outCount, afterMs: script.lastOutMs });
    }
  }
  return [...scripts.values()].sort((a, b) => a.openedMs - b.openedMs);
}

/**
 * The model side: a WebSocket server whose n-th connection plays the recording's n-th model
 * connection. `stats` says how many frames were sent, and how many went without the gateway's
 * frame they had followed (the gateway sent less than the recorded session did).
 */
export class ScriptedModel {
  stats = { connections: 0, sent: 0, untriggered: 0 };
  #scripts;
  #speed;
  #server = null;
  #sockets = new Set();
  #done = [];

  constructor(recording, { speed = 1 } = {}) {
    this.#scripts = modelScripts(recording.entries);
    this.#speed = speed;
  }

  /** Listens on a free loopback port; its ws:// URL. */
  async listen() {
    this.#server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise((ok) => this.#server.once("listening", ok));
    this.#server.on("connection", (ws) => this.#play(ws, this.#scripts[this.stats.connections++]));
    return `ws://127.0.0.1:${this.#server.address().port}`;
  }

  /** Every connection's script played to its end (or its socket gone). */
  async finished() {
    await Promise.all(this.#done);
  }

  async close() {
    for (const ws of this.#sockets) ws.terminate();
    await new Promise((ok) => this.#server?.close(() => ok()) ?? ok());
  }

  #play(ws, script) {
    this.#sockets.add(ws);
    let received = 0;
    let wake = null;
    let gone = false;
    ws.on("message", (data, isBinary) => {
      const text = isBinary ? null : data.toString();
      if (text === null || !AUDIO_TO_MODEL.test(text)) received++;
      if (process.env.REPLAY_DEBUG)
        console.log("gateway→model", received, (text ?? "<binary>").slice(0, 120));
      wake?.();
    });
    ws.on("close", () => {
      gone = true;
      this.#sockets.delete(ws);
      wake?.();
    });
    if (script === undefined) return; // a connection the recording never had: silent
    const scale = 1 / this.#speed;
    const run = async () => {
      let lastMs = script.openedMs;
      for (const item of script.items) {
        const { entry } = item;
        // Wait for the gateway's frame this one followed (or give up on it: then it goes anyway).
        const deadline = Date.now() + (Math.max(0, entry.ms - lastMs) * scale + TRIGGER_GRACE_MS);
        while (received < item.after && !gone && Date.now() < deadline)
          await new Promise((ok) => {
            wake = ok;
            setTimeout(ok, Math.max(1, deadline - Date.now()));
          });
        if (gone) return;
        if (received < item.after) this.stats.untriggered++;
        await sleep(Math.max(0, entry.ms - Math.max(lastMs, item.afterMs)) * scale);
        lastMs = entry.ms;
        if (gone) return;
        if (entry.dir === "model_closed") {
          ws.close(entry.code, entry.reason);
          return;
        }
        const payload =
          entry.base64 !== undefined
            ? Buffer.from(entry.base64, "base64")
            : entry.binary
              ? Buffer.from(entry.text ?? "", "utf8")
              : (entry.text ?? "");
        ws.send(payload, { binary: typeof payload !== "string" });
        if (process.env.REPLAY_DEBUG)
          console.log(
            "model→gateway",
            item.after,
            received,
            String(payload).slice(0, 80).replace(/\s+/g, " "),
          );
        this.stats.sent++;
      }
    };
    this.#done.push(run());
  }
}

/** One replayed client: a socket to the session, and the durable frames it got. */
class ReplayClient {
  frames = [];
  ws;
  ready;

  constructor(url) {
    this.ws = new WebSocket(url);
    this.ws.binaryType = "arraybuffer";
    this.ready = new Promise((ok, fail) => {
      this.ws.addEventListener("error", () => fail(new Error(`cannot open ${url}`)), {
        once: true,
      });
      this.ws.addEventListener("message", (e) => {
        if (typeof e.data !== "string") return;
        const frame = JSON.parse(e.data);
        if (frame.type === "ready") ok(frame);
        if (typeof frame.seq === "number") this.frames.push(frame);
      });
    });
    this.ready.catch(() => {});
  }

  send(data) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
  }

  close() {
    try {
      this.ws.close(1000, "replay: the recorded client left");
    } catch {
      // closed
    }
  }
}

/**
 * What the recorded clients did, with the durable seq each step waited for; and the session's
 * end (its `ended` status, which the app's DELETE caused) as a last step.
 */
function clientScript(entries) {
  let lastSeq = 0;
  let lastSeqMs = 0;
  const steps = [];
  for (const e of entries) {
    if (e.dir === "durable" && e.frame.type === "status" && e.frame.state === "ended") {
      steps.push({
        entry: { ms: e.ms, dir: "session_end", client: "" },
        afterSeq: lastSeq,
        afterMs: lastSeqMs,
      });
      lastSeq = Math.max(lastSeq, e.frame.seq);
      lastSeqMs = e.ms;
    } else if (e.dir === "durable") {
      lastSeq = Math.max(lastSeq, e.frame.seq);
      lastSeqMs = e.ms;
    } else if (e.dir === "client_connected" || e.dir === "client" || e.dir === "client_left")
      steps.push({ entry: e, afterSeq: lastSeq, afterMs: lastSeqMs });
  }
  return steps;
}

/**
 * Plays the recorded clients against the session at `wsUrl`, into `clients` (by recorded id);
 * `end` ends the session (as the app's DELETE did).
 */
async function playClients(steps, wsUrl, speed, clients, end) {
  const scale = 1 / speed;
  // The highest seq any replayed client has got (clients that left included).
  let highest = 0;
  const left = [];
  const seen = () =>
    Math.max(highest, ...[...clients.values(), ...left].flatMap((c) => c.frames.map((f) => f.seq)));
  const lastMs = new Map();
  const waitSeq = async (seq) => {
    const deadline = Date.now() + 10_000;
    while (seen() < seq && Date.now() < deadline) await sleep(10);
  };
  const started = Date.now();
  let firstMs = null;
  for (const { entry, afterSeq, afterMs } of steps) {
    const id = entry.client;
    firstMs ??= entry.ms;
    const audio = entry.dir === "client" && entry.audioBytes !== undefined;
    // Audio streams at its pace; anything else waits for the frames that came before it.
    if (!audio) await waitSeq(afterSeq);
    const from = Math.max(lastMs.get(id) ?? firstMs, audio ? 0 : afterMs);
    const due = audio
      ? started + (entry.ms - firstMs) * scale
      : Date.now() + Math.max(0, entry.ms - from) * scale;
    await sleep(Math.max(0, due - Date.now()));
    lastMs.set(id, entry.ms);
    if (entry.dir === "session_end") await end();
    else if (entry.dir === "client_connected") {
      const resume = entry.resumeFrom === null ? "" : `&resumeFrom=${entry.resumeFrom}`;
      const client = new ReplayClient(`${wsUrl}${resume}`);
      clients.set(id, client);
      await client.ready;
    } else if (entry.dir === "client_left") {
      const client = clients.get(id);
      client?.close();
      if (client !== undefined) left.push(client);
      clients.delete(id);
      highest = seen();
    } else if (audio) clients.get(id)?.send(new Uint8Array(entry.audioBytes));
    else clients.get(id)?.send(entry.text);
  }
}

/** The same frames, or the first difference (as the recording has it, as the replay does). */
export function sameFrames(recorded, replayed) {
  const length = Math.max(recorded.length, replayed.length);
  for (let i = 0; i < length; i++) {
    const a = JSON.stringify(recorded[i] ?? null);
    const b = JSON.stringify(replayed[i] ?? null);
    if (a !== b) return { same: false, at: i, recorded: recorded[i], replayed: replayed[i] };
  }
  return { same: true };
}

/** The model's words of a turn, said twice over (a reply generated again). */
function saidTwice(texts) {
  const said = texts.join("").replace(/\s+/g, " ").trim();
  if (said.length < 8) return false;
  const tags = said.match(/\[#r\d+\]/g) ?? [];
  if (new Set(tags).size !== tags.length) return true;
  const half = said.length / 2;
  return Number.isInteger(half) && said.slice(0, half).trim() === said.slice(half).trim();
}

/**
 * The guarantees, on a session's log (history events): each check's name, whether it held,
 * and what broke it.
 */
export function guarantees(events, recorded, replayed) {
  const ends = new Map();
  const texts = new Map();
  const calls = new Map();
  const outcomes = new Map();
  for (const e of events) {
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId, (ends.get(e.turnId) ?? 0) + 1);
    if (e.kind === "model_text" || e.kind === "transcript")
      texts.set(e.turnId, [...(texts.get(e.turnId) ?? []), e.text]);
    if (e.kind === "tool_call") calls.set(e.callId, (calls.get(e.callId) ?? 0) + 1);
    if (e.kind === "tool_result" || e.kind === "tool_cancelled")
      outcomes.set(e.callId, (outcomes.get(e.callId) ?? 0) + 1);
  }
  const turns = events.filter((e) => e.kind === "user").map((e) => e.turnId);
  const badTurns = turns.filter((t) => ends.get(t) !== 1 || saidTwice(texts.get(t) ?? []));
  const twice = [...calls].filter(([, n]) => n > 1).map(([id]) => id);
  const resultTwice = [...outcomes].filter(([, n]) => n > 1).map(([id]) => id);
  const split = validateHistory(events).filter((v) =>
    ["outcome_after_call", "outcome_same_turn", "one_outcome_per_call"].includes(v.rule),
  );
  const frames = sameFrames(recorded, replayed);
  return [
    {
      check: "one reply per turn",
      held: badTurns.length === 0,
      detail: badTurns.length === 0 ? `${turns.length} turns` : `turns ${badTurns.join(", ")}`,
    },
    {
      check: "every result once",
      held: twice.length === 0 && resultTwice.length === 0,
      detail:
        twice.length + resultTwice.length === 0
          ? `${calls.size} calls`
          : `run twice: ${twice.join(", ") || "none"}; two results: ${resultTwice.join(", ") || "none"}`,
    },
    {
      check: "no split pair",
      held: split.length === 0,
      detail: split.length === 0 ? "every result after its call" : split[0].message,
    },
    {
      check: "the same durable frames",
      held: frames.same,
      detail: frames.same
        ? `${replayed.length} frames`
        : `frame ${frames.at + 1}: recorded ${JSON.stringify(frames.recorded)}, replayed ${JSON.stringify(frames.replayed)}`,
    },
  ];
}

/**
 * Plays `recording` against the gateway at `server` ({base, ws}); `naive`: against its naive
 * relay (a simulator session's measurement arm). Resolves with the checks and what was seen.
 */
export async function replay(server, recording, { speed = 1, naive = false } = {}) {
  const { header, entries } = recording;
  const model = new ScriptedModel(recording, { speed });
  const modelUrl = await model.listen();
  try {
    const metadata = { ...header.metadata };
    // A call replays as an app's session: the durable frames are the same.
    delete metadata.telephony;
    if (header.provider === "simulator") {
      metadata.simulator = { ...(metadata.simulator ?? {}), replay: modelUrl };
      if (naive) metadata.naive = true;
      else delete metadata.naive;
    } else if (naive)
      throw new Error("--naive replays a simulator session only (the measurement arm)");
    const created = await createSession(server, {
      agent: header.agent,
      provider: header.provider,
      metadata,
      ...header.options,
      ...(Object.keys(header.limits).length > 0 ? { limits: header.limits } : {}),
    });
    const clients = new Map();
    const end = () =>
      fetch(`${server.base}/v1/sessions/${created.sessionId}`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${API_KEY}` },
      });
    await playClients(clientScript(entries), created.wsUrl, speed, clients, end);
    await Promise.race([model.finished(), sleep(10_000)]);
    const recorded = recordedDurable(recording);
    // The gateway's last frames, after the model's last: a settle of the recording's own tail.
    const lastRecordedMs = entries.at(-1)?.ms ?? 0;
    const lastModelMs = entries.findLast((e) => e.dir === "from_model")?.ms ?? lastRecordedMs;
    await sleep(Math.min(3000, Math.max(300, (lastRecordedMs - lastModelMs) / speed + 300)));
    const events = await history(server, created.sessionId);
    // Each log event as clients are sent it (the one mapping, live and in replay).
    const replayed = events.map((e) => frameOf(e));
    for (const c of clients.values()) c.close();
    return {
      sessionId: created.sessionId,
      checks: guarantees(events, recorded, replayed),
      recorded,
      replayed,
      events,
      model: model.stats,
    };
  } finally {
    await model.close();
  }
}

/** The checks as a table's rows. */
export function checkRows(checks) {
  return checks.map((c) => [c.check, c.held ? "held" : "BROKEN", c.detail]);
}

export { API_KEY };
