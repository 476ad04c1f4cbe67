/**
 * Shared by scripts/repro.ts, bench.ts and soak.ts: starts `wrangler dev` on a free
 * loopback port and stops it (also on failure and Ctrl-C), a small WebSocket client, CLI
 * flags, a seeded PRNG, a progress line and table printing.
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join as joinPath, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheable, cached, copyEntry, entryKey } from "./start-cache.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const API_KEY = "bench-api-key";
export const TOKEN_SECRET = "bench-token-secret";

// ---------------------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------------------

export function flags(argv = process.argv.slice(2)) {
  const out = new Map();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) continue;
    const [k, v] = a.slice(2).split("=", 2);
    if (v !== undefined) out.set(k, v);
    else if (argv[i + 1] !== undefined && !argv[i + 1].startsWith("--")) out.set(k, argv[++i]);
    else out.set(k, true);
  }
  return out;
}

export function numFlag(f, name, fallback) {
  const v = f.get(name);
  if (v === undefined || v === true) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} must be a number, got ${v}`);
  return n;
}

// ---------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------

export async function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => ok(port));
    });
  });
}

/** Each running `wrangler dev`, and its state directory (null: kept, its log is wanted). */
const running = new Map();
let hooked = false;
function killAll() {
  for (const [child, state] of running) {
    // Our own child's process group (wrangler and the workerd it started), by its id.
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // gone
    }
    // An interrupted run leaves no state behind either (the bench's is on tmpfs: memory).
    // The exiting process cannot wait for workerd to let go of it: a detached shell does.
    if (state !== null && !process.env.KEEP_WRANGLER_STATE && child.pid) {
      spawn(
        "sh",
        [
          "-c",
          'while kill -0 -"$1" 2>/dev/null; do sleep 0.2; done; rm -rf "$2"',
          "sh",
          String(child.pid),
          state,
        ],
        { detached: true, stdio: "ignore" },
      ).unref();
    }
  }
  running.clear();
}
function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** The greeter with the naive relay as a second arm (what `npm run repro` compares). */
export const MEASUREMENT_WORKER = joinPath(ROOT, "scripts/measurement/worker.ts");

/**
 * `wrangler dev` on a free loopback port, with fixed test secrets, a throwaway state
 * directory and no telemetry; resolves once GET /health answers. `restartOf`: a server this
 * one replaces, on the same state and bundle (a gateway killed and started again, as a
 * deploy resets every object): nothing is bundled or migrated again.
 */
