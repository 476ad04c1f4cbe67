import type { Config } from "../config.js";
import type { Effect, TimerId } from "../core/effects.js";
import type { CoreInput } from "../core/inputs.js";
import { restoreState } from "../core/restore.js";
import { step } from "../core/session-core.js";
import { ALL_GUARDS, type CoreState, defaultConfig, NO_GUARDS } from "../core/state.js";
import type { Env } from "../env.js";
import { checkedContext, rebuildContext } from "../history/rebuild.js";
import { rebuildContextNaive } from "../history/rebuild-naive.js";
import { closingEventsAfterRestart } from "../history/recover.js";
import { AGENTS } from "../tools/agents.js";
import type { AgentDefinition } from "../tools/define.js";
import { toolPolicies } from "../tools/define.js";
import type { HistoryEvent } from "../vocabulary/events.js";
import { frameOf, type ServerFrame } from "../vocabulary/frames.js";
import type { RebuiltContext } from "../vocabulary/model.js";
import { HistoryStore } from "./history-store.js";
import type { SessionMeta } from "./meta.js";
import { providerTarget } from "./provider-target.js";
import type { SessionResource, SessionStats } from "./session-api.js";
import { runServerTool } from "./tool-runner.js";
import { UpstreamLink } from "./upstream-link.js";
import { UsageStore } from "./usage-store.js";

/** How the shell reaches the session's client sockets. */
export interface ClientSockets {
  all(): WebSocket[];
  byId(clientId: string): WebSocket | undefined;
}

/**
 * The running session inside its Durable Object: the pure core plus everything that carries
 * out its effects — the log in SQLite, client sockets, the model connection, tool runs and
 * timers. Every input, whatever its source, goes through `input`, one at a time; the
 * object's single thread and synchronous SQLite make each step atomic.
 */
export class LiveSession {
  private state: CoreState;
  private readonly store: HistoryStore;
  private readonly usage: UsageStore;
  /** The model this session asks its provider for. */
  readonly model: string;
  private readonly agent: AgentDefinition;
  private readonly link: UpstreamLink;
  private readonly timers = new Map<TimerId, ReturnType<typeof setTimeout>>();
  private readonly tools = new Map<string, AbortController>();
  private readonly startedAt: number;
  private readonly rebuild: (events: readonly HistoryEvent[]) => RebuiltContext;
  private transactions = 0;
  private modelEvents = 0;

  constructor(
    storage: DurableObjectStorage,
    env: Env,
    config: Config,
    readonly meta: SessionMeta,
    private readonly sockets: ClientSockets,
    connectedClients: string[],
  ) {
    const naive = naiveRelay(meta);
    this.store = new HistoryStore(storage, !naive);
    this.usage = new UsageStore(storage);
    this.rebuild = naive ? rebuildContextNaive : rebuildContext;
    this.agent = AGENTS[meta.agent];
    this.startedAt = Date.parse(meta.createdAt);
    const provider = providerTarget({
      provider: meta.provider,
      config,
      env,
      sessionId: meta.sessionId,
      agent: this.agent,
      metadata: meta.metadata,
      naive,
    });
    this.model = provider.model;
    const coreConfig = defaultConfig({
      sessionId: meta.sessionId,
      guards: naive ? NO_GUARDS : ALL_GUARDS,
      tools: toolPolicies(this.agent, config.TOOL_TIMEOUT_MS),
      capabilities: provider.capabilities,
      idleTimeoutMs: config.IDLE_TIMEOUT_MS,
      modelTimeoutMs: config.MODEL_TIMEOUT_MS,
    });
    this.link = new UpstreamLink(provider.target, {
      opened: () => this.input({ type: "upstream_opened" }),
      events: (events) => {
        for (const event of events) this.input({ type: "model", event });
      },
      protocolError: (message) =>
        this.store.trace(Date.now(), "UPSTREAM_CLOSED", { protocolError: message }),
      closed: (code, reason, fatal) =>
        this.input({ type: "model", event: { type: "upstream_closed", code, reason, fatal } }),
      failed: (message) => this.input({ type: "upstream_failed", message }),
    });

    // A restarted object: what died with the old instance is closed honestly in the log.
    const events = this.store.readAfter(0);
    const now = Date.now();
    let seq = events.at(-1)?.seq ?? 0;
    const closing = closingEventsAfterRestart(events).map(
      (body) => ({ ...body, seq: ++seq, at: now }) as HistoryEvent,
    );
    if (closing.length > 0) {
      this.store.append(closing);
      for (const e of closing) this.broadcast(frameOf(e));
    }
    this.state = restoreState(coreConfig, [...events, ...closing]);
    this.state.clients = connectedClients;
  }

