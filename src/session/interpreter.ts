/**
 * The one interpreter of the core's effects. It steps the pure core and carries out what the
 * step asks for through ports: the log store, the client sockets, the model link, the tool
 * runner, timers and the clock. Production (`LiveSession`) gives it the Durable Object's
 * storage, sockets and WebSocket; tests give it in-memory ports or the real sockets — the
 * same code carries out the effects everywhere, so a proof run through a test carries over.
 * The core's state changes only inside `step`.
 */

import { type AudioGate, audioGate, GATE_CLOSED } from "../core/audio-gate.js";
import { unansweredSpeech } from "../core/carry.js";
import type { Effect } from "../core/effects.js";
import type { AudioPassed, CoreInput } from "../core/inputs.js";
import { step } from "../core/session-core.js";
import type { CoreState } from "../core/session-state.js";
import type { ServerFrame } from "../vocabulary/frames.js";
import type { ModelCommand } from "../vocabulary/model.js";
import { type InterpreterPorts, LogWriterSuperseded, type TraceRow } from "./interpreter-ports.js";

/** Effects carried out by the model port, in their order, before a step's log write. */
const TO_MODEL: ReadonlySet<Effect["type"]> = new Set([
  "send_model",
  "forget_sent_audio",
  "resend_sent_audio",
  "open_upstream",
  "update_upstream",
  "close_upstream",
]);

/** Said to every client when the log refused a step's events (their frames are not sent). */
const LOG_WRITE_FAILED: ServerFrame = {
  type: "error",
  code: "log_write_failed",
  message:
    "the session could not record what just happened, so its frames were not sent; it goes on",
  fatal: false,
};

export class SessionInterpreter {
  /** Log transactions committed since this interpreter started. */
  transactions = 0;
  /** Another writer took the log: nothing is taken in, carried out or written any more. */
  private superseded = false;

  /** Audio chunks that went through the open gate, each way, and transcriptions noted (stats). */
  readonly passed = { client: 0, model: 0, transcripts: 0 };
  private gate: AudioGate = GATE_CLOSED;
  private passedClientAt: number | null = null;
  private passedSpeechAt: number | null = null;
  private passedClientBytes = 0;
  private passedModelAt: number | null = null;
  /**
   * Client audio sent to the model that it may not have heard (core/sent-audio.ts), oldest
   * first, bounded by the config's sentAudioMaxBytes (the oldest go).
   */
  private sentAudio: Uint8Array[] = [];
  /** Where the kept audio starts in `sentAudio` (the bound drops from the front). */
  private sentAudioHead = 0;
  private sentAudioBytes = 0;
  /** The unanswered speech last kept (carry.ts `unansweredSpeech`). */
  private keptSpeech: string | null = null;
  /** The resumption handle last kept (the restored state's, at first). */
  private keptHandle: string | null;

  constructor(
    private current: CoreState,
    private readonly ports: InterpreterPorts,
  ) {
    this.gate = this.gateOf(current);
    this.keptHandle = current.upstream.handle;
  }

  get state(): CoreState {
    return this.current;
  }

  /** Model events taken in (stats). */
  modelEvents = 0;

  /**
   * The one way in for every input — client frames, the model link's events, tool outcomes,
   * timers — so that what is done per input is done here. Audio goes by the audio gate: a
   * core step only when one would matter. A line with a `textId` is looked up in the log.
   * `direct` (tests that drive the core's own judgement): a core step for the input as it
   * is, whatever the audio gate says, with no lookup.
   */
  handleInput(input: CoreInput, direct = false): void {
    if (this.superseded) return;
    if (direct) {
      this.takeStep(input);
      return;
    }
    if (input.type === "client_audio") {
      this.ports.tap?.heard(input.clientId, input.pcm);
      this.clientAudio(input);
      return;
    }
    if (input.type === "client_text" && input.textId !== undefined) {
      // Whether the line was taken before is the log's to say (the core keeps no list of ids).
      this.takeStep({ ...input, recorded: this.ports.log.hasTextId(input.textId) });
      return;
    }
    if (input.type === "model") {
      this.modelEvents++;
      const event = input.event.type;
      if (event === "audio_delta") {
        this.modelAudio(input.event.pcm);
        return;
      }
      if ((event === "input_transcript" || event === "speech_started") && this.gate.transcript) {
        // Only the model's sign of life: set at the next step, as passed audio's is.
        this.passedModelAt = this.ports.clock();
        this.passed.transcripts++;
        return;
      }
    }
    this.takeStep(input);
  }

  /** A client's audio chunk: through the open gate to the model, or a core step. */
  private clientAudio(input: Extract<CoreInput, { type: "client_audio" }>): void {
    if (!this.gate.input) {
      this.takeStep(input);
      return;
    }
    this.passedClientAt = this.ports.clock();
    if (input.quiet !== true) this.passedSpeechAt = this.passedClientAt;
    this.passedClientBytes += input.pcm.length;
    this.passed.client++;
    const keep = this.gate.keep;
    this.carry(() => this.sendModel({ type: "user_audio", pcm: input.pcm }, keep), "send_model");
  }

