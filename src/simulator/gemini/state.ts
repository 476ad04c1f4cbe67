/** The simulator's state, its inputs and effects, and the step context every part writes through. */
import type {
  GeminiFunctionDeclaration,
  GeminiServerMessage,
} from "../../providers/gemini/schemas.js";
import type { SimulatorKnobs } from "../knobs.js";
import { draw, seedState } from "../prng.js";
import { wordCount } from "../script.js";
import { createVad, type VadState } from "../vad.js";

/** What a resumption handle restores: the conversation as the model remembers it. */
export interface ResumeContext {
  /** The chunks of the model's last remembered reply (what a regeneration repeats). */
  lastReply: string[];
  userTurns: number;
  answers: number;
  callCount: number;
  promptTokens: number;
  /** Bracketed lines of seeded histories (tool calls and outcomes as text), the last 10. */
  remembered: string[];
  /** A seeded conversation's last user line that no model turn followed: still to answer. */
  unanswered?: string | undefined;
  /** The reply still owed after an empty one (what a nudge gets), if any. */
  owed?: string[] | null;
  /** When the handle was issued (ms since the epoch), for `handleTtlMs`. */
  savedAt: number;
}

export type SimInput =
  /** The WebSocket is open: arms the connection timers. */
  | { type: "open" }
  /** One client frame, as text (binary frames are UTF-8 decoded by the shell). */
  | { type: "frame"; text: string }
  /** The answer to a `lookup_handle` effect; null: no such handle. */
  | { type: "resume_context"; handle: string; context: ResumeContext | null }
  /** A scheduled moment (`wakeAt`) has come. */
  | { type: "tick" };

export type SimEffect =
  | { type: "send"; message: GeminiServerMessage }
  | { type: "close"; code: number; reason: string }
  | { type: "save_handle"; handle: string; context: ResumeContext }
  | { type: "lookup_handle"; handle: string };

export interface SimStepResult {
  state: SimState;
  effects: SimEffect[];
  /** When to call back with a `tick` (ms since the epoch), or null if nothing is scheduled. */
  wakeAt: number | null;
}

export type Op =
  | { op: "pause"; ms: number }
  /** A sign of work while the model waits (`workSigns`): a thought part, the n-th second. */
  | { op: "think"; n: number }
  | { op: "say"; text: string; ms: number }
  | { op: "calls"; names: string[]; duplicate: boolean }
  /** Wait for the generation's blocking calls; the rest is a reply to their results. */
  | { op: "wait" }
  | { op: "end" };

export interface Spoken {
  name: string;
  summary: string;
}

export interface Gen {
  id: number;
  ops: Op[];
  pc: number;
  /** Blocking calls not yet answered. */
  waiting: string[];
  /** The generation had blocking calls: what follows `wait` answers tool results. */
  waited: boolean;
  race: boolean;
  callIds: string[];
  toSpeak: Spoken[];
  said: string[];
  /** Its speech becomes the "previous reply" a regeneration repeats. */
  remember: boolean;
  userText: string;
}

export interface SimCall {
  /** Internal key; equals the wire id unless noIds. */
  key: string;
  wireId: string | null;
  name: string;
  genId: number;
  nonBlocking: boolean;
  sideEffect: boolean;
  answered: boolean;
}

export type Reaction = { kind: "speak"; results: Spoken[] } | { kind: "regen" };

export type Scheduled =
  | { kind: "gen"; genId: number }
  | { kind: "setup_complete" }
  | { kind: "go_away" }
  | { kind: "close"; code: number; reason: string };

export interface SetupInfo {
  /** The model family of `setup.model`: what the service does depends on it. */
  family: "2.x" | "3.x";
  /** Every call blocks and turnComplete waits for results (3.x, or the syncOnly knob). */
  syncOnly: boolean;
  /** Probability of the fire-and-forget race (2.x: always, unless the knob says otherwise). */
  race: number;
  /** `historyConfig.initialHistoryInClientContent`: the first clientContent is history. */
  historyInClientContent: boolean;
  audio: boolean;
  transcribe: boolean;
  resumption: boolean;
  declared: Record<string, GeminiFunctionDeclaration>;
  declaredOrder: string[];
}

