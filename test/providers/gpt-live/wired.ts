/**
 * A session on the GPT-Live wire without a runtime: the core and its production interpreter
 * (test/core/harness.ts), the GPT-Live adapter, and the simulator's GPT-Live face (its
 * pure machine), joined by the wire's JSON text both ways, on one virtual clock. What the
 * workerd tests run over real sockets, in milliseconds and deterministically, so that each
 * scenario can run with a control arm (the per-response gate the field ran before it learned
 * the backend is one chain: scripts/measurement/per-response-gate.ts).
 */
import { z } from "zod";
import { PerResponseGate } from "../../../scripts/measurement/per-response-gate.js";
import { ALL_GUARDS, type Guards } from "../../../src/core/core-config.js";
import { NO_GUARDS } from "../../../src/core/session-state.js";
import { rebuildContext } from "../../../src/history/rebuild.js";
import { GPT_LIVE_CAPABILITIES, GptLiveAdapter } from "../../../src/providers/gpt-live/adapter.js";
import {
  createGptLiveSimulator,
  type LiveSimState,
  liveStep,
} from "../../../src/simulator/gpt-live/machine.js";
import { DEFAULT_KNOBS, type SimulatorKnobs } from "../../../src/simulator/knobs.js";
import type { ServerFrame } from "../../../src/vocabulary/frames.js";
import type { ToolPolicy } from "../../../src/vocabulary/model.js";
import type { AgentSpec } from "../../../src/vocabulary/provider-adapter.js";
import { Harness } from "../../core/harness.js";
import { PerOutputGate } from "./per-output-gate.js";

const speak = (name: string, runOn: "server" | "client" = "server"): ToolPolicy => ({
  name,
  runOn,
  followUp: "speak",
  timeoutMs: 20_000,
});
const silent = (name: string, runOn: "server" | "client" = "server"): ToolPolicy => ({
  name,
  runOn,
  followUp: "silent",
  timeoutMs: 20_000,
});

/**
 * The session's tools: lookups that are spoken, side effects and context that are not, one of
 * each kind on the client.
 */
export const WIRED_TOOLS: Record<string, ToolPolicy> = {
  lookup_faq: speak("lookup_faq"),
  lookup_plan: speak("lookup_plan"),
  lookup_preferences: silent("lookup_preferences"),
  ask_user: speak("ask_user", "client"),
  set_preference: silent("set_preference"),
  suggest_topics: silent("suggest_topics", "client"),
};

const AGENT: AgentSpec = {
  systemInstruction: "Be brief.",
  tools: Object.values(WIRED_TOOLS).map((t) => ({
    name: t.name,
    description: `The ${t.name} tool.`,
    args: z.object({}),
    followUp: t.followUp,
  })),
};

export type Gate = "session" | "per-response" | "per-output";

export interface WiredOptions {
  knobs?: Partial<SimulatorKnobs>;
  /** The adapter's gate: liveline's (default), or a control: per response, or per output. */
  gate?: Gate;
  /** Server tools answered by the test after this many ms (name → ms); others at once. */
  toolDelays?: Record<string, number>;
  /** Client tool calls answered after this many ms (null: never; the test answers them). */
  clientAnswerMs?: number | null;
  /** The naive relay's core (every guard off). */
  naive?: boolean;
  /** How a cancelled call is told to the backend (the adapter's option; default its own). */
  cancelledOutput?: "cancelled" | "error";
  /** Control: the adapter's word that the service session expired is not passed on. */
  hideExpiry?: boolean;
  /** Protections switched off, for a control (the rest stay on; `naive`: all off). */
  off?: Partial<Guards>;
}

export class Wired {
  readonly h: Harness;
  /** Each service session the face served (a new one per connection), newest last. */
  readonly sessions: LiveSimState[] = [];
  /** Every client event the adapter sent, as JSON, in order (across connections). */
  readonly sent: Record<string, unknown>[] = [];
  /** Every server event the adapter read, in order. */
  readonly received: Record<string, unknown>[] = [];
  private adapter: GptLiveAdapter | null = null;
  private face: LiveSimState | null = null;
  private wakeAt: number | null = null;
  private readonly inbox: Array<{ text: string } | { close: number; reason: string }> = [];
  /** Server tool runs to settle, and when. */
  private readonly due = new Map<string, number>();
  private readonly opts: WiredOptions;

