/**
 * A phone call's Twilio media stream as a client of the session: what the caller says comes
 * in as `media` (μ-law 8 kHz) and goes to the session as a protocol client's audio would
 * (PCM16 16 kHz); the model's speech goes out as `media` at the carrier's format, each chunk
 * followed by a `mark`, so that the echoed marks say what the caller actually heard.
 *
 * Twilio plays what it is sent at real time, so a reply's audio can still be playing after
 * its turn ended. Playback is cleared (`clear`) when:
 * - the session says the reply was interrupted (the model's own barge-in): the session is
 *   then told how much of the reply had played (`played`, as a client flushing its playback
 *   says it), so OpenAI truncates its transcript where the caller stopped hearing;
 * - the caller speaks over the tail of a reply whose turn has ended (the model has nothing
 *   more to say there, so this is playback alone, as a phone's own player would stop).
 * Marks that Twilio echoes because of a clear are not counted as heard.
 *
 * Where the session's model takes G.711 μ-law itself (its audio is `g711_ulaw`: OpenAI
 * Realtime's audio/pcmu), the caller's audio and the model's go through untouched.
 * Sources: https://www.twilio.com/docs/voice/media-streams/websocket-messages
 */

import { LineAudioIn, LineAudioOut, MULAW_LINE } from "../../audio/line-audio.js";
import { closeReason } from "../../close-reason.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import type { ServerFrame } from "../../vocabulary/frames.js";
import type { AudioEncoding } from "../../vocabulary/provider-adapter.js";
import type { CallStreamHooks, CallStreamLink } from "../carrier-contract.js";
import type { TwilioStreamCommand } from "./stream-messages.js";

/** μ-law at 8 kHz: one byte a sample, eight samples a millisecond. */
const SAMPLES_PER_MS = 8;
/** Caller audio louder than this (RMS of PCM16) is speech: line noise is far below it. */
const SPEECH_RMS = 500;
/** Speech this long over a reply's tail stops its playback (a click or a cough does not). */
const SPEECH_OVER_TAIL_MS = 100;
/** A close waits for what is still playing, and its marks, at most this much past its length. */
const CLOSE_PLAYBACK_MARGIN_MS = 2_000;

export class TwilioCallStream implements CallStreamLink {
  readonly streamSid: string;
  private readonly ws: WebSocket;
  private readonly hooks: CallStreamHooks;
  /** The line's μ-law to the session's audio, and back (untouched where the session's is μ-law). */
  private readonly inbound: LineAudioIn;
  private readonly outbound: LineAudioOut;
  /** The reply whose audio was sent last: its number (in mark names), the ms sent and heard. */
  private reply = 0;
  private sentMs = 0;
  private heardMs = 0;
  /** Its turn has ended (its audio may still be playing): the next audio is a new reply. */
  private replyEnded = false;
  /** How long the caller has been speaking without a pause (ms). */
  private speakingMs = 0;
  /**
   * The last mark sent and whether it came back: Twilio echoes marks in order as playback
   * reaches them (and at once for what a clear drops), so its echo means nothing is queued.
   */
  private lastMark: string | null = null;
  private lastMarkEchoed = true;
  /** When what was sent ends playing, at real time (the close's limit if marks never come). */
  private playbackEndsAt = 0;
  /** A close waiting for the caller to hear what was sent (the session's last words). */
  private closing: { code: number; reason: string; timer: ReturnType<typeof setTimeout> } | null =
    null;

  constructor(
    ws: WebSocket,
    streamSid: string,
    hooks: CallStreamHooks,
    sessionAudio: AudioEncoding = "pcm16",
  ) {
    this.ws = ws;
    this.streamSid = streamSid;
    this.hooks = hooks;
    this.inbound = new LineAudioIn(MULAW_LINE, sessionAudio);
    this.outbound = new LineAudioOut(MULAW_LINE, sessionAudio);
  }

  /** A `media` payload as the session's audio input, or null if not base64. */
  callerAudio(payload: string): Uint8Array | null {
    let mulaw: Uint8Array;
    try {
      mulaw = base64ToBytes(payload);
    } catch {
      return null;
    }
    const { session, pcm } = this.inbound.push(mulaw);
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
        // The model stopped its reply (the caller spoke over it): what Twilio still holds is
        // dropped now, and the session learns what was heard.
        const heard = this.heardMs;
        const spoke = this.sentMs > 0;
        this.clear();
        if (spoke) this.hooks.played(heard);
        this.replyEnded = true;
        this.hooks.turnEnded();
        if (this.drained) this.hooks.drained();
        return;
      }
      case "turn_complete":
        this.replyEnded = true;
        this.hooks.turnEnded();
        if (this.drained) this.hooks.drained();
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
    const mulaw = this.outbound.push(audio);
    if (mulaw.length === 0) return;
    const ms = mulaw.length / SAMPLES_PER_MS;
    this.sentMs += ms;
    this.playbackEndsAt = Math.max(this.playbackEndsAt, Date.now()) + ms;
    this.command({
      event: "media",
      streamSid: this.streamSid,
      media: { payload: bytesToBase64(mulaw) },
    });
    const mark = `${this.reply}:${Math.round(this.sentMs)}`;
    this.lastMark = mark;
    this.lastMarkEchoed = false;
    this.command({
      event: "mark",
      streamSid: this.streamSid,
      mark: { name: mark },
    });
  }

  /**
   * Hangs up once the caller has heard what was sent (a session's goodbye plays to its end);
   * what the marks never confirm is waited for no longer than its length and a margin. A
   * second close closes at once.
   */
  close(code: number, reason: string): void {
    if (this.closing !== null || this.lastMarkEchoed) {
      this.closeNow();
      this.closeSocket(code, reason);
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
    this.closeSocket(closing.code, closing.reason);
  }

  private closeSocket(code: number, reason: string): void {
    try {
      this.ws.close(code, closeReason(reason));
    } catch {
      // Already closed.
    }
  }

  /** The caller's speech over the tail of an ended turn's reply stops its playback. */
  private noteCallerSpeech(pcm8k: Int16Array): void {
    let sum = 0;
    for (const sample of pcm8k) sum += sample * sample;
    const loud = pcm8k.length > 0 && Math.sqrt(sum / pcm8k.length) > SPEECH_RMS;
    this.speakingMs = loud ? this.speakingMs + pcm8k.length / SAMPLES_PER_MS : 0;
    if (this.speakingMs >= SPEECH_OVER_TAIL_MS && this.replyEnded) this.clear();
  }

  /** Drops what Twilio still holds of the reply; its marks, echoed by the clear, count for nothing. */
  private clear(): void {
    if (this.heardMs >= this.sentMs) return;
    this.command({ event: "clear", streamSid: this.streamSid });
    this.playbackEndsAt = Date.now();
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
    // A new reply starts from silence: no filter history from the one before.
    this.outbound.reset();
  }

  private command(command: TwilioStreamCommand): void {
    try {
      this.ws.send(JSON.stringify(command));
    } catch {
      // Closing: its close handler ends the call.
    }
  }
}
