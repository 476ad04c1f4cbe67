import { frameOf } from "../vocabulary/frames.js";
import type { HistoryEvent, HistoryEventBody } from "../vocabulary/log-events.js";
import type { ModelCommand } from "../vocabulary/model.js";
import type { Effect, TraceKind } from "./effects.js";
import { type CallState, type CoreState, noteAudioSent } from "./session-state.js";

/**
 * Cancels the running calls of a turn (`null`: of every turn). Given by the step's caller:
 * ending a turn cancels its calls, but the tools module, which does that, depends on the
 * turns module, never the other way round.
 */
export type CancelRunningCalls = (ctx: StepContext, turnId: string | null, reason: string) => void;

/**
 * The working context of one transition: a copy of the state it was given, the injected
 * clock and the effects produced so far. Policy modules change `state` and push effects
 * through it; the given state is never written.
 */
export class StepContext {
  readonly effects: Effect[] = [];
  readonly state: CoreState;

  constructor(
    given: CoreState,
    readonly now: number,
    private readonly cancelCalls: CancelRunningCalls,
  ) {
    this.state = copyState(given);
  }

  /** Cancel the running calls of `turnId` (null: all of them), each with a durable frame. */
  cancelRunningCalls(turnId: string | null, reason: string): void {
    this.cancelCalls(this, turnId, reason);
  }

  emit(effect: Effect): void {
    this.effects.push(effect);
  }

  /** Append an event to the log and send its frame: the one way a durable frame is made. */
  record(body: HistoryEventBody): HistoryEvent {
    const event = { ...body, seq: this.state.nextSeq++, at: this.now } as HistoryEvent;
    this.effects.push({ type: "append_history", events: [event] });
    this.effects.push({ type: "send_durable", frame: frameOf(event) });
    return event;
  }

  /** A durable, non-fatal error frame, for the turn it belongs to (if any). */
  recordError(code: string, message: string, turnId?: string): void {
    this.record(
      turnId === undefined
        ? { kind: "error", code, message, fatal: false }
        : { kind: "error", code, message, fatal: false, turnId },
    );
  }

  trace(kind: TraceKind, detail?: Record<string, unknown>): void {
    this.effects.push(
      detail === undefined ? { type: "trace", kind } : { type: "trace", kind, detail },
    );
  }

  /** An error frame to one client only (ephemeral: no seq, not replayed). */
  sendError(clientId: string, code: string, message: string, fatal = false): void {
    this.effects.push({
      type: "send_ephemeral",
      clientId,
      frame: { type: "error", code, message, fatal },
    });
  }

  /**
   * Send to the model now if the connection is live, else queue until it is. Queued audio is
   * bounded (`sentAudioMaxBytes`): beyond it the oldest chunks go, counted.
   */
  sendModel(command: ModelCommand): void {
    const s = this.state;
    if (s.upstream.phase === "live") {
      this.effects.push({ type: "send_model", command });
      s.upstream.handleStale = true;
      if (command.type === "user_audio") noteAudioSent(s, command.pcm.length);
      else if (command.type === "audio_end" && s.sentAudio !== "none") s.sentAudioEnded = true;
      return;
    }
    const heldSpeech =
      command.type === "audio_end" && s.outbox.some((c) => c.type === "user_audio");
    s.outbox.push(heldSpeech ? { type: "audio_end", held: true } : command);
    if (command.type !== "user_audio") return;
    s.outboxAudio.bytes += command.pcm.length;
    while (s.outboxAudio.bytes > s.config.sentAudioMaxBytes) {
      const oldest = s.outbox.findIndex((c) => c.type === "user_audio");
      const [dropped] = s.outbox.splice(oldest, 1);
      const bytes = dropped?.type === "user_audio" ? dropped.pcm.length : 0;
      s.outboxAudio = {
        bytes: s.outboxAudio.bytes - bytes,
        droppedChunks: s.outboxAudio.droppedChunks + 1,
        droppedBytes: s.outboxAudio.droppedBytes + bytes,
      };
    }
  }

  /** The queue goes out (`send`: the connection is live) or is dropped; a drop count is traced. */
  takeOutbox(): ModelCommand[] {
    const s = this.state;
    const queued = s.outbox;
    const { droppedChunks, droppedBytes } = s.outboxAudio;
    if (droppedChunks > 0)
      this.trace("HELD_AUDIO_DROPPED", { chunks: droppedChunks, bytes: droppedBytes });
    s.outbox = [];
    s.outboxSince = null;
    s.outboxAudio = { bytes: 0, droppedChunks: 0, droppedBytes: 0 };
    return queued;
  }
}

/**
 * The copy a step works on, so that `step` never changes the state it was given. Cheaper
 * than a deep clone where it matters (live audio is 50 steps a second): the config is shared
 * (never written), commands and held results are never written once made, and a settled
 * call (answered or cancelled, nothing held) is never written again — except by the naive
 * relay, which takes a second result for it, so then every call is copied. Tests freeze
 * the input state to prove nothing shared is written.
 */
function copyState(s: CoreState): CoreState {
  const copyAll = !s.config.guards.dedupeResults;
  const calls: Record<string, CallState> = {};
  for (const [id, call] of Object.entries(s.calls)) {
    const settled = call.status !== "running" && call.held === undefined;
    calls[id] = settled && !copyAll ? call : { ...call };
  }
  return {
    ...s,
    clients: [...s.clients],
    upstream: { ...s.upstream, recentOpens: [...s.upstream.recentOpens] },
    outbox: [...s.outbox],
    outboxAudio: { ...s.outboxAudio },
    expected: [...s.expected],
    followUpWindow: s.followUpWindow === null ? null : { ...s.followUpWindow },
    held: [...s.held],
    turn: s.turn === null ? null : { ...s.turn },
    generation: s.generation === null ? null : { ...s.generation },
    // A cap's close moves on in place (limits.ts): its own copy.
    limit: s.limit === null ? null : { ...s.limit },
    calls,
    recentReplies: [...s.recentReplies],
    recentAnswers: [...s.recentAnswers],
    regenerations: { ...s.regenerations },
    counters: { ...s.counters },
  };
}