  constructor(opts: WiredOptions = {}) {
    this.opts = opts;
    const knobs: SimulatorKnobs = {
      ...DEFAULT_KNOBS,
      timeScale: 0,
      // A millisecond of speech a word: the timeline as real, its audio next to nothing to make.
      msPerWord: 1,
      repeatAnswers: true,
      calls: { byTurn: {}, otherwise: [] },
      ...opts.knobs,
    };
    this.h = new Harness({
      tools: WIRED_TOOLS,
      capabilities: GPT_LIVE_CAPABILITIES,
      guards: opts.naive === true ? NO_GUARDS : { ...ALL_GUARDS, ...opts.off },
    });
    this.h.onOpenUpstream = (open) => {
      const adapter = new GptLiveAdapter({
        model: "gpt-live-1",
        backendModel: "gpt-5-mini",
        agent: AGENT,
        dedupeCalls: opts.naive !== true,
        gate:
          opts.gate === "per-response"
            ? new PerResponseGate()
            : opts.gate === "per-output"
              ? new PerOutputGate()
              : undefined,
        cancelledOutput: opts.cancelledOutput,
      });
      this.adapter = adapter;
      if (open.mode === "rebuild") adapter.encodeContext(rebuildContext(this.h.log));
      const face = createGptLiveSimulator(knobs, `sess_w${this.sessions.length + 1}`);
      this.face = face;
      this.sessions.push(face);
      this.inbox.length = 0;
      this.toFace({ type: "open" });
      this.toFace({ type: "frame", text: this.record(adapter.setupFrame({ seeded: false })) });
    };
    this.h.onModelCommand = (command) => {
      const adapter = this.adapter;
      if (adapter === null) return;
      for (const frame of adapter.encode(command))
        this.toFace({ type: "frame", text: this.record(frame) });
    };
    this.h.onCloseUpstream = () => {
      this.adapter = null;
      this.face = null;
      this.wakeAt = null;
      this.inbox.length = 0;
    };
    this.h.connect("phone");
    this.pump();
  }

  /** The face as it stands now (the latest service session). */
  get service(): LiveSimState {
    return this.sessions.at(-1)!;
  }

  private record(frame: string): string {
    const event = JSON.parse(frame) as Record<string, unknown>;
    if (event.type !== "session.input_audio.append") this.sent.push(event);
    return frame;
  }

  private toFace(input: Parameters<typeof liveStep>[1]): void {
    const face = this.face;
    if (face === null) return;
    const { state, effects, wakeAt } = liveStep(face, input, this.h.now);
    this.face = state;
    this.sessions[this.sessions.length - 1] = state;
    this.wakeAt = wakeAt;
    for (const e of effects) {
      if (e.type === "close") this.inbox.push({ close: e.code, reason: e.reason });
      else if (e.to !== "sideband") this.inbox.push({ text: JSON.stringify(e.message) });
    }
  }

  /** Deliver what the service sent, one event at a time, as the link does. */
  pump(): void {
    for (let guard = 0; guard < 10_000; guard++) {
      this.settleTools();
      const item = this.inbox.shift();
      if (item === undefined) return;
      const adapter = this.adapter;
      if (adapter === null) continue;
      if ("close" in item) {
        this.adapter = null;
        this.face = null;
        this.wakeAt = null;
        const fatal = adapter.classifyClose(item.close) === "fatal";
        this.h.model({ type: "upstream_closed", code: item.close, reason: item.reason, fatal });
        continue;
      }
      this.received.push(JSON.parse(item.text) as Record<string, unknown>);
      const decoded = adapter.decode(item.text);
      if (!decoded.ok) throw new Error(decoded.error.message);
      for (const frame of decoded.send ?? [])
        this.toFace({ type: "frame", text: this.record(frame) });
      for (const event of decoded.events) {
        if (event.type === "upstream_closed" && event.expired === true && this.opts.hideExpiry) {
          // The control: the close that follows is taken as any other.
          continue;
        }
        this.h.model(event);
      }
    }
    throw new Error("the wire never went quiet");
  }

