import type { Effect, TimerId, TraceKind, UpstreamOpen } from "../../../src/core/effects.js";
import type { CoreInput } from "../../../src/core/inputs.js";
import { step } from "../../../src/core/session-core.js";
import {
  type CoreConfig,
  type CoreState,
  defaultConfig,
  initialState,
} from "../../../src/core/state.js";
import type { HistoryEvent } from "../../../src/vocabulary/events.js";
import { type DurableFrame, frameOf, type ServerFrame } from "../../../src/vocabulary/frames.js";
import type {
  ModelCommand,
  ModelEvent,
  TokenUsage,
  ToolPolicy,
} from "../../../src/vocabulary/model.js";

export const TOOLS: Record<string, ToolPolicy> = {
  suggest_topics: {
    name: "suggest_topics",
    runOn: "client",
    followUp: "silent",
    timeoutMs: 10_000,
  },
  set_preference: { name: "set_preference", runOn: "server", followUp: "silent", timeoutMs: 5_000 },
  lookup_faq: { name: "lookup_faq", runOn: "server", followUp: "speak", timeoutMs: 5_000 },
  ask_user: { name: "ask_user", runOn: "client", followUp: "speak", timeoutMs: 10_000 },
};

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  if (ArrayBuffer.isView(value)) return; // typed arrays cannot be frozen; audio is never written
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

export interface ClientView {
  connected: boolean;
  /** Every frame received, over all of its connections. */
  frames: ServerFrame[];
  /** Durable seqs received per connection, to check contiguity. */
  connections: number[][];
}

/**
 * An in-memory shell for the pure core: it carries out effects the way the Durable Object
 * does (log first, then frames; replay from the log; timers; tool runs), so that tests can
 * drive the core through any interleaving without a runtime.
 */
export class Harness {
  state: CoreState;
  now = 1_000_000;
  readonly log: HistoryEvent[] = [];
  readonly clients = new Map<string, ClientView>();
  readonly timers = new Map<TimerId, number>();
  readonly runningTools = new Map<string, string>();
  readonly abortedTools: string[] = [];
  readonly sentToModel: ModelCommand[] = [];
  readonly traces: TraceKind[] = [];
  readonly usage: Array<{ turnId: string | null; usage: TokenUsage }> = [];
  readonly effects: Effect[] = [];
  upstreamOpen = false;
  opens = 0;
  /** Called for every command the core sends to the model. */
  onModelCommand: (command: ModelCommand) => void = () => {};
  onOpenUpstream: (open: UpstreamOpen) => void = () => {};
  onCloseUpstream: () => void = () => {};

  constructor(overrides: Partial<CoreConfig> = {}) {
    this.state = initialState(defaultConfig({ sessionId: "s1", tools: TOOLS, ...overrides }));
  }

  input(input: CoreInput): Effect[] {
    // Frozen: a step that wrote to the state it was given (or to anything shared with the
    // new one) would throw here. This is what makes the cheap copy in copyState safe.
    deepFreeze(this.state);
    const { state, effects } = step(this.state, input, this.now);
    this.state = state;
    for (const effect of effects) this.carryOut(effect);
    this.effects.push(...effects);
    return effects;
  }

  model(event: ModelEvent): Effect[] {
    return this.input({ type: "model", event });
  }

  connect(clientId: string, resumeFrom?: number): void {
    const view = this.clients.get(clientId) ?? { connected: false, frames: [], connections: [] };
    view.connected = true;
    view.connections.push([]);
    this.clients.set(clientId, view);
    this.input({ type: "client_connected", clientId, resumeFrom });
  }

  disconnect(clientId: string): void {
    const view = this.clients.get(clientId);
    if (!view?.connected) return;
    view.connected = false;
    this.input({ type: "client_disconnected", clientId });
  }

  /** The last durable seq this client has seen. */
  lastSeqSeen(clientId: string): number {
    const view = this.clients.get(clientId);
    let last = 0;
    for (const f of view?.frames ?? [])
      if ("seq" in f && typeof f.seq === "number") last = Math.max(last, f.seq);
    return last;
  }

  durableFrames(clientId: string): DurableFrame[] {
    return (this.clients.get(clientId)?.frames ?? []).filter(
      (f): f is DurableFrame => "seq" in f && typeof f.seq === "number",
    );
  }

  /** Fire the earliest timer, moving the clock to it. Returns false if none is set. */
  fireNextTimer(): boolean {
    let next: [TimerId, number] | undefined;
    for (const entry of this.timers) if (!next || entry[1] < next[1]) next = entry;
    if (!next) return false;
    this.timers.delete(next[0]);
    this.now = Math.max(this.now, next[1]);
    this.input({ type: "timer_fired", timer: next[0] });
    return true;
  }

  /** Let time pass; timers that fall due meanwhile fire in order, as the runtime fires them. */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      let next: [TimerId, number] | undefined;
      for (const entry of this.timers) if (!next || entry[1] < next[1]) next = entry;
      if (!next || next[1] > until) break;
      this.fireNextTimer();
    }
    this.now = until;
  }

  private deliver(clientId: string, frame: ServerFrame): void {
    const view = this.clients.get(clientId);
    if (!view?.connected) return;
    view.frames.push(frame);
    if ("seq" in frame && typeof frame.seq === "number") view.connections.at(-1)!.push(frame.seq);
  }

  private carryOut(effect: Effect): void {
    switch (effect.type) {
      case "send_model":
        this.sentToModel.push(effect.command);
        this.onModelCommand(effect.command);
        return;
      case "append_history":
        this.log.push(...effect.events);
        return;
      case "send_durable":
        for (const id of this.clients.keys()) this.deliver(id, effect.frame);
        return;
      case "send_ephemeral":
        this.deliver(effect.clientId, effect.frame);
        return;
      case "send_audio":
        return;
      case "replay":
        for (const e of this.log)
          if (e.seq > effect.afterSeq) this.deliver(effect.clientId, frameOf(e));
        return;
      case "run_tool":
        this.runningTools.set(effect.callId, effect.name);
        return;
      case "abort_tool":
        this.runningTools.delete(effect.callId);
        this.abortedTools.push(effect.callId);
        return;
      case "set_timer":
        this.timers.set(effect.timer, effect.at);
        return;
      case "clear_timer":
        this.timers.delete(effect.timer);
        return;
      case "open_upstream":
        this.upstreamOpen = true;
        this.opens++;
        this.onOpenUpstream(effect.open);
        return;
      case "close_upstream":
        this.upstreamOpen = false;
        this.onCloseUpstream();
        return;
      case "close_clients":
        for (const view of this.clients.values()) view.connected = false;
        return;
      case "trace":
        this.traces.push(effect.kind);
        return;
      case "record_usage":
        this.usage.push({ turnId: effect.turnId, usage: effect.usage });
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
