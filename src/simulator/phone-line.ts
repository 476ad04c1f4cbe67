/**
 * The call engine the Telnyx, Plivo and Vonage stand-ins share: one inbound call toward
 * liveline, web-standard (workerd tests, Node 22, a browser), through an injected transport.
 * Each carrier's stand-in (src/simulator/<carrier>/) gives it its `StandInWire` — how the
 * carrier reads its answer, opens its stream, frames the caller's audio and keys, reads what
 * liveline sends back (strictly: anything the carrier would refuse is a violation, recorded
 * and otherwise ignored, as the carrier would not act on it) and answers marks and clears.
 *
 * What it does as the carriers document it: the voice webhook (built and signed by the
 * carrier's stand-in), its answer followed to the stream URL, the opening messages, the
 * caller's audio in 20 ms frames of the line's codec (the last padded with its silence),
 * liveline's audio played at the line's rate (Twilio's PlaybackBuffer, at the line's bytes a
 * millisecond), marks given back when the audio before them has played, clears.
 * What it simplifies: the caller is silent unless `sendAudio` is called (carriers send audio
 * every 20 ms, silence included); one call per instance, inbound only; no jitter or loss.
 */
import { type LineCodec, lineBytesPerMs, lineToPcm, pcmToLine } from "../audio/line-audio.js";
import { FRAME_MS, sendInFrames } from "../audio/pacing.js";
import type { CarrierTransport } from "./twilio/call-stand-in.js";
import { CallSetupError } from "./twilio/call-stand-in.js";
import { PlaybackBuffer, type PlaybackProgress } from "./twilio/playback.js";

/** A message on the stream: JSON text or a binary frame. */
export type LineFrame = string | Uint8Array;

/** What liveline sent, read as the carrier reads it. */
export type LineCommand =
  | { kind: "audio"; bytes: Uint8Array }
  | { kind: "mark"; name: string }
  | { kind: "clear" };

/** The call the stream belongs to, as the webhook named it. */
export interface LineCall {
  callId: string;
  /** The answer, as the carrier's stand-in read it (its stream URL, parameters, codecs). */
  answer: StreamAnswerOf;
}

/** What every carrier's answer gives the engine. */
export interface StreamAnswerOf {
  streamUrl: string;
  /** What the caller's audio is sent in (as the stream's start declares it). */
  callerCodec: LineCodec;
  /** What the carrier takes back (what the caller hears). */
  replyCodec: LineCodec;
}

export interface StandInWire<Answer extends StreamAnswerOf> {
  /** The voice webhook's answer read as the carrier would, or a thrown Error saying why not. */
  readAnswer(body: string, allowInsecure: boolean): Answer;
  /** The messages that open the stream (connected, start). */
  opening(call: { callId: string; streamId: string; answer: Answer }): LineFrame[];
  /** One frame of the caller's audio (`chunk` counts from 1; `timestampMs` since the start). */
  media(bytes: Uint8Array, chunk: number, timestampMs: number): LineFrame;
  /** A key the caller pressed. */
  dtmf(digit: string): LineFrame;
  /** The caller's hang-up as the stream says it, or null where only the socket's close does. */
  stop(): LineFrame | null;
  /** A message liveline sent, read strictly, or what the carrier would refuse in it. */
  readCommand(data: string | ArrayBuffer): LineCommand | { problem: string };
  /** A mark given back when the audio before it has played. */
  markEcho(name: string): LineFrame;
  /** A clear's acknowledgement, or null where the carrier sends none. */
  clearAck(): LineFrame | null;
  /** Whether a clear gives back the marks it dropped (Telnyx) or drops them (Plivo, Vonage). */
  readonly clearEchoesMarks: boolean;
}

export interface PhoneLineOptions {
  transport: CarrierTransport;
  /** Milliseconds on a monotonic clock; performance.now() unless a test injects one. */
  now?: () => number;
  /** Take a ws:// stream URL (a gateway on localhost). Carriers take wss:// only. */
  allowInsecureStream?: boolean;
}

const CHUNK_MS = FRAME_MS;
const SOCKET_OPEN = 1;
const SOCKET_CONNECTING = 0;

export class PhoneLineStandIn<Answer extends StreamAnswerOf> {
  /** Everything liveline sent that the carrier would refuse, in words. */
  readonly violations: string[] = [];
  /** Every valid command liveline sent, in order. */
  readonly received: LineCommand[] = [];
  /** The line's bytes played to the caller, in order (the reply codec's). */
  readonly heard: Uint8Array[] = [];
  /** Names of the marks given back to liveline, in order. */
  readonly marksEchoed: string[] = [];
  clears = 0;
  /** How many streams the call has started (one: these carriers do not reattach a call). */
  streams = 0;
  /** How the socket closed, from which side, and how much queued audio was never heard. */
  closed: { code: number; reason: string; by: "liveline" | "caller"; unheardMs: number } | null =
    null;
  call: { callId: string; streamId: string; answer: Answer } | null = null;