  /** Server tools the core started: each settled after its delay (at once by default). */
  private settleTools(): void {
    for (const [callId, name] of this.h.runningTools) {
      if (this.due.has(callId)) continue;
      this.due.set(callId, this.h.now + (this.opts.toolDelays?.[name] ?? 0));
    }
    for (const [callId, at] of this.due) {
      if (at > this.h.now) continue;
      this.due.delete(callId);
      if (!this.h.runningTools.has(callId)) continue;
      const name = this.h.runningTools.get(callId)!;
      this.h.runningTools.delete(callId);
      this.h.input({ type: "tool_outcome", callId, result: { [name]: "ok" } });
    }
    const answerMs = this.opts.clientAnswerMs === undefined ? 0 : this.opts.clientAnswerMs;
    if (answerMs === null) return;
    for (const f of this.h.durableFrames("phone")) {
      if (f.type !== "tool_call" || f.runOn !== "client") continue;
      const key = `client:${f.callId}`;
      if (!this.due.has(key)) this.due.set(key, this.h.now + answerMs);
    }
    for (const [key, at] of this.due) {
      if (!key.startsWith("client:") || at > this.h.now) continue;
      this.due.set(key, Number.POSITIVE_INFINITY);
      const callId = key.slice("client:".length);
      this.h.input({
        type: "client_tool_result",
        clientId: "phone",
        callId,
        result: { shown: true },
      });
    }
  }

  /** Let `ms` of virtual time pass: the core's timers, the face's pacing and the tools, in order. */
  advance(ms: number): void {
    const until = this.h.now + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      this.pump();
      const next = Math.min(
        this.wakeAt ?? Number.POSITIVE_INFINITY,
        ...[...this.h.timers.values()],
        ...[...this.due.values()],
      );
      if (next > until) break;
      this.h.now = Math.max(this.h.now, next);
      for (const [timer, at] of [...this.h.timers]) {
        if (at > this.h.now) continue;
        this.h.timers.delete(timer);
        this.h.input({ type: "timer_fired", timer });
        this.pump();
      }
      if (this.wakeAt !== null && this.wakeAt <= this.h.now) this.toFace({ type: "tick" });
    }
    this.h.now = until;
    this.pump();
  }

  /** A line the user types. */
  type(text: string): void {
    this.h.input({ type: "client_text", clientId: "phone", text });
    this.pump();
  }

  /**
   * The user speaks (`ms` of loud 16 kHz PCM), then is silent long enough to end it: one chunk
   * each (the face's detector reads 20 ms windows within a chunk; the core takes any size).
   */
  say(ms = 800): void {
    this.h.input({ type: "client_audio", clientId: "phone", pcm: tone(ms, true) });
    this.h.input({ type: "client_audio", clientId: "phone", pcm: tone(600, false) });
    this.pump();
  }

  /** The client answers its call `callId`. */
  answer(callId: string, result: Record<string, unknown> = { shown: true }): void {
    this.h.input({ type: "client_tool_result", clientId: "phone", callId, result });
    this.pump();
  }

  /** What the phone saw. */
  get frames(): ServerFrame[] {
    return this.h.durableFrames("phone");
  }
}

const tones = new Map<string, Uint8Array>();

/** `ms` of 16 kHz PCM16: a loud tone (speech to the face's energy detector) or silence. */
function tone(ms: number, loud: boolean): Uint8Array {
  const key = `${ms}:${loud}`;
  const made = tones.get(key);
  if (made !== undefined) return made;
  const samples = (ms * 16000) / 1000;
  const bytes = new Uint8Array(samples * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples; i++) {
    const value = loud ? Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000)) : 0;
    view.setInt16(i * 2, value, true);
  }
  tones.set(key, bytes);
  return bytes;
}