  /** A model audio chunk: through the open gate to the clients, or a core step. */
  private modelAudio(pcm: Uint8Array): void {
    if (!this.gate.output) {
      this.takeStep({ type: "model", event: { type: "audio_delta", pcm } });
      return;
    }
    this.passedModelAt = this.ports.clock();
    this.passed.model++;
    this.carry(() => this.sendAudio(pcm), "send_audio");
  }

  /** A core step for `input` (whatever the audio gate says), then its effects, in order. */
  private takeStep(input: CoreInput): void {
    let passed: AudioPassed | null = null;
    if (this.passedClientAt !== null || this.passedModelAt !== null) {
      passed = {
        clientAt: this.passedClientAt,
        speechAt: this.passedSpeechAt,
        clientBytes: this.passedClientBytes,
        modelAt: this.passedModelAt,
      };
      this.passedClientAt = null;
      this.passedSpeechAt = null;
      this.passedClientBytes = 0;
      this.passedModelAt = null;
    }
    this.stepOnce(input, passed);
  }

  private gateOf(state: CoreState): AudioGate {
    const gate = this.ports.audioGate ?? audioGate;
    return gate === "off" ? GATE_CLOSED : gate(state);
  }

  /** Carries out one effect; one that fails must not take the session down with it. */
  private carry(effect: () => void, what: string): void {
    try {
      effect();
    } catch (err) {
      this.report(`${what} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private stepOnce(input: CoreInput, passed: AudioPassed | null): void {
    const now = this.ports.clock();
    this.ports.stepping?.(input);
    this.ports.beforeStep?.(this.current);
    const { state, effects } = step(this.current, input, now, passed);
    this.current = state;
    const unrecorded = new Set<number>();
    // Each durable frame is encoded once: the same string goes to the log row and to every client.
    const encoded = new Map<number, string>();
    // What goes to the model goes first, before the step's log write: a message sent after a
    // write waits in the output gate until the write is durable, and the model needs no such
    // wait. Were the object to die before the write lands, the model connection dies with it
    // and the next one is seeded from the log, which never had the input: nothing diverges.
    for (const e of effects)
      if (TO_MODEL.has(e.type)) this.carry(() => this.carryOut(e, encoded), e.type);
    // The step's timeline rows go with its last log write, in the same statement (a row is a
    // debug trace: nothing waits for it, and one statement costs what one row would), or by
    // themselves after its effects when the step wrote no event there.
    const traces: TraceRow[] = [];
    for (const e of effects) {
      if (e.type === "trace") traces.push({ at: now, kind: e.kind, detail: e.detail });
    }
    let traced = traces.length === 0;
    // The step's log writes go in one transaction before the effects that follow them are
    // carried out (frames sent after a write are held by the output gate until it is
    // durable: no client sees what the log may lose). A replay reads the log, so writes are
    // split at a replay.
    let segmentStart = 0;
    for (let i = 0; i <= effects.length; i++) {
      const effect = effects[i];
      if (effect !== undefined && effect.type !== "replay") continue;
      const segment = effects.slice(segmentStart, effect === undefined ? i : i + 1);
      segmentStart = i + 1;
      if (this.writeSegment(segment, unrecorded, encoded, effect === undefined ? traces : []))
        traced = true;
      if (this.superseded) return;
      for (const e of segment) {
        if (e.type === "append_history" || TO_MODEL.has(e.type)) continue;
        if (e.type === "send_durable" && unrecorded.has(e.frame.seq)) continue;
        this.carry(() => this.carryOut(e, encoded), e.type);
      }
    }
    if (!traced) this.carry(() => this.ports.log.trace(traces), "trace");
    const speech = unansweredSpeech(this.current);
    if (speech !== this.keptSpeech) {
      this.keptSpeech = speech;
      this.carry(() => this.ports.log.keepSpeech?.(speech, now), "keep_speech");
    }
    const handle = this.current.upstream.handle;
    if (handle !== this.keptHandle) {
      this.keptHandle = handle;
      const seq = this.current.nextSeq - 1;
      this.carry(() => this.ports.log.keepHandle?.(handle, seq), "keep_handle");
    }
    this.gate = this.gateOf(this.current);
    this.ports.observe?.(input, effects);
  }

  /**
   * Writes a segment's events in one transaction, with `traces` when there are any; if that
   * fails, none of their frames go out. True when `traces` were written.
   */
  private writeSegment(
    segment: readonly Effect[],
    unrecorded: Set<number>,
    encoded: Map<number, string>,
    traces: readonly TraceRow[],
  ): boolean {
    const events = segment.flatMap((e) => (e.type === "append_history" ? e.events : []));
    if (events.length === 0) return false;
    for (const e of segment) {
      if (e.type === "send_durable") encoded.set(e.frame.seq, JSON.stringify(e.frame));
    }
    try {
      this.ports.log.append(
        events,
        // Every recorded event has its send_durable (StepContext.record makes both).
        events.map((e) => encoded.get(e.seq) ?? ""),
        traces,
      );
      this.transactions++;
      return true;
    } catch (err) {
      if (err instanceof LogWriterSuperseded) {
        // Never numbered on from what the other wrote (that made two writers of one log): this
        // instance stands down, and its clients reconnect to the one that writes now.
        this.superseded = true;
        this.ports.superseded?.(err.message);
        return false;
      }
      for (const e of events) unrecorded.add(e.seq);
      // Numbering goes on from what the log really holds: the one write to the state outside
      // `step`, a correction from the store, which has the last word on what was recorded.
      this.current = { ...this.current, nextSeq: this.ports.log.lastSeq() + 1 };
      this.report(`log write failed: ${err instanceof Error ? err.message : String(err)}`);
      // The clients are told that frames they were owed will not come (never the store's words).
      for (const clientId of this.current.clients)
        this.carry(() => this.ports.clients.send(clientId, LOG_WRITE_FAILED), "send_ephemeral");
      return false;
    }
  }

  /**
   * To the model; client audio is kept until the core says it was answered (or goes again),
   * unless the gate says the next step forgets it anyway (`keep`).
   */
  private sendModel(command: ModelCommand, keep = true): void {
    this.ports.model.send(command);
    if (command.type !== "user_audio" || !keep) return;
    const kept = this.sentAudio;
    kept.push(command.pcm);
    this.sentAudioBytes += command.pcm.length;
    const bound = this.current.config.sentAudioMaxBytes;
    while (this.sentAudioBytes > bound && this.sentAudioHead < kept.length)
      this.sentAudioBytes -= kept[this.sentAudioHead++]?.length ?? 0;
    // A microphone streams between turns too: the dropped front is cut off now and then.
    if (this.sentAudioHead > 256) {
      this.sentAudio = kept.slice(this.sentAudioHead);
      this.sentAudioHead = 0;
    }
  }

  /** The model's audio to the clients (and to a recording: what the session said). */
  private sendAudio(pcm: Uint8Array): void {
    this.ports.clients.audio(pcm);
    this.ports.tap?.said(pcm);
  }

  private report(message: string): void {
    this.ports.reportError?.(message);
  }

  private carryOut(effect: Effect, encoded: ReadonlyMap<number, string>): void {
    const { log, clients, model, tools, timers } = this.ports;
    switch (effect.type) {
      case "send_model":
        this.sendModel(effect.command);
        return;
      case "forget_sent_audio":
        this.sentAudio = [];
        this.sentAudioHead = 0;
        this.sentAudioBytes = 0;
        return;
      case "resend_sent_audio":
        // Kept as they are: the new connection may go before it hears them too.
        for (const pcm of this.sentAudio.slice(this.sentAudioHead))
          model.send({ type: "user_audio", pcm });
        return;
      case "append_history":
        // Written per segment, in one transaction (writeSegment).
        return;
      case "send_durable":
        clients.broadcast(
          effect.frame,
          encoded.get(effect.frame.seq) ?? JSON.stringify(effect.frame),
        );
        return;
      case "send_ephemeral":
        clients.send(effect.clientId, effect.frame);
        return;
      case "send_audio":
        this.sendAudio(effect.pcm);
        return;
      case "replay":
        // A range read and a send: the frames were encoded when they were written.
        clients.sendEncoded(effect.clientId, log.framesAfter(effect.afterSeq));
        return;
      case "run_tool": {
        const { callId } = effect;
        void tools.run(callId, effect.name, effect.args).then((outcome) => {
          if (outcome !== null) this.handleInput({ type: "tool_outcome", callId, ...outcome });
        });
        return;
      }
      case "abort_tool":
        tools.abort(effect.callId, effect.reason);
        return;
      case "set_timer": {
        const timer = effect.timer;
        timers.set(timer, effect.at, effect.jitterMs ?? 0, () =>
          this.handleInput({ type: "timer_fired", timer }),
        );
        return;
      }
      case "clear_timer":
        timers.clear(effect.timer);
        return;
      case "open_upstream":
        // Read when the new connection is ready: the log up to, not including, the input
        // that waits in the outbox (it goes out right after, as itself).
        model.open(
          effect.open,
          () => {
            const since = this.current.outboxSince;
            const events = log.readAfter(0);
            return this.ports.rebuild(
              since === null ? events : events.filter((e) => e.seq < since),
            );
          },
          effect.agent,
        );
        return;
      case "update_upstream":
        model.update(effect.agent);
        return;
      case "close_upstream":
        model.close(effect.reason);
        return;
      case "close_clients":
        clients.closeAll(effect.code, effect.reason);
        return;
      case "trace":
        // Written once for the whole step (stepOnce).
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