export interface SimState {
  knobs: SimulatorKnobs;
  sessionName: string;
  connectionId: string;
  /** "resuming" and "setting_up": frames are buffered until setupComplete is sent. */
  phase: "awaiting_setup" | "setting_up" | "resuming" | "live" | "closed";
  rng: number;
  setup: SetupInfo | null;
  /** Frames that arrived while a resumption handle was being looked up. */
  buffered: string[];
  context: Omit<ResumeContext, "savedAt">;
  /** Replies of this connection (1-based indexes for emptySchedule). */
  replies: number;
  gens: number;
  turnsCompleted: number;
  gen: Gen | null;
  calls: Record<string, SimCall>;
  callOrder: string[];
  deferred: Reaction[];
  /** The initial history may still come (historyConfig, and nothing but setup sent yet). */
  historyOpen: boolean;
  /** The real reply an empty one stood for; the next clientContent gets it. */
  owed: string[] | null;
  /** The user's last line on this connection (`callsLast`: asked to go on, it answers it again). */
  lastLine: string | null;
  audioBytes: number;
  audioSinceGen: number;
  /** The energy detector (`vad=energy`); untouched otherwise. */
  vad: VadState;
  utterances: number;
  handles: number;
  goingAway: boolean;
  queue: Array<{ at: number; seq: number; item: Scheduled }>;
  queueSeq: number;
}

export const INVALID_ARGUMENT = "Request contains an invalid argument.";

export const AUDIO_MIME = "audio/pcm;rate=24000";

/** 100 ms of 16 kHz PCM16: audio during a reply beyond this is the user barging in. */
export const BARGE_IN_BYTES = 3200;

export function createSimulator(opts: {
  knobs: SimulatorKnobs;
  sessionName: string;
  connectionId: string;
}): SimState {
  return {
    knobs: opts.knobs,
    sessionName: opts.sessionName,
    connectionId: opts.connectionId,
    phase: "awaiting_setup",
    rng: seedState(opts.knobs.seed),
    setup: null,
    buffered: [],
    context: {
      lastReply: [],
      userTurns: 0,
      answers: 0,
      callCount: 0,
      promptTokens: 0,
      remembered: [],
    },
    replies: 0,
    gens: 0,
    turnsCompleted: 0,
    gen: null,
    calls: {},
    callOrder: [],
    deferred: [],
    historyOpen: false,
    owed: null,
    lastLine: null,
    audioBytes: 0,
    audioSinceGen: 0,
    vad: createVad(),
    utterances: 0,
    handles: 0,
    goingAway: false,
    queue: [],
    queueSeq: 0,
  };
}

export class Ctx {
  readonly effects: SimEffect[] = [];
  constructor(
    readonly s: SimState,
    readonly now: number,
  ) {}
  send(message: GeminiServerMessage): void {
    if (this.s.phase !== "closed") this.effects.push({ type: "send", message });
  }
  close(code: number, reason: string): void {
    if (this.s.phase === "closed") return;
    this.s.phase = "closed";
    this.s.queue = [];
    this.s.gen = null;
    this.effects.push({ type: "close", code, reason });
  }
  draw(): number {
    return draw(this.s);
  }
  schedule(delayMs: number, item: Scheduled): void {
    this.s.queue.push({ at: this.now + delayMs, seq: this.s.queueSeq++, item });
  }
  /** A pacing delay, scaled. */
  paced(ms: number): number {
    return Math.max(0, ms * this.s.knobs.timeScale);
  }
}

export function tokens(text: string): number {
  return Math.ceil(wordCount(text) * 1.3);
}
