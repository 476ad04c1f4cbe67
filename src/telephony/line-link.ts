/**
 * A phone call's media stream as a client of the session, for any carrier whose stream is
 * the common shape: the caller's audio comes in (the line's codec, as its start declared it)
 * and goes to the session as a protocol client's audio would; the model's speech goes out in
 * whole 20 ms frames of the line's codec, each batch followed by a mark, so that the marks
 * the carrier gives back say what the caller actually heard. The carrier's own messages are
 * its `LineWire` (telephony/<carrier>/call-stream.ts); this file is what they share.
 *
 * Carriers play what they are sent at real time, so a reply's audio can still be playing
 * after its turn ended. Playback is cleared when:
 * - the session says the reply was interrupted (the model's own barge-in): the session is
 *   then told how much of the reply had played (`played`), so OpenAI truncates its
 *   transcript where the caller stopped hearing;
 * - the caller speaks over the tail of a reply whose turn has ended (the model has nothing
 *   more to say there, so this is playback alone, as a phone's own player would stop).
 * A clear drops every pending mark: a carrier that echoes them at once (Twilio, Telnyx) has
 * them counted for nothing (they name the reply the clear ended); one that never echoes them
 * (Plivo's checkpoints, Vonage's notifies) is not waited for.
 *
 * On a G.711 line the caller's first second or so of speech is also checked against the law
 * its start declared (audio/law-check.ts): a mismatch is reported once (`lineProblem`), and
 * the audio goes on as declared.
 */

import { LawCheck } from "../audio/law-check.js";
import {
  LineAudioIn,
  LineAudioOut,
  type LineCodec,
  lineBytesPerMs,
  lineRate,
} from "../audio/line-audio.js";
import { frameBytes, wholeFrame } from "../audio/pacing.js";
import type { ServerFrame } from "../vocabulary/frames.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { CallStreamHooks, CallStreamLink } from "./carrier-contract.js";

/** What a carrier's stream says, in its own messages. */
export interface LineWire {
  /** The caller's audio payload as the line's bytes, or null if it is not readable. */
  bytesOf(payload: string | Uint8Array): Uint8Array | null;
  /** Sends the line's audio: whole 20 ms frames of its codec. */
  audio(bytes: Uint8Array): void;
  /** Sends a mark, to come back when the audio sent before it has played. */
  mark(name: string): void;
  /** Drops what the carrier still holds to play. */
  clear(): void;
  /** Closes the stream's socket (the carrier then ends the call, as its answer says). */
  close(code: number, reason: string): void;
}

/** Caller audio louder than this (RMS of PCM16) is speech: line noise is far below it. */
const SPEECH_RMS = 500;
/** Speech this long over a reply's tail stops its playback (a click or a cough does not). */
const SPEECH_OVER_TAIL_MS = 100;
/** A close waits for what is still playing, and its marks, at most this much past its length. */
const CLOSE_PLAYBACK_MARGIN_MS = 2_000;

export class LineLink implements CallStreamLink {
  private readonly wire: LineWire;
  private readonly hooks: CallStreamHooks;
  private readonly codec: LineCodec;
  private readonly inbound: LineAudioIn;
  private readonly outbound: LineAudioOut;
  private readonly bytesPerMs: number;
  private readonly frameBytes: number;
  /** What the check of the line's law still waits to judge (null: nothing to check, or done). */
  private lawCheck: LawCheck | null;
  /** Line bytes of the current reply short of a whole frame, sent with the next ones. */
  private pending: Uint8Array = new Uint8Array(0);
  /** The reply whose audio was sent last: its number (in mark names), the ms sent and heard. */
  private reply = 0;
  private sentMs = 0;
  private heardMs = 0;
  /** Its turn has ended (its audio may still be playing): the next audio is a new reply. */
  private replyEnded = false;
  /** How long the caller has been speaking without a pause (ms). */
  private speakingMs = 0;
  /** The last mark sent and whether it came back (or a clear made it moot). */
  private lastMark: string | null = null;
  private lastMarkEchoed = true;
  /** When what was sent ends playing, at real time (the close's limit if marks never come). */
  private playbackEndsAt = 0;
  /** A close waiting for the caller to hear what was sent (the session's last words). */
  private closing: { code: number; reason: string; timer: ReturnType<typeof setTimeout> } | null =
    null;

  constructor(
    wire: LineWire,
    hooks: CallStreamHooks,
    codec: LineCodec,
    sessionAudio: AudioEncoding = "pcm16",
  ) {
    this.wire = wire;
    this.hooks = hooks;
    this.codec = codec;
    this.inbound = new LineAudioIn(codec, sessionAudio);
    this.outbound = new LineAudioOut(codec, sessionAudio);
    this.bytesPerMs = lineBytesPerMs(codec);
    // Outbound audio goes in whole frames (audio/pacing.ts: carriers' minimum, Vonage's only size).
    this.frameBytes = frameBytes(codec);
    this.lawCheck = codec.kind === "l16" ? null : new LawCheck(codec.kind);
  }

  /** An `audio` payload as the session's audio input, or null if unreadable. */
  callerAudio(payload: string | Uint8Array): Uint8Array | null {
    const bytes = this.wire.bytesOf(payload);
    if (bytes === null) return null;
    this.checkLaw(bytes);
    const { session, pcm } = this.inbound.push(bytes);
    this.noteCallerSpeech(pcm);
    return session;
  }

  /** The caller's last audio was below speech (no loud chunk in it). */
  get callerQuiet(): boolean {
    return this.speakingMs === 0;
  }