  /** The one entry of every input: step the core, then carry out its effects in order. */
  input(input: CoreInput): void {
    if (input.type === "model") this.modelEvents++;
    const now = Date.now();
    const { state, effects } = step(this.state, input, now);
    this.state = state;
    const unrecorded = new Set<number>();
    // The step's log writes go in one transaction before the effects that follow them are
    // carried out (frames sent after a write are held by the output gate until it is
    // durable). A replay reads the log, so writes are split at a replay.
    let segmentStart = 0;
    for (let i = 0; i <= effects.length; i++) {
      const effect = effects[i];
      if (effect !== undefined && effect.type !== "replay") continue;
      const segment = effects.slice(segmentStart, effect === undefined ? i : i + 1);
      segmentStart = i + 1;
      this.writeSegment(segment, unrecorded);
      for (const e of segment) {
        if (e.type === "append_history") continue;
        if (e.type === "send_durable" && unrecorded.has(e.frame.seq)) continue;
        try {
          this.carryOut(e, now);
        } catch (err) {
          // One failed effect must not take the session down with it.
          console.error(
            `liveline: ${e.type} failed: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
    }
  }

  /** Writes a segment's events in one transaction; if that fails, none of their frames go out. */
  private writeSegment(segment: readonly Effect[], unrecorded: Set<number>): void {
    const events = segment.flatMap((e) => (e.type === "append_history" ? e.events : []));
    if (events.length === 0) return;
    try {
      this.store.append(events);
      this.transactions++;
    } catch (err) {
      for (const e of events) unrecorded.add(e.seq);
      // Numbering goes on from what the log really holds.
      this.state = { ...this.state, nextSeq: this.store.lastSeq() + 1 };
      console.error(
        `liveline: log write failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** The last durable seq of the session (what `ready.lastSeq` says). */
  lastSeq(): number {
    return this.state.nextSeq - 1;
  }

  /** GET /history's JSON body, straight from the log. */
  historyJson(): string {
    return this.store.historyJson();
  }

  timeline(): { ms: number; kind: string; detail?: unknown }[] {
    return this.store
      .timeline()
      .map(({ at, kind, detail }) =>
        detail === undefined
          ? { ms: at - this.startedAt, kind }
          : { ms: at - this.startedAt, kind, detail },
      );
  }

  /** The session as an operator sees it (GET /v1/sessions/:id), but for its socket count. */
  describe(): Omit<SessionResource, "clients"> {
    return {
      sessionId: this.meta.sessionId,
      createdAt: this.meta.createdAt,
      agent: this.meta.agent,
      provider: this.meta.provider,
      model: this.model,
      connection: this.state.ended ? "ended" : this.state.upstream.phase,
      lastSeq: this.lastSeq(),
      usage: this.usage.totals(),
    };
  }

  stats(databaseBytes: number): SessionStats {
    return {
      events: this.store.lastSeq(),
      transactions: this.transactions,
      modelEvents: this.modelEvents,
      databaseBytes,
      counters: { ...this.state.counters },
    };
  }

  private carryOut(effect: Effect, now: number): void {
    switch (effect.type) {
      case "send_model":
        this.link.send(effect.command);
        return;
      case "append_history":
        // Written per step, in one transaction, by `input` (writeSegment).
        return;
      case "send_durable":
        this.broadcast(effect.frame);
        return;
      case "send_ephemeral": {
        const ws = this.sockets.byId(effect.clientId);
        if (ws) send(ws, effect.frame);
        return;
      }
      case "send_audio":
        for (const ws of this.sockets.all()) sendRaw(ws, effect.pcm);
        return;
      case "replay": {
        const ws = this.sockets.byId(effect.clientId);
        if (!ws) return;
        for (const e of this.store.readAfter(effect.afterSeq)) send(ws, frameOf(e));
        return;
      }
      case "run_tool":
        this.runTool(effect.callId, effect.name, effect.args);
        return;
      case "abort_tool":
        this.tools.get(effect.callId)?.abort(effect.reason);
        this.tools.delete(effect.callId);
        return;
      case "set_timer": {
        this.clearTimer(effect.timer);
        const timer = effect.timer;
        this.timers.set(
          timer,
          setTimeout(
            () => {
              this.timers.delete(timer);
              this.input({ type: "timer_fired", timer });
            },
            Math.max(0, effect.at - Date.now()) + Math.random() * (effect.jitterMs ?? 0),
          ),
        );
        return;
      }
      case "clear_timer":
        this.clearTimer(effect.timer);
        return;
      case "open_upstream":
        // Read when the new connection is ready: the log up to, not including, the input
        // that waits in the outbox (it goes out right after, as itself).
        this.link.open(effect.open, () => {
          const since = this.state.outboxSince;
          const events = this.store.readAfter(0);
          const context = this.rebuild(
            since === null ? events : events.filter((e) => e.seq < since),
          );
          // The naive relay's seed is left as frameworks send it (that is what it measures).
          if (naiveRelay(this.meta)) return context;
          const checked = checkedContext(context);
          if (checked.problems.length > 0) {
            this.store.trace(Date.now(), "CONTEXT_INVALID", { problems: checked.problems });
          }
          return checked.context;
        });
        return;
      case "close_upstream":
        this.link.close(effect.reason);
        return;
      case "close_clients":
        for (const ws of this.sockets.all()) closeQuietly(ws, effect.code, effect.reason);
        this.dispose();
        return;
      case "trace":
        this.store.trace(now, effect.kind, effect.detail);
        return;
      case "record_usage":
        this.usage.add(effect.turnId, effect.usage);
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private clearTimer(timer: TimerId): void {
    const handle = this.timers.get(timer);
    if (handle !== undefined) clearTimeout(handle);
    this.timers.delete(timer);
  }

  private runTool(callId: string, name: string, args: Record<string, unknown>): void {
    const controller = new AbortController();
    this.tools.set(callId, controller);
    runServerTool(this.agent, name, args, {
      signal: controller.signal,
      sessionId: this.meta.sessionId,
    }).then((outcome) => {
      if (this.tools.get(callId) !== controller) return; // aborted: the core settled it
      this.tools.delete(callId);
      this.input({ type: "tool_outcome", callId, ...outcome });
    });
  }

  private broadcast(frame: ServerFrame): void {
    for (const ws of this.sockets.all()) send(ws, frame);
  }

  /** Stops timers and tools, closes the model connection (the object is going away). */
  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const c of this.tools.values()) c.abort("session closed");
    this.tools.clear();
    this.link.close("session closed");
  }
}

/**
 * The naive relay: liveline with every protection off, forwarding what the model says and
 * sending each tool result the moment it is ready, as the frameworks in the field do. Only
 * for simulator sessions, to measure the failures side by side (`metadata.naive: true`).
 */
export function naiveRelay(meta: SessionMeta): boolean {
  return meta.provider === "simulator" && meta.metadata.naive === true;
}

export function send(ws: WebSocket, frame: ServerFrame): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // The socket is closing; its close handler cleans up.
  }
}

function sendRaw(ws: WebSocket, data: Uint8Array): void {
  try {
    ws.send(data);
  } catch {
    // closing
  }
}

export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
