import type { Effect, TimerId, TraceKind, UpstreamOpen } from "../../src/core/effects.js";
import type { CoreInput } from "../../src/core/inputs.js";
import {
  type RestartPlan,
  restoreSelection,
  type UnansweredSpeech,
} from "../../src/core/restore.js";
import {
  type CoreConfig,
  type CoreState,
  defaultConfig,
  initialState,
} from "../../src/core/session-state.js";
import { rebuildContext } from "../../src/history/rebuild.js";
import { SessionInterpreter } from "../../src/session/interpreter.js";
import {
  type InterpreterPorts,
  LogWriterSuperseded,
  type TraceRow,
} from "../../src/session/interpreter-ports.js";
import { recoverSession } from "../../src/session/recover.js";
import {
  type DurableFrame,
  type EphemeralFrame,
  frameOf,
  type ServerFrame,
} from "../../src/vocabulary/frames.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import type {
  ModelCommand,
  ModelEvent,
  TokenUsage,
  ToolPolicy,
} from "../../src/vocabulary/model.js";

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
 * The production interpreter (src/session/interpreter.ts) with in-memory ports: a log array,
 * client views, a timer table fired by the test, tool runs the test settles, and a model
 * the test plays. Tests drive the core through any interleaving without a runtime, and what
 * carries out the effects is the code that does it in the Durable Object.
 */
export class Harness {
  now = 1_000_000;
  readonly log: HistoryEvent[] = [];
  readonly clients = new Map<string, ClientView>();
  readonly timers = new Map<TimerId, number>();
  readonly runningTools = new Map<string, string>();
  readonly abortedTools: string[] = [];
  readonly sentToModel: ModelCommand[] = [];
  /** Agents the live connection was updated to in place (a handoff on a shared link). */
  readonly agentUpdates: string[] = [];
  readonly traces: TraceKind[] = [];
  /** The trace rows themselves, with their details (for debugging a counterexample). */
  readonly traceRows: unknown[] = [];
  readonly usage: Array<{ turnId: string | null; usage: TokenUsage }> = [];
  readonly effects: Effect[] = [];

  /** Set: the log refuses every append, as the store refuses one that breaks its rules. */
  refuseAppends = false;
  /**
   * Set: the log refuses a write whose first seq is not its next, as the store's seq rule does
   * when another writer wrote it since — "superseded" as the store says it, "plain" as a
   * refusal like any other (the old reading: the control).
   */
  seqRule: "superseded" | "plain" | null = null;
  /** What the interpreter was told when another writer took the log. */
  readonly supersededBy: string[] = [];
  /** Errors the interpreter reported while appends were refused (else a report throws). */
  readonly reported: string[] = [];
  /** Where steps' timeline rows went: in their events' write, or by themselves. */
  readonly traceWrites = { withEvents: 0, alone: 0 };

  /** A step's timeline rows, written with its events or by themselves. */
  private noteTraces(rows: readonly TraceRow[]): void {
    for (const row of rows) {
      this.traces.push(row.kind);
      this.traceRows.push(row);
    }
  }
  upstreamOpen = false;
  opens = 0;
  /** Called for every command the core sends to the model. */
  onModelCommand: (command: ModelCommand) => void = () => {};
  onOpenUpstream: (open: UpstreamOpen) => void = () => {};
  onCloseUpstream: () => void = () => {};
  private readonly interpreter: SessionInterpreter;

  /** Core steps taken. */
  steps = 0;
  /** Everything sent to clients, in order: encoded frames (and their recipient) and audio. */
  readonly outbound: string[] = [];

  /** Speech kept for a restart (the LogPort's keepSpeech), as the shell's store holds it. */
  keptSpeech: UnansweredSpeech | null = null;
  /** The model's resumption handle kept for a restart (keepHandle), with the seq then. */
  keptHandle: { handle: string; seq: number } | null = null;
  /** What the last restart carried over (restartedFrom). */
  plan: RestartPlan | null = null;

