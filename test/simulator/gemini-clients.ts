/**
 * Clients of the Gemini simulator for the workerd tests: a raw socket, the naive relay that
 * frameworks use (ADK: results sent the moment they are ready, no scheduling, every
 * declaration BLOCKING by default), and the guarded client built from the pure session core.
 */
import { exports } from "cloudflare:workers";
import type { TimerId } from "../../src/core/effects.js";
import type { CoreInput } from "../../src/core/inputs.js";
import { type CoreState, defaultConfig, initialState } from "../../src/core/session-state.js";
import { checkedContext, rebuildContext } from "../../src/history/rebuild.js";
import { GeminiLiveAdapter } from "../../src/providers/gemini/adapter.js";
import type { GeminiToolSpec } from "../../src/providers/gemini/tool-declaration.js";
import { acceptUpgrade } from "../../src/providers/websocket.js";
import { SessionInterpreter } from "../../src/session/interpreter.js";
import { ModelConnection } from "../../src/session/model-connection.js";
import { nextRandom, seedState } from "../../src/simulator/prng.js";
import { frameOf } from "../../src/vocabulary/frames.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import type { ToolPolicy } from "../../src/vocabulary/model.js";

export const SIM_URL = "http://liveline.test/simulator/gemini";
/** Answer tags on: these clients find a reply generated twice by its tag (`[#rN]`). */
const TAGGED = "answerTags=1&";
export const MODEL = "gemini-2.5-flash-native-audio-preview-12-2025";
const utf8 = new TextDecoder();

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface WireFrame {
  binary: boolean;
  text: string;
}

/** A WebSocket to the simulator that queues every frame it gets. */
export class SimSocket {
  readonly frames: WireFrame[] = [];
  private cursor = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  closeInfo: { code: number; reason: string } | null = null;
  onFrame: (frame: WireFrame) => void = () => {};

  constructor(readonly ws: WebSocket) {
    ws.accept();
    ws.binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      const binary = typeof e.data !== "string";
      const frame = {
        binary,
        text: binary ? utf8.decode(e.data as ArrayBuffer) : (e.data as string),
      };
      this.frames.push(frame);
      this.onFrame(frame);
    });
    this.closed = new Promise((resolve) => {
      ws.addEventListener("close", (e) => {
        this.closeInfo = { code: e.code, reason: e.reason };
        resolve(this.closeInfo);
      });
    });
  }

  static async open(query: string): Promise<SimSocket> {
    const res = await exports.default.fetch(`${SIM_URL}?${TAGGED}${query}`, {
      headers: { Upgrade: "websocket" },
    });
    if (res.status !== 101 || res.webSocket === null) {
      throw new Error(`simulator upgrade failed: ${res.status} ${await res.text()}`);
    }
    return new SimSocket(res.webSocket);
  }

  /** The next frame not yet taken, waiting up to `ms`. */
  async next(ms = 2000): Promise<WireFrame> {
    const start = Date.now();
    while (this.cursor >= this.frames.length) {
      if (this.closeInfo !== null) throw new Error(`closed ${JSON.stringify(this.closeInfo)}`);
      if (Date.now() - start > ms) throw new Error(`no frame within ${ms} ms`);
      await sleep(1);
    }
    return this.frames[this.cursor++]!;
  }

  async nextJson(ms = 2000): Promise<Record<string, unknown>> {
    return JSON.parse((await this.next(ms)).text) as Record<string, unknown>;
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === "string" ? msg : JSON.stringify(msg));
  }

  close(): void {
    try {
      this.ws.close(1000, "done");
    } catch {
      // already closed
    }
  }
}

/** The greeting agent: two side effects (chips, a preference) and a lookup to be spoken. */
export const AGENT_TOOLS: Record<string, ToolPolicy> = {
  suggest_topics: {
    name: "suggest_topics",
    runOn: "client",
    followUp: "silent",
    timeoutMs: 10_000,
  },
  set_preference: { name: "set_preference", runOn: "server", followUp: "silent", timeoutMs: 5_000 },
  lookup_faq: { name: "lookup_faq", runOn: "server", followUp: "speak", timeoutMs: 5_000 },
};

const PARAMS = { type: "object", properties: { topic: { type: "string" } } };

/** Declarations as liveline sends them: silent tools NON_BLOCKING, speak tools BLOCKING. */
export function guardedSpecs(): GeminiToolSpec[] {
  return Object.values(AGENT_TOOLS).map((t) => ({
    name: t.name,
    description: `${t.name} tool`,
    parameters: PARAMS,
    behavior: t.followUp === "silent" ? "NON_BLOCKING" : "BLOCKING",
  }));
}

/** Declarations as a framework sends them by default: no behavior (BLOCKING). */
export function naiveSpecs(): GeminiToolSpec[] {
  return Object.values(AGENT_TOOLS).map((t) => ({
    name: t.name,
    description: `${t.name} tool`,
    parameters: PARAMS,
  }));
}