export async function startServer(opts = {}) {
  hookExit();
  const port = opts.port ?? (await freePort());
  const again = opts.restartOf;
  // `stateRoot`: where wrangler keeps the objects' SQLite files (the bench uses tmpfs).
  // `state`: an earlier run's state to start on (a restart, as a deploy does); kept at stop.
  // `restartOf`: a killed server's state and bundle, owned from now on by this one.
  const state =
    again?.state ??
    opts.state ??
    mkdtempSync(joinPath(opts.stateRoot ?? tmpdir(), "liveline-bench-"));
  const log = joinPath(
    state,
    again === undefined && opts.state === undefined ? "wrangler.log" : `wrangler-${Date.now()}.log`,
  );
  const out = openSync(log, "w");
  const vars = { API_KEY, TOKEN_SECRET, ...opts.vars };
  // The simulator's answers end with a tag [#rN], by which the tests and the measuring scripts
  // find a reply said twice; `answerTags: false` serves them as people read them (the demo).
  if (opts.answerTags !== false)
    vars.SIMULATOR_KNOBS = ["answerTags=1", vars.SIMULATOR_KNOBS ?? ""].filter(Boolean).join("&");
  const wrangler = joinPath(ROOT, "node_modules/wrangler/bin/wrangler.js");
  const config = opts.config ?? joinPath(ROOT, "wrangler.toml");
  // `main`: a Worker served in place of the config's own (the measurement worker of repro).
  const main = opts.main === undefined ? [] : [opts.main];
  // Bundle once into a throwaway directory and serve that bundle: `wrangler dev` would
  // otherwise watch src/ and reload (dropping every socket) whenever a source file changes
  // during a run.
  const run = (what, args) =>
    new Promise((ok, fail) => {
      const child = spawn(process.execPath, [wrangler, ...args, "--config", config], {
        cwd: opts.cwd ?? ROOT,
        stdio: ["ignore", out, out],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1" },
      });
      child.once("exit", (code) =>
        code === 0 ? ok() : fail(new Error(`${what} failed (${code}); see ${log}`)),
      );
    });
  // The repository's own Worker: its bundle and migrated database made once per sources
  // (scripts/lib/start-cache.mjs), not by every start.
  const cache = again === undefined && cacheable(ROOT, config, opts.cwd);
  const configText = readFileSync(config, "utf8");
  const bundling = async () => {
    if (again !== undefined) return again.bundle;
    const make = (dir) => run("bundling", ["deploy", "--dry-run", "--outdir", dir, ...main]);
    if (cache) return cached("bundle", entryKey(ROOT, config, configText, ...main), make);
    await make(joinPath(state, "bundle"));
    return joinPath(state, "bundle");
  };
  // The usage database's table, in this run's own state (as `npm run dev` applies it).
  const migrating = async () => {
    if (again !== undefined || !configText.includes('binding = "USAGE_DB"')) return;
    const apply = (dir) =>
      run("the usage database's migrations", [
        "d1",
        "migrations",
        "apply",
        "USAGE_DB",
        "--local",
        "--persist-to",
        dir,
      ]);
    if (cache)
      copyEntry(await cached("migrated", entryKey(ROOT, config, configText), apply), state);
    else await apply(state);
  };
  const [bundle] = await Promise.all([bundling(), migrating()]);
  const inspectorPort = await freePort();
  const args = [
    wrangler,
    "dev",
    joinPath(
      bundle,
      readdirSync(bundle).find((f) => f.endsWith(".js")),
    ),
    "--no-bundle",
    "--config",
    config,
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
    ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd ?? ROOT,
    detached: true,
    stdio: ["ignore", out, out],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_COLOR: "1" },
  });
  running.set(child, state);
  let exited = null;
  child.once("exit", (code, sig) => {
    exited = `wrangler exited (${code ?? sig}); see ${log}`;
    running.delete(child);
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) throw new Error(exited);
    if (Date.now() > deadline) {
      // Its log is what the error points to: kept.
      running.set(child, null);
      killAll();
      throw new Error(`wrangler dev did not answer /health within 90 s; see ${log}`);
    }
    try {
      const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) break;
    } catch {
      // not yet
    }
    await sleep(250);
  }
  return {
    base,
    ws: base.replace(/^http/, "ws"),
    port,
    pid: child.pid,
    inspectorPort,
    log,
    state,
    bundle,
    /** From spawning `wrangler dev` to its first answer on /health, in ms. */
    startMs: performance.now() - spawnedAt,
    /**
     * Kills the gateway at once (SIGKILL: no object gets to finish anything), keeping its
     * state for the server that restarts on it (`startServer({ restartOf })`).
     */
    async kill() {
      if (!running.has(child)) return;
      const gone = new Promise((ok) => child.once("exit", ok));
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
      await Promise.race([gone, sleep(5000)]);
      running.delete(child);
    },
    async stop() {
      if (!running.has(child)) return;
      const gone = new Promise((ok) => child.once("exit", ok));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone
      }
      await Promise.race([gone, sleep(5000)]);
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone
      }
      running.delete(child);
      if (!process.env.KEEP_WRANGLER_STATE && opts.state === undefined)
        rmSync(state, { recursive: true, force: true });
    },
  };
}