  /**
   * `restartedFrom`: the session of another harness whose object went away, restored as the
   * shell's recovery does (src/session/recover.ts over this log; `rerunTimeoutMs` the tools'
   * policies) and handed its plan; no client is connected and no model connection is open.
   */
  constructor(
    overrides: Partial<CoreConfig> = {},
    audioGate?: InterpreterPorts["audioGate"],
    restartedFrom?: {
      log: readonly HistoryEvent[];
      keptSpeech: UnansweredSpeech | null;
      keptHandle: { handle: string; seq: number } | null;
      rerunTimeoutMs?: (name: string) => number | null;
      now: number;
      carry?: boolean;
    },
  ) {
    const config = defaultConfig({ sessionId: "s1", tools: TOOLS, ...overrides });
    let state = initialState(config);
    if (restartedFrom !== undefined) {
      this.now = restartedFrom.now;
      this.log.push(...restartedFrom.log);
      this.keptSpeech = restartedFrom.keptSpeech;
      this.keptHandle = restartedFrom.keptHandle;
      const speech = {
        read: () => this.keptSpeech,
        keep: (transcript: string | null, at: number) => {
          this.keptSpeech = transcript === null ? null : { transcript, at };
        },
        readHandle: () => this.keptHandle,
      };
      const recovered = recoverSession(
        {
          readForRestore: () => restoreSelection(this.log),
          readAfter: (seq) => this.log.filter((e) => e.seq > seq),
          lastSeq: () => this.log.at(-1)?.seq ?? 0,
          append: (events) => {
            this.log.push(...events);
          },
          trace: (rows) => this.noteTraces(rows),
        },
        config,
        [],
        this.now,
        restartedFrom.carry === false
          ? null
          : {
              speech,
              rerunTimeoutMs: restartedFrom.rerunTimeoutMs ?? (() => null),
            },
      );
      state = recovered.state;
      this.plan = recovered.plan;
    }
    this.interpreter = new SessionInterpreter(state, {
      log: {
        append: (events, _frames, traces) => {
          if (this.refuseAppends) throw new Error("refused by the test");
          const first = events[0];
          if (this.seqRule !== null && first && first.seq !== (this.log.at(-1)?.seq ?? 0) + 1) {
            const why = "seq is not the next one";
            throw this.seqRule === "superseded" ? new LogWriterSuperseded(why) : new Error(why);
          }
          this.log.push(...events);
          if (traces.length > 0) this.traceWrites.withEvents++;
          this.noteTraces(traces);
        },
        readAfter: (seq) => this.log.filter((e) => e.seq > seq),
        framesAfter: (seq) =>
          this.log.filter((e) => e.seq > seq).map((e) => JSON.stringify(frameOf(e))),
        lastSeq: () => this.log.at(-1)?.seq ?? 0,
        hasTextId: (textId) => this.log.some((e) => e.kind === "user" && e.textId === textId),
        keepSpeech: (transcript, at) => {
          this.keptSpeech = transcript === null ? null : { transcript, at };
        },
        keepHandle: (handle, seq) => {
          this.keptHandle = handle === null ? null : { handle, seq };
        },
        trace: (rows) => {
          this.traceWrites.alone++;
          this.noteTraces(rows);
        },
        addUsage: (turnId, usage) => {
          this.usage.push({ turnId, usage });
        },
      },
      clients: {
        broadcast: (frame, json) => {
          this.outbound.push(`* ${json}`);
          for (const id of this.clients.keys()) this.deliver(id, frame);
        },
        send: (clientId, frame) => {
          this.outbound.push(`${clientId} ${JSON.stringify(frame)}`);
          this.deliver(clientId, frame);
        },
        sendEncoded: (clientId, frames) => {
          for (const json of frames) this.deliver(clientId, JSON.parse(json) as ServerFrame);
        },
        audio: (pcm) => {
          this.outbound.push(`* audio ${pcm.length} ${pcm[0]}`);
        },
        closeAll: () => {
          for (const view of this.clients.values()) view.connected = false;
        },
      },
      model: {
        open: (open) => {
          this.upstreamOpen = true;
          this.opens++;
          this.onOpenUpstream(open);
        },
        send: (command) => {
          this.sentToModel.push(command);
          this.onModelCommand(command);
        },
        update: (agent) => {
          this.agentUpdates.push(agent);
        },
        close: () => {
          this.upstreamOpen = false;
          this.onCloseUpstream();
        },
      },
      tools: {
        // The test settles a run with a `tool_outcome` input: the promise never resolves.
        run: (callId, name) => {
          this.runningTools.set(callId, name);
          return new Promise(() => {});
        },
        abort: (callId) => {
          this.runningTools.delete(callId);
          this.abortedTools.push(callId);
        },
      },
      // Fired by the test (fireNextTimer, advance), in order, moving the virtual clock.
      timers: {
        set: (timer, at) => {
          this.timers.set(timer, at);
        },
        clear: (timer) => {
          this.timers.delete(timer);
        },
      },
      clock: () => this.now,
      rebuild: (events) => rebuildContext(events),
      // Frozen: a step that wrote to the state it was given (or to anything shared with the
      // new one) would throw here. This is what makes the cheap copy in copyState safe.
      beforeStep: (s) => deepFreeze(s),
      observe: (_input, effects) => {
        this.steps++;
        this.effects.push(...effects);
      },
      reportError: (message) => {
        if (!this.refuseAppends && this.seqRule === null) throw new Error(message);
        this.reported.push(message);
      },
      superseded: (message) => {
        this.supersededBy.push(message);
      },
      audioGate,
    });
  }