  private readonly wire: StandInWire<Answer>;
  private readonly transport: CarrierTransport;
  private readonly now: () => number;
  private readonly allowInsecureStream: boolean;
  private socket: WebSocket | null = null;
  private playback = new PlaybackBuffer();
  private playbackTimer: ReturnType<typeof setTimeout> | null = null;
  private chunk = 0;
  private lastTimestamp = -CHUNK_MS;
  private startedAt = 0;
  private hungUp = false;
  private sending: Promise<void> = Promise.resolve();
  private readonly waiters = new Set<() => void>();

  constructor(wire: StandInWire<Answer>, options: PhoneLineOptions) {
    this.wire = wire;
    this.transport = options.transport;
    this.now = options.now ?? (() => performance.now());
    this.allowInsecureStream = options.allowInsecureStream ?? false;
  }

  /** Rings liveline with the carrier's signed voice webhook and follows its answer. */
  async ring(webhook: Request, callId: string, streamId: string): Promise<void> {
    if (this.call !== null || this.socket !== null) throw new Error("one call per stand-in");
    const response = await this.transport.fetch(webhook);
    const body = await response.text();
    const answer = { status: response.status, body };
    if (!response.ok)
      throw new CallSetupError(`the voice webhook answered ${response.status}: ${body}`, answer);
    await this.follow(answer, callId, streamId);
  }

  /** Follows an answer fetched elsewhere (the demo page's calls: the Worker signs them). */
  async follow(
    answer: { status: number; body: string },
    callId: string,
    streamId: string,
  ): Promise<void> {
    let read: Answer;
    try {
      read = this.wire.readAnswer(answer.body, this.allowInsecureStream);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new CallSetupError(
        `the voice webhook's answer does not connect a stream: ${why}`,
        answer,
      );
    }
    const socket = await this.transport.openWebSocket(read.streamUrl);
    await this.opened(socket);
    this.socket = socket;
    if ("binaryType" in socket) socket.binaryType = "arraybuffer";
    socket.addEventListener("message", (event) => this.onFrame(event.data));
    socket.addEventListener("close", (event) => this.onClose(event.code, event.reason));
    this.playback = new PlaybackBuffer(lineBytesPerMs(read.replyCodec));
    this.call = { callId, streamId, answer: read };
    this.streams += 1;
    this.startedAt = this.now();
    for (const frame of this.wire.opening(this.call)) this.emit(frame);
  }

  /** The codec the caller's audio goes in (as the start declared it). */
  get callerCodec(): LineCodec {
    return this.requireCall().answer.callerCodec;
  }

  /**
   * Speaks `bytes` (the caller codec's, or another's for a test that lies) as frames of
   * 20 ms. `realTime`: each when its 20 ms have been spoken. Calls queue behind each other.
   */
  sendAudio(bytes: Uint8Array, { realTime }: { realTime: boolean }): Promise<void> {
    const codec = this.callerCodec;
    const run = () =>
      sendInFrames(codec, bytes, {
        realTime,
        now: () => this.now(),
        stopped: () => this.hungUp,
        send: (frame) => this.sendFrame(frame),
      });
    this.sending = this.sending.then(run, run);
    return this.sending;
  }

  /** PCM16 at the line's rate, spoken in the caller codec. */
  say(pcm: Int16Array, options: { realTime: boolean }): Promise<void> {
    return this.sendAudio(pcmToLine(this.callerCodec, pcm), options);
  }