/** What the in-test tools return. */
export function runAgentTool(name: string, args: Record<string, unknown>): Record<string, unknown> {
  switch (name) {
    case "suggest_topics":
      return { shown: ["weather", "news", "music"] };
    case "set_preference":
      return { saved: true };
    case "lookup_faq":
      return { answer: `FAQ entry for ${String(args.topic ?? "?")}` };
    default:
      return { error: "unknown tool" };
  }
}

/** Seeded small delays, so tools finish in a seed-dependent order. */
class Delays {
  private rng: number;
  constructor(seed: number) {
    this.rng = seedState(seed * 7919 + 13);
  }
  next(): number {
    const { value, state } = nextRandom(this.rng);
    this.rng = state;
    return Math.floor(value * 3);
  }
}

/**
 * The naive relay: runs each call the moment it arrives and sends its result as soon as it
 * is ready, one toolResponse per result, without scheduling; shows every text it receives.
 */
export class NaiveClient {
  readonly adapter = new GeminiLiveAdapter({ model: MODEL, endpoint: "developer" });
  text = "";
  turnCompletes = 0;
  callsSeen = 0;
  resultsSent = 0;
  private readonly delays: Delays;

  private constructor(
    readonly sock: SimSocket,
    seed: number,
  ) {
    this.delays = new Delays(seed);
    sock.onFrame = (frame) => this.onFrame(frame);
  }

  static async start(query: string, seed: number): Promise<NaiveClient> {
    const sock = await SimSocket.open(query);
    const client = new NaiveClient(sock, seed);
    sock.send(client.adapter.setupMessage({ tools: naiveSpecs(), responseModality: "TEXT" }));
    await client.until(() => sock.frames.length > 0, "setupComplete");
    return client;
  }

  private onFrame(frame: WireFrame): void {
    const decoded = this.adapter.decode(frame.text);
    if (!decoded.ok) throw new Error(decoded.error.message);
    for (const event of decoded.events) {
      if (event.type === "text_delta" || event.type === "transcript_delta") this.text += event.text;
      else if (event.type === "turn_complete") this.turnCompletes++;
      else if (event.type === "tool_call") {
        for (const call of event.calls) {
          this.callsSeen++;
          setTimeout(() => {
            const result = runAgentTool(call.name, call.args);
            for (const out of this.adapter.encode({
              type: "tool_responses",
              responses: [{ callId: call.id, name: call.name, result }],
            })) {
              this.sock.send(out);
            }
            this.resultsSent++;
          }, this.delays.next());
        }
      }
    }
  }

  say(text: string): void {
    for (const out of this.adapter.encode({ type: "user_text", text })) this.sock.send(out);
  }

  async until(pred: () => boolean, what: string, ms = 3000): Promise<void> {
    const start = Date.now();
    while (!pred()) {
      if (Date.now() - start > ms) throw new Error(`naive client: no ${what} within ${ms} ms`);
      if (this.sock.closeInfo !== null)
        throw new Error(`closed: ${JSON.stringify(this.sock.closeInfo)}`);
      await sleep(1);
    }
  }

  /** Waits until no frame has arrived for `ms` (with timeScale 0 the simulator answers at once). */
  async quiet(ms = 30): Promise<void> {
    let seen = -1;
    let since = Date.now();
    for (;;) {
      if (this.sock.frames.length !== seen) {
        seen = this.sock.frames.length;
        since = Date.now();
      } else if (Date.now() - since >= ms) return;
      await sleep(2);
    }
  }

  /** Sends `text` and waits for the model's answer to it (its echo) and that turn's end. */
  async probe(text: string): Promise<void> {
    const before = this.turnCompletes;
    this.say(text);
    await this.until(() => this.text.includes(text) && this.turnCompletes > before, "probe reply");
    const at = this.turnCompletes;
    await this.until(() => this.turnCompletes >= at, "probe end");
  }
}

/**
 * The guarded client: the session core run by the production interpreter
 * (src/session/interpreter.ts) over the production model link (ModelConnection, with the
 * GeminiLiveAdapter's close classification and the rebuilt-context seed) on a real socket to
 * the simulator. Only the ports differ from the Durable Object: the log is an array, the
 * app's side (client tools) and the agent's server tools answer in-test after a seeded delay,
 * and the core's timers run on a virtual clock, fired when nothing else is in flight.
 */
export class GuardedClient {
  now = Date.now();
  readonly timers = new Map<TimerId, number>();
  readonly records: HistoryEvent[] = [];
  /** Every piece of model text on the wire, forwarded or not. */
  wireText = "";
  private readonly interpreter: SessionInterpreter;
  private readonly link: ModelConnection;
  private inFlight = 0;
  private lastActivity = Date.now();
  private readonly delays: Delays;
  private failure: Error | null = null;