  get state(): CoreState {
    return this.interpreter.state;
  }

  /**
   * This session's object goes away now and a new one takes its log (and the speech it kept):
   * the restarted session, as the shell recovers it and hands the core its plan.
   */
  restart(
    opts: { rerunTimeoutMs?: (name: string) => number | null; carry?: boolean } = {},
    overrides: Partial<CoreConfig> = {},
  ): Harness {
    const next = new Harness({ ...this.state.config, ...overrides }, undefined, {
      log: this.log,
      keptSpeech: this.keptSpeech,
      keptHandle: this.keptHandle,
      now: this.now + 1_000,
      ...opts,
    });
    const plan = next.plan;
    if (plan !== null && (plan.rerun.length > 0 || plan.reoffered.length > 0 || plan.carriedTurn))
      next.input({ type: "session_restored", rerun: plan.rerun });
    return next;
  }

  /** A core step for the input as it is (`handleInput`'s `direct`: no audio gate, no lookup). */
  input(input: CoreInput): Effect[] {
    const before = this.effects.length;
    this.interpreter.handleInput(input, true);
    return this.effects.slice(before);
  }

  /** An input as the shell hands it over (`handleInput`: the audio gate, a line's lookup). */
  receive(input: CoreInput): Effect[] {
    const before = this.effects.length;
    this.interpreter.handleInput(input);
    return this.effects.slice(before);
  }

  /** A client's audio chunk, as the shell hands it over (through the audio gate). */
  clientAudio(clientId: string, pcm: Uint8Array): void {
    this.interpreter.handleInput({ type: "client_audio", clientId, pcm });
  }

  /** A model audio chunk, as the shell hands it over (through the audio gate). */
  modelAudio(pcm: Uint8Array): void {
    this.interpreter.handleInput({ type: "model", event: { type: "audio_delta", pcm } });
  }

  /** Chunks (and transcriptions) that passed the gate without a step. */
  get audioPassed(): { client: number; model: number; transcripts: number } {
    return this.interpreter.passed;
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

  /** What a client got that is not durable: ready, pong, errors, progress. */
  ephemeralFrames(clientId: string): EphemeralFrame[] {
    return (this.clients.get(clientId)?.frames ?? []).filter(
      (f): f is EphemeralFrame => !("seq" in f && typeof f.seq === "number"),
    );
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
}