/** RSS of a process and its descendants (Linux /proc), in bytes. */
export async function treeRss(pid) {
  const { readdirSync, readFileSync } = await import("node:fs");
  const parents = new Map();
  const rss = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(d), Number(fields[1]));
      rss.set(Number(d), Number(fields[21]) * 4096);
    } catch {
      // exited
    }
  }
  let total = 0;
  for (const [p] of rss) {
    let q = p;
    while (q !== undefined && q > 1 && q !== pid) q = parents.get(q);
    if (q === pid) total += rss.get(p) ?? 0;
  }
  return total;
}

/** CPU time (user + system, ms) of the workerd processes under `pid`, from /proc. */
export async function treeCpuMs(pid, name = "workerd") {
  const { readdirSync, readFileSync } = await import("node:fs");
  const parents = new Map();
  const cpu = new Map();
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(d), Number(fields[1]));
      if (comm.startsWith(name))
        cpu.set(Number(d), (Number(fields[11]) + Number(fields[12])) * tick);
    } catch {
      // exited
    }
  }
  let total = 0;
  for (const [p, ms] of cpu) {
    let q = p;
    while (q !== undefined && q > 1 && q !== pid) q = parents.get(q);
    if (q === pid) total += ms;
  }
  return total;
}

// ---------------------------------------------------------------------------------------
// HTTP + WebSocket client
// ---------------------------------------------------------------------------------------

