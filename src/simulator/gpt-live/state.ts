/** The GPT-Live face's state, its inputs and effects, and the step context. */
import type { SimulatorKnobs } from "../knobs.js";
import { draw, seedState } from "../prng.js";
import { createVad, type VadState } from "../vad.js";
import type { LiveAudioFormat, MediaStartConfig, SessionStartConfig } from "./strict-schemas.js";

export type Json = Record<string, unknown>;

/** Who a server event goes to: the primary WebSocket, the attached sidebands, or both. */
export type Audience = "primary" | "sideband" | "all";

/** A function call the backend made, and what became of it. */
export interface Call {
  callId: string;
  name: string;
  /** The output's summary once a `function_call_output` came for it. */
  summary: string | null;
  /** Its output said the call was cancelled (`{"status": "cancelled"}`): never spoken of. */
  cancelled?: boolean | undefined;
  /** Its response failed: the service dropped it, and refuses its output. */
  dropped?: boolean | undefined;
}

/**
 * Backend work waiting for tool results: one delegation (voice) or one client-requested
 * response (text). `owed`: what the model's reply still has to say after the results.
 */
export interface Task {
  delegationId: string | null;
  calls: Call[];
  owed: string | null;
  /** Superseded by newer user input (knob `supersede`): its results are never spoken. */
  superseded: boolean;
  /** A `response.create` continued it (its results were handed to the backend). */
  continued: boolean;
}

/** An utterance heard while the backend's one chain was busy: answered once it is idle. */
export interface HeldUtterance {
  text: string;
  /** Where it ended on the timeline. */
  end: number;
}

/** Something the machine will do at wall time `at` (the queue is drained in `at` order). */
export type Due =
  | {
      at: number;
      kind: "send";
      to: Audience;
      message: Json;
      /** Part of the model's speech: dropped when the user speaks over it. */
      speech: boolean;
    }
  | { at: number; kind: "usage" }
  /** The model may speak on its own: it does if its speech still ends at `after` then. */
  | { at: number; kind: "unprompted"; after: number }
  | { at: number; kind: "expire" }
  | { at: number; kind: "drop" }
  /** A backend response's last event went out: held speech goes on if the chain is idle. */
  | { at: number; kind: "chain_check" };

export interface LiveSimState {
  knobs: SimulatorKnobs;
  rng: number;
  /** The session id the object gave (a sideband attaches by it). */
  sessionId: string;
  closed: boolean;
  /** The resolved `session.start` config; null until the session started. */
  config: SessionStartConfig | null;
  format: LiveAudioFormat;
  /** Declared backend function tools (responses delegation) and their parameter schemas. */
  tools: string[];
  toolParameters: Record<string, Record<string, unknown> | undefined>;
  /** Each declared tool's description (the script reads what a tool answers from it). */
  toolDescriptions: Record<string, string>;
  startedAt: number;
  muted: boolean;
  /** Input audio: ms heard, and the timeline position of the detector's ms 0. */
  heardMs: number;
  origin: number;
  vad: VadState;
  /** `utteranceMs` mode: ms of the utterance under way (0: none). */
  utteranceHeardMs: number;
  /** Timeline start of the utterance under way. */
  utteranceStart: number;
  utterances: number;
  /** Where the model's speech ends on the session timeline (ms). */
  speechEnd: number;
  /** Backend conversation items added since the last response (`response.item.create`). */
  pendingUser: string[];
  tasks: Task[];
  /** Utterances heard while the chain was busy, in order (the voice holds them). */
  held: HeldUtterance[];
  /** Backend responses streamed so far (the `failResponses` knob counts them, 1-based). */
  responses: number;
  /** `replayToolsOnly`: calls of runs that only called tools, delivered again with the next. */
  unconsumed: Call[];
  userTurns: number;
  /** The seeded conversation's last user line, if no assistant line followed it (session.start). */
  unansweredSeed: string | null;
  answers: number;
  ids: number;
  lastReply: string[];
  /** The latest `session.usage.updated` seconds (cumulative: never goes down). */
  usageSeconds: number;
  queue: Due[];
}

export type LiveSimInput =
  | { type: "open" }
  | { type: "frame"; text: string }
  | { type: "sideband_frame"; text: string }
  /** A WebRTC creation (`POST /v1/live/sessions`) starts the session: no session.start. */
  | { type: "media_start"; session: MediaStartConfig }
  | { type: "tick" };

export type LiveSimEffect =
  | { type: "send"; to: Audience; message: Json }
  | { type: "close"; code: number; reason: string };

export function createGptLiveSimulator(
  knobs: SimulatorKnobs,
  sessionId = "sess_sim",
): LiveSimState {
  return {
    knobs,
    rng: seedState(knobs.seed),
    sessionId,
    closed: false,
    config: null,
    format: { type: "audio/pcm", rate: 24000 },
    tools: [],
    toolParameters: {},
    toolDescriptions: {},
    startedAt: 0,
    muted: false,
    heardMs: 0,
    origin: 0,
    vad: createVad(),
    utteranceHeardMs: 0,
    utteranceStart: 0,
    utterances: 0,
    speechEnd: 0,
    pendingUser: [],
    tasks: [],
    held: [],
    responses: 0,
    unconsumed: [],
    userTurns: 0,
    unansweredSeed: null,
    answers: 0,
    ids: 0,
    lastReply: [],
    usageSeconds: 0,
    queue: [],
  };
}

export class Ctx {
  readonly effects: LiveSimEffect[] = [];
  /** The handled event's `event_id`: echoed as `client_event_id` by its replies. */
  clientEventId: string | undefined;
  constructor(
    readonly s: LiveSimState,
    readonly now: number,
    /** Where the event being handled came from: its errors go back there. */
    readonly origin: "primary" | "sideband" = "primary",
  ) {}
  send(message: Json, to: Audience = "all"): void {
    this.effects.push({ type: "send", to, message: { event_id: this.id("event"), ...message } });
  }
  /** A direct answer to the handled event, carrying its `client_event_id` when it had one. */
  reply(message: Json, to: Audience = "all"): void {
    const ref = this.clientEventId === undefined ? {} : { client_event_id: this.clientEventId };
    this.send({ ...message, ...ref }, to);
  }
  /** An `error` event (the session goes on), to the connection whose event caused it. */
  error(code: string, message: string, param?: string): void {
    const ref = this.clientEventId === undefined ? {} : { client_event_id: this.clientEventId };
    const error = {
      type: "invalid_request_error",
      code,
      message,
      ...(param === undefined ? {} : { param }),
      ...ref,
    };
    this.send({ type: "error", error, ...ref }, this.origin);
  }
  id(prefix: string): string {
    return `${prefix}_${++this.s.ids}`;
  }
  draw(): number {
    return draw(this.s);
  }
  /** Wall time of a delay in model ms (pacing scales with timeScale; 0 = at once). */
  after(ms: number): number {
    return this.now + ms * this.s.knobs.timeScale;
  }
  /**
   * Where the session is now on its timeline (ms from `session.started`): paced, the wall
   * clock's model time; at timeScale 0, past everything heard and said (all of it went out).
   */
  timeline(): number {
    const s = this.s;
    const heard = s.origin + s.heardMs;
    const scale = s.knobs.timeScale;
    if (scale > 0) return Math.max(heard, (this.now - s.startedAt) / scale);
    return Math.max(heard, s.speechEnd);
  }
}