  /** A mark of ours came back: the reply's audio sent before it has played. */
  marked(name: string): void {
    const [reply, ms] = name.split(":").map(Number);
    if (reply === this.reply && ms !== undefined && Number.isFinite(ms))
      this.heardMs = Math.max(this.heardMs, ms);
    if (name === this.lastMark) this.lastMarkEchoed = true;
    if (this.closing !== null && this.lastMarkEchoed) this.closeNow();
    else if (this.drained) this.hooks.drained();
  }

  /** The last turn has ended and all of its reply has played (or was cleared). */
  get drained(): boolean {
    return this.replyEnded && this.heardMs >= this.sentMs;
  }

  // --- ClientLink: what the session sends to its clients ------------------------------------

  frame(frame: ServerFrame): void {
    switch (frame.type) {
      case "interrupted": {
        // The model stopped its reply (the caller spoke over it): what the carrier still
        // holds is dropped now, and the session learns what was heard.
        const heard = this.heardMs;
        const spoke = this.sentMs > 0;
        this.pending = new Uint8Array(0);
        this.clear();
        if (spoke) this.hooks.played(heard);
        this.endTurn();
        return;
      }
      case "turn_complete":
        // The reply's last part frame, padded with silence: a carrier takes whole frames.
        this.flushPending();
        this.endTurn();
        return;
      case "tool_call":
        if (frame.runOn === "client") this.hooks.clientToolCall(frame.callId, frame.name);
        return;
      default:
        // The rest of the protocol (text, results, the log) has no place on a phone line.
        return;
    }
  }

  replay(): void {
    // A call has no history to catch up on.
  }

  audio(audio: Uint8Array): void {
    if (this.replyEnded) this.nextReply();
    const line = this.outbound.push(audio);
    if (line.length === 0) return;
    const all = this.pending.length === 0 ? line : concat(this.pending, line);
    const whole = all.length - (all.length % this.frameBytes);
    this.pending = all.slice(whole);
    if (whole > 0) this.send(all.subarray(0, whole));
  }

  /**
   * Hangs up once the caller has heard what was sent (a session's goodbye plays to its end);
   * what the marks never confirm is waited for no longer than its length and a margin. A
   * second close closes at once.
   */
  close(code: number, reason: string): void {
    this.flushPending();
    if (this.closing !== null || this.lastMarkEchoed) {
      this.closeNow();
      this.wire.close(code, reason);
      return;
    }
    const playingMs = Math.max(0, this.playbackEndsAt - Date.now());
    const timer = setTimeout(() => this.closeNow(), playingMs + CLOSE_PLAYBACK_MARGIN_MS);
    this.closing = { code, reason, timer };
  }

  /** The close that waited for playback, now. */
  private closeNow(): void {
    const closing = this.closing;
    if (closing === null) return;
    this.closing = null;
    clearTimeout(closing.timer);
    this.wire.close(closing.code, closing.reason);
  }

  private endTurn(): void {
    this.replyEnded = true;
    this.hooks.turnEnded();
    if (this.drained) this.hooks.drained();
  }

  /** Line audio of the current reply, then its mark. */
  private send(bytes: Uint8Array): void {
    const ms = bytes.length / this.bytesPerMs;
    this.sentMs += ms;
    this.playbackEndsAt = Math.max(this.playbackEndsAt, Date.now()) + ms;
    this.wire.audio(bytes);
    const mark = `${this.reply}:${Math.round(this.sentMs)}`;
    this.lastMark = mark;
    this.lastMarkEchoed = false;
    this.wire.mark(mark);
  }

  /** What is left of the reply short of a frame goes out as a whole one, padded with silence. */
  private flushPending(): void {
    if (this.pending.length === 0) return;
    const frame = wholeFrame(this.codec, this.pending);
    this.pending = new Uint8Array(0);
    this.send(frame);
  }

  /** The caller's speech over the tail of an ended turn's reply stops its playback. */
  private noteCallerSpeech(pcm: Int16Array): void {
    let sum = 0;
    for (const sample of pcm) sum += sample * sample;
    const loud = pcm.length > 0 && Math.sqrt(sum / pcm.length) > SPEECH_RMS;
    const ms = pcm.length / (lineRate(this.codec) / 1000);
    this.speakingMs = loud ? this.speakingMs + ms : 0;
    if (this.speakingMs >= SPEECH_OVER_TAIL_MS && this.replyEnded) this.clear();
  }

  /** The caller's first speech against the law the line declared: a mismatch is told once. */
  private checkLaw(bytes: Uint8Array): void {
    const check = this.lawCheck;
    if (check === null) return;
    const verdict = check.push(bytes);
    if (verdict === null) return;
    this.lawCheck = null;
    if (verdict === "mismatch") {
      const other = check.declared === "alaw" ? "μ-law" : "A-law";
      const declared = check.declared === "alaw" ? "A-law" : "μ-law";
      this.hooks.lineProblem(
        `the caller's audio reads as ${other}, but the stream declared ${declared}: it is heard garbled (the carrier's codec setting?)`,
      );
    }
  }

  /** Drops what the carrier still holds of the reply; its pending marks count for nothing. */
  private clear(): void {
    if (this.heardMs >= this.sentMs) return;
    this.wire.clear();
    this.playbackEndsAt = Date.now();
    this.lastMarkEchoed = true;
    this.reply++;
    this.sentMs = 0;
    this.heardMs = 0;
    this.hooks.cut();
  }

  private nextReply(): void {
    this.reply++;
    this.sentMs = 0;
    this.heardMs = 0;
    this.replyEnded = false;
    this.pending = new Uint8Array(0);
    // A new reply starts from silence: no filter history from the one before.
    this.outbound.reset();
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