export async function createSession(server, body, key = API_KEY) {
  const res = await fetch(`${server.base}/v1/sessions`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST /v1/sessions: ${res.status} ${await res.text()}`);
  const created = await res.json();
  // wsUrl names the host the request came in on; use ours.
  const u = new URL(created.wsUrl);
  created.wsUrl = `${server.ws}${u.pathname}${u.search}`;
  return created;
}

export async function history(server, sessionId) {
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}/history`, {
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`history: ${res.status}`);
  return (await res.json()).events;
}

/** The whole `GET /v1/sessions/:id/timeline` body: `{ sessionId, startedAt, rows, stats? }`. */
export async function timelineBody(server, sessionId) {
  const res = await fetch(`${server.base}/v1/sessions/${sessionId}/timeline`, {
    headers: { Authorization: `Bearer ${API_KEY}` },
  });
  if (!res.ok) throw new Error(`timeline: ${res.status}`);
  return await res.json();
}

export async function timeline(server, sessionId) {
  return (await timelineBody(server, sessionId)).rows;
}

/** A client socket that queues frames; `status` frames go aside unless `keepStatus`. */
export class Client {
  frames = [];
  statuses = [];
  binary = 0;
  queue = [];
  waiters = [];
  closedWith = null;
  closed;
  opened;
  onFrame = null;
  onBinary = null;

  keepStatus;

  constructor(url, keepStatus = false) {
    this.keepStatus = keepStatus;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    this.opened = new Promise((ok, fail) => {
      ws.addEventListener("open", () => ok(), { once: true });
      ws.addEventListener("error", () => fail(new Error(`cannot open ${url}`)), { once: true });
    });
    this.opened.catch(() => {});
    this.closed = new Promise((ok) =>
      ws.addEventListener("close", (e) => {
        this.closedWith = { code: e.code, reason: e.reason };
        for (const w of this.waiters.splice(0)) w(null);
        ok(this.closedWith);
      }),
    );
    ws.addEventListener("message", (e) => {
      const at = performance.now();
      if (typeof e.data !== "string") {
        this.binary++;
        this.onBinary?.(e.data, at);
        return;
      }
      const frame = JSON.parse(e.data);
      this.frames.push(frame);
      this.onFrame?.(frame, at);
      if (frame.type === "status" && !this.keepStatus) {
        this.statuses.push(frame);
        return;
      }
      const w = this.waiters.shift();
      if (w) w(frame);
      else this.queue.push(frame);
    });
  }

  ws;

  /** The next frame; rejects after `ms` or when the socket closed. */
  next(ms = 5000) {
    const q = this.queue.shift();
    if (q) return Promise.resolve(q);
    if (this.closedWith) return Promise.reject(new Error("closed"));
    return new Promise((ok, fail) => {
      const waiter = (f) => {
        clearTimeout(timer);
        if (f) ok(f);
        else fail(new Error("closed"));
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        fail(new Error(`no frame within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  send(data) {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(
      typeof data === "object" && !(data instanceof ArrayBuffer) && !(data instanceof Uint8Array)
        ? JSON.stringify(data)
        : data,
    );
  }

  close(code = 1000) {
    try {
      this.ws.close(code, "done");
    } catch {
      // closed
    }
  }
}

/** Connects and waits for `ready` (first frame). */
export async function join(url, keepStatus = false) {
  const client = new Client(url, keepStatus);
  await client.opened;
  const ready = await client.next(10_000);
  if (ready.type !== "ready") throw new Error(`expected ready, got ${JSON.stringify(ready)}`);
  return { client, ready };
}

/**
 * The phone's side of a text turn: answers client tool calls (by `answer`), collects every
 * frame until the turn ends, then listens `settleMs` more for anything said after the turn.
 */
export async function playTurn(client, text, opts = {}) {
  const frames = [];
  client.send({ type: "text", text });
  let ended = false;
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    let frame;
    try {
      frame = await client.next(ended ? (opts.settleMs ?? 80) : Math.max(1, deadline - Date.now()));
    } catch {
      return { frames, ended };
    }
    frames.push(frame);
    if (frame.type === "tool_call" && frame.runOn === "client") {
      const results = opts.answer ? opts.answer(frame) : [{ shown: true }];
      for (const result of results ?? []) {
        client.send({ type: "tool_result", callId: frame.callId, result });
      }
    }
    if (frame.type === "turn_complete" || frame.type === "interrupted") ended = true;
    if (frame.type === "error" && frame.fatal === true) ended = true;
  }
}

export const textsOf = (frames) => frames.filter((f) => f.type === "text").map((f) => f.text);
export const turnEndsOf = (frames) =>
  frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");

/** A reply generated twice: the same text forwarded twice, or more than one turn end. */
export function duplicated(frames) {
  const texts = textsOf(frames);
  return new Set(texts).size !== texts.length || turnEndsOf(frames).length > 1;
}

// ---------------------------------------------------------------------------------------
// Small things
// ---------------------------------------------------------------------------------------

export const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** mulberry32: a seeded PRNG for choosing faults and knobs. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `fn` over `items` with at most `limit` at once. */
export async function pool(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** A one-line progress indicator on stderr (a TTY gets it rewritten in place). */
export function progress(label, done, total) {
  const line = `  ${label}: ${done}/${total}`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line}\x1b[K${done >= total ? "\n" : ""}`);
  else if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0)
    process.stderr.write(`${line}\n`);
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function pct(n, d) {
  if (d === 0) return "–";
  return `${((100 * n) / d).toFixed(n === 0 || n === d ? 0 : 1)} % (${n}/${d})`;
}

/** A GitHub-style Markdown table, columns padded. */
export function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [
    line(head),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...rows.map(line),
  ].join("\n");
}

/**
 * Writes bench-results/<name>; a quick run writes <base>.quick.json instead, so the quick
 * runs inside `npm test` do not overwrite the figures of a full run.
 */
export function writeJson(name, data, { quick = false } = {}) {
  const dir = joinPath(ROOT, "bench-results");
  mkdirSync(dir, { recursive: true });
  const path = joinPath(dir, quick ? name.replace(/\.json$/, ".quick.json") : name);
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}

export async function machine() {
  const os = await import("node:os");
  return {
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "?",
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** A WebSocket upgrade request's answer when it is not 101 (fetch refuses Upgrade headers). */
export function upgradeAnswer(url) {
  return new Promise((ok, fail) => {
    const req = httpRequest(url, {
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    req.on("upgrade", (_res, socket) => {
      socket.destroy();
      ok({ status: 101, body: "" });
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => ok({ status: res.statusCode, body }));
    });
    req.on("error", fail);
    req.end();
  });
}
