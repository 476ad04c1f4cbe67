import type { HistoryEvent, HistoryEventBody } from "../history/events.js";
import { frameOf } from "../history/frames.js";
import type { Effect, TraceKind } from "./effects.js";
import type { ModelCommand } from "./model.js";
import type { CoreState } from "./state.js";

/**
 * The working context of one transition: the (already copied) state, the injected clock and
 * the effects produced so far. Policy modules mutate `state` and push effects through it.
 */
export class StepContext {
  readonly effects: Effect[] = [];

  constructor(
    readonly state: CoreState,
    readonly now: number,
  ) {}

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

  /** Send to the model now if the connection is live, else queue until it is. */
  sendModel(command: ModelCommand): void {
    if (this.state.upstream.phase === "live") this.effects.push({ type: "send_model", command });
    else this.state.outbox.push(command);
  }
}
