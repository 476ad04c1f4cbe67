/**
 * The interpreter's ports: what the shell gives SessionInterpreter to carry out the core's
 * effects with (the log, the clients, the model link, tools, timers), each an object.
 */

import type { AudioGate } from "../core/audio-gate.js";
import type { Effect, TimerId, TraceKind, UpstreamOpen } from "../core/effects.js";
import type { CoreInput } from "../core/inputs.js";
import type { CoreState } from "../core/session-state.js";
import type { DurableFrame, ServerFrame } from "../vocabulary/frames.js";
import type { HistoryEvent, ToolOutcome, ToolPayload } from "../vocabulary/log-events.js";
import type { ModelCommand, RebuiltContext, TokenUsage } from "../vocabulary/model.js";

/** A timeline row to write: when, what, and its detail (stored as JSON). */
export interface TraceRow {
  at: number;
  kind: TraceKind;
  detail: Record<string, unknown> | undefined;
}

/**
 * The log refused a write because another writer has written it since: a second instance of
 * the session's object runs on the same storage (local `wrangler dev` starts one on a reload
 * while the old one still holds its sockets). The log is that writer's now.
 */
export class LogWriterSuperseded extends Error {
  constructor(detail: string) {
    super(`another instance of the session wrote its log: ${detail}`);
    this.name = "LogWriterSuperseded";
  }
}

/** The session's log: appends are one transaction each; reads see every committed append. */
export interface LogPort {
  /**
   * `frames[i]`: the encoded client frame of `events[i]`, kept with its row for replays.
   * `traces`: the step's timeline rows, written with them (refused with them: then the
   * interpreter writes them by `trace`).
   */
  append(
    events: readonly HistoryEvent[],
    frames: readonly string[],
    traces: readonly TraceRow[],
  ): void;
  readAfter(seq: number): HistoryEvent[];
  /** The encoded client frames of every event with seq > `seq`, in order (a replay). */
  framesAfter(seq: number): string[];
  lastSeq(): number;
  /** A user line with this client id (`text.textId`) is in the log. */
  hasTextId(textId: string): boolean;
  /** A step's timeline rows, in order, when no append took them. */
  trace(rows: readonly TraceRow[]): void;
  /**
   * Speech the model heard that no turn answers yet changed (its words so far; null: none):
   * kept in the step that changed it, so that a restart carries it over (core/carry.ts
   * `unansweredSpeech`). Optional: a port without it keeps nothing.
   */
  keepSpeech?(transcript: string | null, at: number): void;
  /**
   * The model's resumption handle changed (null: none any more), when the log's last seq was
   * `seq`: kept so that a restart with nothing said since resumes the model's session.
   */
  keepHandle?(handle: string | null, seq: number): void;
  addUsage(turnId: string | null, usage: TokenUsage): void;
}

export interface ClientsPort {
  /** A durable frame, to every connected client: `json` is the frame encoded once. */
  broadcast(frame: DurableFrame, json: string): void;
  /** An ephemeral frame to one client. */
  send(clientId: string, frame: ServerFrame): void;
  /** Durable frames, already encoded (from the log), to one client: a replay. */
  sendEncoded(clientId: string, frames: readonly string[]): void;
  /** Model audio, to every connected client. */
  audio(pcm: Uint8Array): void;
  closeAll(code: number, reason: string): void;
}

export interface ModelPort {
  /**
   * `rebuild` gives the context to seed a rebuilt connection with, read when it is needed.
   * `agent`: whose setup the connection opens with (it changes at a handoff).
   */
  open(open: UpstreamOpen, rebuild: () => RebuiltContext, agent: string): void;
  send(command: ModelCommand): void;
  /** The live connection takes `agent`'s setup in place (only for agents sharing a link). */
  update(agent: string): void;
  close(reason: string): void;
}

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

/**
 * Sees the session's audio as it passes, both ways (a recording): called on the per-chunk path,
 * so it must only note the chunk (session/audio-recorder.ts), never work on it there.
 */
export interface AudioTap {
  /** A client's chunk, as the session took it in (before the model hears it). */
  heard(clientId: string, pcm: Uint8Array): void;
  /** The model's chunk, as sent to the clients. */
  said(pcm: Uint8Array): void;
}

export interface InterpreterPorts {
  log: LogPort;
  clients: ClientsPort;
  model: ModelPort;
  tools: ToolsPort;
  timers: TimersPort;
  clock: () => number;
  /**
   * The context for a rebuilt connection from the log's events it is given: those before the
   * input that waits in the outbox (`open_upstream` leaves that out; it goes as itself).
   */
  rebuild: (events: readonly HistoryEvent[]) => RebuiltContext;
  /** An effect that failed, or a log write that was refused (never fatal to the session). */
  reportError?: ((message: string) => void) | undefined;
  /**
   * Another writer took the log (LogWriterSuperseded): this interpreter takes no input from
   * now on, and the shell lets its clients go to the object that writes the log now.
   */
  superseded?: ((message: string) => void) | undefined;
  /** The session's audio both ways, for a recording (absent: nothing records it). */
  tap?: AudioTap | undefined;
  /** Sees each input before its core step (a wire recording); never a passing audio chunk. */
  stepping?: ((input: CoreInput) => void) | undefined;
  /** Sees each step's effects after they were carried out (tests, stats). */
  observe?: ((input: CoreInput, effects: readonly Effect[]) => void) | undefined;
  /** Sees the state before each step (tests freeze it, to prove the step writes nothing shared). */
  beforeStep?: ((state: CoreState) => void) | undefined;
  /**
   * The audio gate (default: the core's `audioGate`). "off": every chunk is a core step (the
   * equivalence test's other arm); a function: a test's own gate (its control).
   */
  audioGate?: "off" | ((state: CoreState) => AudioGate) | undefined;
}

/** Where a source of the session's inputs hands them (the interpreter's `handleInput`). */
export interface InputSink {
  handleInput(input: CoreInput): void;
}
