/**
 * A phone call's Twilio media stream as a client of the session: what the caller says comes
 * in as `media` (μ-law 8 kHz) and goes to the session as a protocol client's audio would
 * (PCM16 16 kHz); the model's speech goes out as `media` at the carrier's format, each chunk
 * followed by a `mark`, so that the echoed marks say what the caller actually heard. When the
 * session says a reply was interrupted (barge-in), Twilio's playback is cleared at once and
 * the session is told how much of the reply had played (`played`, as a client flushing its
 * playback says it), so OpenAI truncates its transcript where the caller stopped hearing.
 * Sources: https://www.twilio.com/docs/voice/media-streams/websocket-messages
 */
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import type { ClientLink } from "../../vocabulary/client-link.js";
import type { ServerFrame } from "../../vocabulary/frames.js";
import { mulawToPcm16, pcm16ToMulaw } from "../audio/g711.js";
import { pcm16FromBytes, pcm16ToBytes } from "../audio/pcm.js";
import { createResampler, type Resampler } from "../audio/resample.js";
import type { TwilioStreamCommand } from "./stream-messages.js";

/** What the stream needs from the session it is bound to. */
export interface CallStreamHooks {
  /** How many ms of the interrupted reply the caller heard (the session's `played`). */
  played(ms: number): void;
}

/** μ-law at 8 kHz: one byte a sample, eight samples a millisecond. */
const SAMPLES_PER_MS = 8;

export class TwilioCallStream implements ClientLink {
  private readonly inbound: Resampler = createResampler(8000, 16000);
  private outbound: Resampler = createResampler(24000, 8000);
  /** The reply whose audio was sent last: its number (in mark names), the ms sent and heard. */
  private reply = 0;
  private sentMs = 0;
  private heardMs = 0;
  /** Its turn has ended (its audio may still be playing): the next audio is a new reply. */
  private replyEnded = false;

  constructor(
    private readonly ws: WebSocket,
    readonly streamSid: string,
    private readonly hooks: CallStreamHooks,
  ) {}

  /** A `media` payload as the session's audio input (PCM16 16 kHz), or null if not base64. */
  callerAudio(payload: string): Uint8Array | null {
    let mulaw: Uint8Array;
    try {
      mulaw = base64ToBytes(payload);
    } catch {
      return null;
    }
    return pcm16ToBytes(this.inbound.push(mulawToPcm16(mulaw)));
  }

  /** A mark of ours came back: the reply's audio sent before it has played. */
  marked(name: string): void {
    const [reply, ms] = name.split(":").map(Number);
    if (reply === this.reply && ms !== undefined && Number.isFinite(ms))
      this.heardMs = Math.max(this.heardMs, ms);
  }

  // --- ClientLink: what the session sends to its clients ------------------------------------

  frame(frame: ServerFrame): void {
    switch (frame.type) {
      case "interrupted":
        // The caller spoke over the reply: what Twilio still holds is dropped now, and the
        // session learns what was heard (marks echoed by the clear are not counted).
        if (this.sentMs > 0) {
          const heard = this.heardMs;
          this.clearIfPlaying();
          this.hooks.played(heard);
        }
        this.replyEnded = true;
        return;
      case "turn_complete":
        this.replyEnded = true;
        return;
      case "user":
        // A new turn while the last reply's tail still plays (its turn had ended): the caller
        // is not made to hear it out.
        if (this.replyEnded) this.clearIfPlaying();
        return;
      default:
        // The rest of the protocol (text, tool calls, the log) has no place on a phone line.
        return;
    }
  }

  replay(): void {
    // A call has no history to catch up on.
  }

  audio(pcm: Uint8Array): void {
    if (this.replyEnded) this.nextReply();
    const mulaw = pcm16ToMulaw(this.outbound.push(pcm16FromBytes(pcm)));
    if (mulaw.length === 0) return;
    this.sentMs += mulaw.length / SAMPLES_PER_MS;
    this.command({
      event: "media",
      streamSid: this.streamSid,
      media: { payload: bytesToBase64(mulaw) },
    });
    this.command({
      event: "mark",
      streamSid: this.streamSid,
      mark: { name: `${this.reply}:${Math.round(this.sentMs)}` },
    });
  }

  close(code: number, reason: string): void {
    try {
      this.ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  private nextReply(): void {
    this.reply++;
    this.sentMs = 0;
    this.heardMs = 0;
    this.replyEnded = false;
    // A new reply starts from silence: no filter history from the one before.
    this.outbound = createResampler(24000, 8000);
  }

  private clearIfPlaying(): void {
    if (this.heardMs < this.sentMs) {
      this.command({ event: "clear", streamSid: this.streamSid });
      // Nothing more of this reply will play.
      this.heardMs = this.sentMs = 0;
    }
  }

  private command(command: TwilioStreamCommand): void {
    try {
      this.ws.send(JSON.stringify(command));
    } catch {
      // Closing: its close handler ends the call.
    }
  }
}
