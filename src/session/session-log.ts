import type { HistoryEvent } from "../vocabulary/log-events.js";
import type { TokenUsage } from "../vocabulary/model.js";
import type { CarryStore } from "./carry-store.js";
import type { HistoryStore } from "./history-store.js";
import type { LogPort, TraceRow } from "./interpreter-ports.js";
import type { PendingHandoffStore } from "./pending-handoff-store.js";
import type { CallWatcher } from "./sip-call.js";
import type { TurnTracer } from "./turn-tracer.js";
import type { UsageStore } from "./usage-store.js";

/** What the running session does once the log holds certain events (each rarely). */
export interface LogFollowUps {
  /** The session ended or idled (a status event): its closing record, once the step is done. */
  statusLogged(state: "ended" | "idle"): void;
  /** A turn's usage was added (the cost cap is measured). */
  usageAdded(): void;
  /** The model connection idled: a direct call's client connects again (direct-call.ts). */
  callIdled(): void;
}

/**
 * The interpreter's log port in production: the session's log in SQLite (history-store.ts),
 * and what else hears of each step's writes — the turn tracer, a pending handoff kept over a
 * restart, the speech carried over one, the usage, and a SIP call's line. An object, so that
 * a step's write goes from the interpreter through here to the store, and nowhere else.
 */
export class SessionLog implements LogPort {
  constructor(
    private readonly store: HistoryStore,
    private readonly usage: UsageStore,
    private readonly speech: CarryStore,
    private readonly pendingHandoffs: PendingHandoffStore,
    private readonly tracer: TurnTracer | null,
    /** A SIP call's line: what the log tells of the call (null: none). */
    private readonly callWatcher: CallWatcher | null,
    private readonly followUps: LogFollowUps,
    /** The model the usage is reported by, when the report does not say. */
    private readonly model: () => string,
  ) {}

  append(events: readonly HistoryEvent[], frames: readonly string[], traces: readonly TraceRow[]) {
    this.store.append(events, frames, traces);
    this.tracer?.observe(traces);
    // A backend's pending handoff is kept until the handoff is in the log.
    if (events.some((e) => e.kind === "handoff")) this.pendingHandoffs.clear();
    let idled = false;
    for (const e of events)
      if (e.kind === "status" && (e.state === "ended" || e.state === "idle")) {
        idled ||= e.state === "idle";
        this.followUps.statusLogged(e.state);
      }
    if (idled) this.followUps.callIdled();
    if (this.callWatcher !== null) watchCall(this.callWatcher, events);
  }

  readAfter(seq: number): HistoryEvent[] {
    return this.store.readAfter(seq);
  }

  framesAfter(seq: number): string[] {
    return this.store.framesAfter(seq);
  }

  lastSeq(): number {
    return this.store.lastSeq();
  }

  hasTextId(textId: string): boolean {
    return this.store.hasTextId(textId);
  }

  keepHandle(handle: string | null, seq: number): void {
    this.speech.keepHandle(handle, seq);
  }

  keepSpeech(transcript: string | null, at: number): void {
    this.speech.keep(transcript, at);
    if (transcript !== null && transcript !== "")
      this.store.trace([{ at, kind: "SPEECH_KEPT", detail: { chars: transcript.length } }]);
  }

  trace(rows: readonly TraceRow[]): void {
    this.store.trace(rows);
    this.tracer?.observe(rows);
  }

  addUsage(turnId: string | null, usage: TokenUsage): void {
    this.usage.add(turnId, usage, this.model());
    this.followUps.usageAdded();
  }
}

/** What the log tells a SIP call's line: each turn's end, each client tool asked. */
function watchCall(watcher: CallWatcher, events: readonly HistoryEvent[]): void {
  for (const e of events) {
    if (e.kind === "turn_complete" || e.kind === "interrupted") watcher.turnEnded();
    else if (e.kind === "tool_call" && e.runOn === "client")
      watcher.clientToolCall(e.callId, e.name);
  }
}
