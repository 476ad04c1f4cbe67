/**
 * liveline/testing: an app's agent, tested in a few lines of vitest. `startGateway()` runs the
 * app's own Worker (its wrangler.toml, through wrangler's `unstable_startWorker`) with the
 * simulator standing in for the model; `gateway.session()` scripts which tools the model
 * calls on each turn; `session.say()` plays one turn over a real WebSocket (liveline/client)
 * and returns what the model said and called. Node only (it starts workerd).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type LivelineClient } from "../client/client.js";
import type { ClientTool, SessionEvent } from "../client/events.js";

export interface GatewayOptions {
  /** The app's wrangler config (default `wrangler.toml` in the working directory). */
  config?: string | undefined;
  /** Extra vars for the Worker (strings, as in wrangler.toml). */
  vars?: Record<string, string> | undefined;
}

export interface SessionOptions {
  agent?: string | undefined;
  /**
   * Which tools the model calls on each user turn (1-based; `"*"` for the rest); the
   * simulator's own script when absent (see the simulator's README).
   */
  calls?: Partial<Record<number | "*", readonly string[]>> | undefined;
  /** Other simulator knobs (e.g. `{ race: 1, emptyRate: 0.5 }`). */
  knobs?: Record<string, string | number> | undefined;
  /** Client tools the test answers (a chips tool, the user's profile…). */
  tools?: Record<string, ClientTool> | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** One user turn, as the client saw it. */
export interface Turn {
  turnId: string;
  /** Everything the model said in the turn (text and transcripts), joined. */
  text: string;
  toolCalls: { name: string; args: Record<string, unknown>; runOn: "server" | "client" }[];
  toolResults: { name: string; result?: unknown; error?: string }[];
  end: "turn_complete" | "interrupted";
  /** Every durable frame of the turn, in order. */
  frames: SessionEvent[];
}

export interface TestSession {
  readonly sessionId: string;
  /** Says `text` and resolves when its turn has ended (and `settleMs` more passed). */
  say(text: string, opts?: { timeoutMs?: number; settleMs?: number }): Promise<Turn>;
  /** Every durable frame so far. */
  readonly events: readonly SessionEvent[];
  history(): Promise<{ events: Record<string, unknown>[]; turns: unknown[] }>;
  close(): void;
}

export interface Gateway {
  readonly url: string;
  session(opts?: SessionOptions): Promise<TestSession>;
  stop(): Promise<void>;
}

/** What of wrangler's `unstable_startWorker` this uses (imported when a gateway starts). */
interface StartedWorker {
  ready: Promise<void>;
  url: Promise<URL>;
  dispose(): Promise<void>;
}

interface Wrangler {
  unstable_startWorker(options: unknown): Promise<StartedWorker>;
}

/** The app's Worker on a free local port, its storage in `state` (removed if it fails to start). */
async function startWorker(
  wrangler: Wrangler,
  state: string,
  opts: GatewayOptions,
  vars: Record<string, string>,
): Promise<StartedWorker> {
  try {
    const worker = await wrangler.unstable_startWorker({
      config: opts.config ?? "wrangler.toml",
      dev: {
        server: { hostname: "127.0.0.1", port: 0 },
        inspector: false,
        watch: false,
        persist: state,
      },
      bindings: Object.fromEntries(
        Object.entries(vars).map(([k, v]) => [k, { type: "plain_text", value: v }]),
      ),
    });
    await worker.ready;
    return worker;
  } catch (err) {
    await rm(state, { recursive: true, force: true });
    throw err;
  }
}

export async function startGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  process.env.WRANGLER_SEND_METRICS ??= "false";
  const wrangler = (await import("wrangler")) as unknown as Wrangler;
  const apiKey = `test-${crypto.randomUUID()}`;
  const vars: Record<string, string> = {
    API_KEY: apiKey,
    TOKEN_SECRET: crypto.randomUUID(),
    // The simulator is the model, whatever keys the app's .dev.vars holds.
    PROVIDER: "simulator",
    ...opts.vars,
  };
  // Storage of its own: `npm run dev` beside it keeps .wrangler/state (two workerd processes on
  // one SQLite file fail with SQLITE_BUSY), and each run starts from empty storage.
  const state = await mkdtemp(join(tmpdir(), "liveline-test-"));
  const worker = await startWorker(wrangler, state, opts, vars);
  const base = (await worker.url).toString().replace(/\/$/, "");
  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };

  return {
    url: base,
    async session(s: SessionOptions = {}) {
      const simulator: Record<string, string | number> = { timeScale: 0, ...s.knobs };
      if (s.calls !== undefined) simulator.calls = callScript(s.calls);
      const created = await api("/v1/sessions", {
        method: "POST",
        body: JSON.stringify({
          ...(s.agent === undefined ? {} : { agent: s.agent }),
          metadata: { ...s.metadata, simulator },
        }),
      });
      const sessionId = String(created.sessionId);
      return testSession(sessionId, base, api, s.tools);
    },
    async stop() {
      await worker.dispose();
      await rm(state, { recursive: true, force: true });
    },
  };
}

