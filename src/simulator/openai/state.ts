/** The OpenAI face's state, its inputs and effects, and the step context. */
import type { SimulatorKnobs } from "../knobs.js";
import { draw, seedState } from "../prng.js";
import { createVad, type VadState } from "../vad.js";
import { eventName, FACE_DIALECTS, type FaceDialectName } from "./dialects.js";

export type Json = Record<string, unknown>;

/** A conversation item; `id`: the service's item id (what `previous_item_id` names). */
export type Item = { id?: string | undefined } & (
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "call"; callId: string; name: string }
  | {
      kind: "output";
      callId: string;
      name: string;
      summary: string;
      /** Added before this connection's first response: part of a seeded conversation. */
      seeded?: true | undefined;
    }
);

export interface OaiSimState {
  knobs: SimulatorKnobs;
  /** Which service of the family the face plays (./dialects.ts). */
  dialect: FaceDialectName;
  rng: number;
  closed: boolean;
  tools: string[];
  /** The session's audio formats (session.update): G.711 μ-law at 8 kHz, or PCM16 at 24 kHz. */
  inputMulaw: boolean;
  outputMulaw: boolean;
  /** PCM input's sample rate (GA: 24 kHz only; xAI and Voice Live are told the rate). */
  inputRate: number;
  /** Each declared tool's parameter schema (JSON Schema), to shape its calls' arguments. */
  toolParameters: Record<string, Record<string, unknown> | undefined>;
  audio: boolean;
  /** The session's voice, and whether it has spoken (after which it cannot change). */
  voice: string | null;
  spokeAudio: boolean;
  /** The audio each of its message items said, in ms (what a truncation may cut). */
  audioMs: Record<string, number>;
  items: Item[];
  /** Items up to this index have been answered by a response. */
  answered: number;
  /** `answered` before the active response: a cancelled response answered nothing. */
  answeredBefore: number;
  /** The response in progress: its id; its events wait in the queue. */
  active: string | null;
  queue: { at: number; message: Json | null; close?: { code: number; reason: string } }[];
  responses: number;
  userTurns: number;
  answers: number;
  ids: number;
  lastReply: string[];
  /** What a reply that called tools still has to say after their outputs. */
  owed: string | null;
  /**
   * The latest response that called tools said its whole answer with them (a bundling
   * dialect): what it owes after their outputs is nothing, and it says its answer again.
   */
  bundled: boolean;
  audioBytes: number;
  speaking: boolean;
  /** The energy detector (`vad=energy`); untouched otherwise. */
  vad: VadState;
  utterances: number;
  /** When the connection opened (for dropAfterMs). */
  openedAt: number;
  /**
   * A SIP call's session (src/simulator/openai-sip): its audio plays to a phone, so the face
   * says when it starts, has played out, or was cut (`output_audio_buffer.*`), and passes
   * the caller's keys on (`input_audio_buffer.dtmf_event_received`).
   */
  sip: boolean;
  /** The response whose audio is playing to the phone (a SIP call's), or null. */
  playing: string | null;
}

export type OaiSimInput =
  | { type: "open" }
  | { type: "frame"; text: string }
  | { type: "tick" }
  /** A SIP call's caller pressed a key (the SIP stand-in's phone). */
  | { type: "dtmf"; digit: string };
export type OaiSimEffect =
  | { type: "send"; message: Json }
  | { type: "close"; code: number; reason: string };

/** Bytes of input audio a millisecond: PCM16 at its rate, or μ-law at 8 kHz. */
export function inputBytesPerMs(s: OaiSimState): number {
  return s.inputMulaw ? 8 : s.inputRate / 500;
}

export function createOpenAISimulator(
  knobs: SimulatorKnobs,
  dialect: FaceDialectName = "openai",
  sip = false,
): OaiSimState {
  return {
    knobs,
    dialect,
    sip,
    playing: null,
    rng: seedState(knobs.seed),
    closed: false,
    tools: [],
    inputMulaw: false,
    outputMulaw: false,
    inputRate: 24000,
    toolParameters: {},
    audio: true,
    voice: null,
    spokeAudio: false,
    audioMs: {},
    items: [],
    answered: 0,
    answeredBefore: 0,
    active: null,
    queue: [],
    responses: 0,
    userTurns: 0,
    answers: 0,
    ids: 0,
    lastReply: [],
    owed: null,
    bundled: false,
    audioBytes: 0,
    speaking: false,
    vad: createVad(),
    utterances: 0,
    openedAt: 0,
  };
}

export class Ctx {
  readonly effects: OaiSimEffect[] = [];
  constructor(
    readonly s: OaiSimState,
    readonly now: number,
  ) {}
  /** An event, named as the face's dialect names it (none where the dialect has no such event). */
  send(message: Json): void {
    const type = eventName(FACE_DIALECTS[this.s.dialect], String(message.type));
    if (type === null) return;
    this.effects.push({ type: "send", message: { event_id: this.id("event"), ...message, type } });
  }
  id(prefix: string): string {
    return `${prefix}_${++this.s.ids}`;
  }
  draw(): number {
    return draw(this.s);
  }
  /** Paced events of the active response: at `ms` from now, scaled. */
  later(ms: number, message: Json): void {
    this.s.queue.push({ at: this.now + ms * this.s.knobs.timeScale, message });
  }
}