  constructor(
    private readonly query: string,
    seed: number,
  ) {
    const state = initialState(defaultConfig({ sessionId: `g${seed}`, tools: AGENT_TOOLS }));
    this.delays = new Delays(seed);
    const capabilities = state.config.capabilities;
    const target = {
      target: {
        connect: async () => {
          this.inFlight++;
          try {
            return await acceptUpgrade(
              exports.default.fetch(`${SIM_URL}?${TAGGED}${this.query}`, {
                headers: { Upgrade: "websocket" },
              }),
            );
          } finally {
            this.inFlight--;
          }
        },
        adapter: () =>
          new GeminiLiveAdapter({
            model: MODEL,
            endpoint: "developer",
            capabilities,
            setup: { tools: guardedSpecs(), responseModality: "TEXT" },
          }),
      },
      spec: { systemInstruction: "", tools: [] },
    };
    // One agent: no handoff, nothing to retarget.
    this.link = new ModelConnection("guarded", () => target, {
      protocolError: (message) => {
        this.failure = new Error(message);
      },
    });
    // The link's inputs (its events as the core's `model` inputs), the model's words noted.
    this.link.deliverTo({
      handleInput: (input) => {
        if (
          input.type === "model" &&
          (input.event.type === "text_delta" || input.event.type === "transcript_delta")
        )
          this.wireText += input.event.text;
        this.input(input);
      },
    });
    this.interpreter = new SessionInterpreter(state, {
      log: {
        append: (events) => {
          this.records.push(...events);
          // The app answers client tools.
          for (const e of events) {
            if (e.kind === "tool_call" && e.runOn === "client") {
              this.later(() =>
                this.input({
                  type: "client_tool_result",
                  clientId: "app",
                  callId: e.callId,
                  result: runAgentTool(e.name, e.args),
                }),
              );
            }
          }
        },
        readAfter: (seq) => this.records.filter((e) => e.seq > seq),
        framesAfter: (seq) =>
          this.records.filter((e) => e.seq > seq).map((e) => JSON.stringify(frameOf(e))),
        lastSeq: () => this.records.at(-1)?.seq ?? 0,
        hasTextId: (textId) => this.records.some((e) => e.kind === "user" && e.textId === textId),
        trace: () => {},
        addUsage: () => {},
      },
      clients: {
        broadcast: () => {},
        send: () => {},
        sendEncoded: () => {},
        audio: () => {},
        closeAll: () => {},
      },
      model: this.link,
      tools: {
        run: (_callId, name, args) =>
          new Promise((resolve) => this.later(() => resolve({ result: runAgentTool(name, args) }))),
        abort: () => {},
      },
      timers: {
        set: (timer, at) => {
          this.timers.set(timer, at);
        },
        clear: (timer) => {
          this.timers.delete(timer);
        },
      },
      clock: () => this.now,
      rebuild: (events) => checkedContext(rebuildContext(events)).context,
      reportError: (message) => {
        this.failure = new Error(message);
      },
    });
  }

  get state(): CoreState {
    return this.interpreter.state;
  }

  input(input: CoreInput): void {
    this.lastActivity = Date.now();
    this.interpreter.handleInput(input, true);
  }

  private later(fn: () => void): void {
    this.inFlight++;
    setTimeout(() => {
      this.inFlight--;
      try {
        fn();
      } catch (err) {
        this.failure = err as Error;
      }
    }, this.delays.next());
  }

  /** Waits for `pred`, firing the earliest core timer whenever everything else is quiet. */
  async until(pred: () => boolean, what: string, ms = 5000): Promise<void> {
    const start = Date.now();
    while (!pred()) {
      if (this.failure !== null) throw this.failure;
      if (Date.now() - start > ms) throw new Error(`guarded client: no ${what} within ${ms} ms`);
      await sleep(1);
      // The watchdog (15 s of model silence) is left to real time: firing it early, while the
      // simulator is still pacing its reply, would declare a working model silent.
      const due = [...this.timers].filter(([timer]) => timer !== "watchdog");
      if (this.inFlight === 0 && due.length > 0 && Date.now() - this.lastActivity > 15) {
        const [timer, at] = due.sort((a, b) => a[1] - b[1])[0]!;
        this.timers.delete(timer);
        this.now = Math.max(this.now, at);
        this.input({ type: "timer_fired", timer });
      }
    }
    if (this.failure !== null) throw this.failure;
  }

  turnEnded(turnId: string): boolean {
    return this.records.some(
      (e) => (e.kind === "turn_complete" || e.kind === "interrupted") && e.turnId === turnId,
    );
  }

  /** What the user saw of a turn: the model text forwarded for it. */
  visibleText(turnId: string): string {
    return this.records
      .flatMap((e) =>
        (e.kind === "model_text" || e.kind === "transcript") && e.turnId === turnId ? [e.text] : [],
      )
      .join("");
  }

  runningCalls(): number {
    return Object.values(this.state.calls).filter((c) => c.status === "running").length;
  }

  async connect(): Promise<void> {
    this.input({ type: "client_connected", clientId: "app" });
    await this.until(() => this.state.upstream.phase === "live", "live upstream");
  }

  say(text: string): void {
    this.input({ type: "client_text", clientId: "app", text });
  }

  close(): void {
    this.input({ type: "end_session" });
  }
}

export function tagCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/\[#r\d+\]/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return counts;
}

/** The same answer (by its id) generated twice. */
export function hasDuplicate(text: string): boolean {
  return [...tagCounts(text).values()].some((n) => n >= 2);
}

export function occurrences(text: string, phrase: string): number {
  return text.split(phrase).length - 1;
}