  /** A key press on the caller's phone. */
  sendDtmf(digit: string): void {
    if (!/^[0-9*#]$/.test(digit)) throw new Error(`not a DTMF digit: ${digit}`);
    this.requireCall();
    this.emit(this.wire.dtmf(digit));
  }

  /** The caller hangs up: the carrier's stop, where it has one, then the socket closes. */
  hangUp(): void {
    this.requireCall();
    if (this.hungUp) return;
    this.advancePlayback();
    this.hungUp = true;
    this.stopPlaybackTimer();
    const stop = this.wire.stop();
    if (stop !== null) this.emit(stop);
    if (this.closed === null) {
      this.closed = { code: 1000, reason: "call ended", by: "caller", unheardMs: this.queuedMs() };
      this.socket?.close(1000, "call ended");
    }
    this.changed();
  }

  /** The stream's socket goes away without a word from the carrier. */
  drop(): void {
    this.socket?.close(1001, "carrier went away");
  }

  /** Sends a frame as it is (a test's malformed message). */
  sendRaw(frame: LineFrame): void {
    this.emit(frame);
  }

  /** Milliseconds of liveline's audio the caller has heard. */
  heardMs(): number {
    this.advancePlayback();
    const bytes = this.heard.reduce((n, c) => n + c.length, 0);
    return this.call === null ? 0 : bytes / lineBytesPerMs(this.call.answer.replyCodec);
  }

  /** Everything the caller heard, as PCM16 at the line's rate (decoded by the reply codec). */
  heardPcm(): Int16Array {
    return lineToPcm(this.requireCall().answer.replyCodec, this.heardBytes());
  }

  /** Everything the caller heard, as the line's bytes. */
  heardBytes(): Uint8Array {
    this.advancePlayback();
    const out = new Uint8Array(this.heard.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of this.heard) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }

  /** Milliseconds of liveline's audio queued at the carrier, not yet played. */
  queuedMs(): number {
    this.advancePlayback();
    return this.playback.queuedMs();
  }

  /** Resolves when `predicate` holds (checked on every message and playback step). */
  waitFor(predicate: (line: this) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate(this)) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        const seen = this.violations.length ? `; violations: ${this.violations.join(" | ")}` : "";
        reject(new Error(`waitFor: not true within ${timeoutMs} ms${seen}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      this.advancePlayback();
      check();
    });
  }

  private requireCall(): { callId: string; streamId: string; answer: Answer } {
    if (this.call === null) throw new Error("no call: ring first");
    return this.call;
  }

  private async opened(socket: WebSocket): Promise<void> {
    if (socket.readyState === SOCKET_OPEN) return;
    if (socket.readyState !== SOCKET_CONNECTING)
      throw new CallSetupError("the stream's WebSocket closed before it opened");
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve());
      socket.addEventListener("close", () =>
        reject(new CallSetupError("the stream's WebSocket closed before it opened")),
      );
      socket.addEventListener("error", () =>
        reject(new CallSetupError("the stream's WebSocket failed to open")),
      );
    });
  }

  private emit(frame: LineFrame): void {
    if (this.socket?.readyState === SOCKET_OPEN) this.socket.send(frame);
  }

  private sendFrame(bytes: Uint8Array): void {
    this.chunk += 1;
    const elapsed = Math.floor(this.now() - this.startedAt);
    this.lastTimestamp = Math.max(this.lastTimestamp + CHUNK_MS, elapsed);
    this.emit(this.wire.media(bytes, this.chunk, this.lastTimestamp));
  }

  private onFrame(data: unknown): void {
    if (this.hungUp) return;
    const read =
      typeof data === "string" || data instanceof ArrayBuffer
        ? this.wire.readCommand(data)
        : { problem: "a frame that is neither text nor binary" };
    if ("problem" in read) {
      this.violations.push(read.problem);
      this.changed();
      return;
    }
    this.received.push(read);
    const now = this.now();
    switch (read.kind) {
      case "audio":
        this.apply(this.playback.enqueueAudio(read.bytes, now));
        break;
      case "mark":
        this.apply(this.playback.enqueueMark(read.name, now));
        break;
      case "clear": {
        this.clears += 1;
        this.apply(this.playback.advance(now));
        const dropped = this.playback.clear(now);
        // The marks the clear dropped: given back at once, or never, as the carrier does.
        this.apply(this.wire.clearEchoesMarks ? dropped : { ...dropped, marks: [] });
        const ack = this.wire.clearAck();
        if (ack !== null) this.emit(ack);
        break;
      }
      default: {
        const unreachable: never = read;
        throw new Error(`unhandled command ${JSON.stringify(unreachable)}`);
      }
    }
    this.schedulePlayback();
    this.changed();
  }

  private onClose(code: number, reason: string): void {
    // What played up to the close was heard; the rest never is.
    this.advancePlayback();
    this.stopPlaybackTimer();
    if (this.closed === null)
      this.closed = { code, reason, by: "liveline", unheardMs: this.playback.queuedMs() };
    this.changed();
  }

  private advancePlayback(): void {
    if (this.hungUp || this.call === null) return;
    this.apply(this.playback.advance(this.now()));
  }

  private apply({ played, marks }: PlaybackProgress): void {
    this.heard.push(...played);
    for (const name of marks) {
      this.marksEchoed.push(name);
      this.emit(this.wire.markEcho(name));
    }
  }

  /** Steps playback every 20 ms while anything is queued, so marks are given back on time. */
  private schedulePlayback(): void {
    if (this.playbackTimer !== null || this.playback.isIdle() || this.hungUp) return;
    this.playbackTimer = setTimeout(() => {
      this.playbackTimer = null;
      this.advancePlayback();
      this.schedulePlayback();
      this.changed();
    }, CHUNK_MS);
  }

  private stopPlaybackTimer(): void {
    if (this.playbackTimer !== null) clearTimeout(this.playbackTimer);
    this.playbackTimer = null;
  }

  private changed(): void {
    for (const check of [...this.waiters]) check();
  }
}