/** `{1: ["a"], 2: ["b", "c"], "*": []}` as the simulator's `calls` knob. */
function callScript(calls: Partial<Record<number | "*", readonly string[]>>): string {
  return Object.entries(calls)
    .map(([turn, names]) => `${turn}:${(names ?? []).join(",")}`)
    .join(";");
}

function testSession(
  sessionId: string,
  base: string,
  api: (path: string, init?: RequestInit) => Promise<Record<string, unknown>>,
  tools: Record<string, ClientTool> | undefined,
): TestSession {
  const events: SessionEvent[] = [];
  const waiters = new Set<() => void>();
  const client: LivelineClient = connect({
    baseUrl: base,
    sessionId,
    getToken: async () =>
      String((await api(`/v1/sessions/${sessionId}/token`, { method: "POST" })).token),
    tools,
    onEvent: (e) => {
      events.push(e);
      for (const wake of waiters) wake();
    },
  });
  const until = (done: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (done()) return resolve();
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
    });

  return {
    sessionId,
    events,
    async say(text, o = {}) {
      const from = events.length;
      client.sendText(text);
      const timeoutMs = o.timeoutMs ?? 15_000;
      const mine = () => events.slice(from).find((e) => e.type === "user" && e.text === text);
      await until(() => mine() !== undefined, timeoutMs, `no user turn for "${text}"`);
      const turnId = (mine() as Extract<SessionEvent, { type: "user" }>).turnId;
      const end = () =>
        events.find(
          (e) => (e.type === "turn_complete" || e.type === "interrupted") && e.turnId === turnId,
        );
      await until(() => end() !== undefined, timeoutMs, `turn ${turnId} did not end`);
      if ((o.settleMs ?? 0) > 0) await new Promise((r) => setTimeout(r, o.settleMs));
      const frames = events.filter((e) => "turnId" in e && e.turnId === turnId);
      return {
        turnId,
        text: frames
          .map((f) => (f.type === "text" || f.type === "transcript" ? f.text : ""))
          .join(""),
        toolCalls: frames.flatMap((f) =>
          f.type === "tool_call" ? [{ name: f.name, args: f.args, runOn: f.runOn }] : [],
        ),
        toolResults: frames.flatMap((f) =>
          f.type === "tool_result"
            ? [
                {
                  name: f.name,
                  ...(f.error === undefined ? { result: f.result } : { error: f.error }),
                },
              ]
            : [],
        ),
        end: end()!.type as Turn["end"],
        frames,
      };
    },
    history: async () =>
      (await api(`/v1/sessions/${sessionId}/history`)) as unknown as {
        events: Record<string, unknown>[];
        turns: unknown[];
      },
    close: () => client.close(),
  };
}
