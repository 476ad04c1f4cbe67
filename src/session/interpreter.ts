/**
 * The one interpreter of the core's effects. It steps the pure core and carries out what the
 * step asks for through ports: the log store, the client sockets, the model link, the tool
 * runner, timers and the clock. Production (`LiveSession`) gives it the Durable Object's
 * storage, sockets and WebSocket; tests give it in-memory ports or the real sockets — the
 * same code carries out the effects everywhere, so a proof run through a test carries over.
 * The core's state changes only inside `step`.
 */

import type { Effect, TimerId, TraceKind, UpstreamOpen } from "../core/effects.js";
import type { CoreInput } from "../core/inputs.js";
import { step } from "../core/session-core.js";
import type { CoreState } from "../core/state.js";
import type { HistoryEvent, ToolPayload } from "../vocabulary/events.js";
import { frameOf, type ServerFrame } from "../vocabulary/frames.js";
import type { ModelCommand, RebuiltContext, TokenUsage } from "../vocabulary/model.js";

/** The session's log: appends are one transaction each; reads see every committed append. */
export interface LogPort {
  append(events: readonly HistoryEvent[]): void;
  readAfter(seq: number): HistoryEvent[];
  lastSeq(): number;
  trace(at: number, kind: TraceKind, detail: Record<string, unknown> | undefined): void;
  addUsage(turnId: string | null, usage: TokenUsage): void;
}

export interface ClientsPort {
  /** A durable frame, to every connected client. */
  broadcast(frame: ServerFrame): void;
  /** A frame to one client (an ephemeral one, or a replayed durable one). */
  send(clientId: string, frame: ServerFrame): void;
  /** Model audio, to every connected client. */
  audio(pcm: Uint8Array): void;
  closeAll(code: number, reason: string): void;
}

export interface ModelPort {
  /** `rebuild` gives the context to seed a rebuilt connection with, read when it is needed. */
  open(open: UpstreamOpen, rebuild: () => RebuiltContext): void;
  send(command: ModelCommand): void;
  close(reason: string): void;
}

export type ToolOutcome = { result?: ToolPayload | undefined; error?: string | undefined };

export interface ToolsPort {
  /** Runs a server tool; resolves null when it was aborted (the core already settled it). */
  run(callId: string, name: string, args: ToolPayload): Promise<ToolOutcome | null>;
  abort(callId: string, reason: string): void;
}

export interface TimersPort {
  /** Calls `fire` at `at` (up to `jitterMs` later, at random); replaces a timer of that id. */
  set(timer: TimerId, at: number, jitterMs: number, fire: () => void): void;
  clear(timer: TimerId): void;
}

export interface InterpreterPorts {
  log: LogPort;
  clients: ClientsPort;
  model: ModelPort;
  tools: ToolsPort;
  timers: TimersPort;
  clock: () => number;
  /** The context for a rebuilt connection from the log up to (not including) `beforeSeq`. */
  rebuild: (events: readonly HistoryEvent[]) => RebuiltContext;
  /** An effect that failed, or a log write that was refused (never fatal to the session). */
  reportError?: ((message: string) => void) | undefined;
  /** Sees each step's effects after they were carried out (tests, stats). */
  observe?: ((input: CoreInput, effects: readonly Effect[]) => void) | undefined;
  /** Sees the state before each step (tests freeze it, to prove the step writes nothing shared). */
  beforeStep?: ((state: CoreState) => void) | undefined;
}

export class SessionInterpreter {
  /** Log transactions committed since this interpreter started. */
  transactions = 0;

  constructor(
    private current: CoreState,
    private readonly ports: InterpreterPorts,
  ) {}

  get state(): CoreState {
    return this.current;
  }

  /** The one entry of every input: step the core, then carry out its effects in order. */
  input(input: CoreInput): void {
    const now = this.ports.clock();
    this.ports.beforeStep?.(this.current);
    const { state, effects } = step(this.current, input, now);
    this.current = state;
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
          this.report(`${e.type} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    this.ports.observe?.(input, effects);
  }

  /** Writes a segment's events in one transaction; if that fails, none of their frames go out. */
  private writeSegment(segment: readonly Effect[], unrecorded: Set<number>): void {
    const events = segment.flatMap((e) => (e.type === "append_history" ? e.events : []));
    if (events.length === 0) return;
    try {
      this.ports.log.append(events);
      this.transactions++;
    } catch (err) {
      for (const e of events) unrecorded.add(e.seq);
      // Numbering goes on from what the log really holds: the one write to the state outside
      // `step`, a correction from the store, which has the last word on what was recorded.
      this.current = { ...this.current, nextSeq: this.ports.log.lastSeq() + 1 };
      this.report(`log write failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private report(message: string): void {
    this.ports.reportError?.(message);
  }

  private carryOut(effect: Effect, now: number): void {
    const { log, clients, model, tools, timers } = this.ports;
    switch (effect.type) {
      case "send_model":
        model.send(effect.command);
        return;
      case "append_history":
        // Written per segment, in one transaction (writeSegment).
        return;
      case "send_durable":
        clients.broadcast(effect.frame);
        return;
      case "send_ephemeral":
        clients.send(effect.clientId, effect.frame);
        return;
      case "send_audio":
        clients.audio(effect.pcm);
        return;
      case "replay":
        for (const e of log.readAfter(effect.afterSeq)) clients.send(effect.clientId, frameOf(e));
        return;
      case "run_tool": {
        const { callId } = effect;
        void tools.run(callId, effect.name, effect.args).then((outcome) => {
          if (outcome !== null) this.input({ type: "tool_outcome", callId, ...outcome });
        });
        return;
      }
      case "abort_tool":
        tools.abort(effect.callId, effect.reason);
        return;
      case "set_timer": {
        const timer = effect.timer;
        timers.set(timer, effect.at, effect.jitterMs ?? 0, () =>
          this.input({ type: "timer_fired", timer }),
        );
        return;
      }
      case "clear_timer":
        timers.clear(effect.timer);
        return;
      case "open_upstream":
        // Read when the new connection is ready: the log up to, not including, the input
        // that waits in the outbox (it goes out right after, as itself).
        model.open(effect.open, () => {
          const since = this.current.outboxSince;
          const events = log.readAfter(0);
          return this.ports.rebuild(since === null ? events : events.filter((e) => e.seq < since));
        });
        return;
      case "close_upstream":
        model.close(effect.reason);
        return;
      case "close_clients":
        clients.closeAll(effect.code, effect.reason);
        return;
      case "trace":
        log.trace(now, effect.kind, effect.detail);
        return;
      case "record_usage":
        log.addUsage(effect.turnId, effect.usage);
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
