/**
 * The carrier stand-in: plays Twilio toward liveline for one inbound phone call, web-standard
 * (workerd tests, Node 22, a browser), through an injected transport. What it does as Twilio
 * documents it:
 * - The voice webhook ("Webhooks security", https://www.twilio.com/docs/usage/webhooks/webhooks-security):
 *   a form-encoded POST to `${baseUrl}/v1/telephony/twilio/voice` with a call's parameters
 *   (AccountSid, ApiVersion, CallSid, CallStatus "ringing", Called, Caller, Direction
 *   "inbound", From, To) and its X-Twilio-Signature over that exact URL.
 * - The answer ("TwiML <Stream>", https://www.twilio.com/docs/voice/twiml/stream): must be
 *   `<Response><Connect><Stream url="wss://…">` with <Parameter>s (twiml-reader.ts);
 *   anything else is a CallSetupError saying what came back. `answerCall` takes an answer
 *   fetched elsewhere (the demo page's calls: the Worker signs their webhook) the same way.
 * - The stream ("Media Streams - WebSocket Messages",
 *   https://www.twilio.com/docs/voice/media-streams/websocket-messages): `connected`, then
 *   `start` (a fresh MZ… streamSid, tracks ["inbound"], the <Parameter>s as
 *   customParameters, μ-law 8000 Hz mono), `media` of 160 bytes (20 ms; the last chunk padded
 *   with μ-law silence) with `chunk` counting from "1", `dtmf`, and `stop` before closing.
 *   `sequenceNumber` counts every message after `connected` from "1".
 * - What liveline sends is read strictly with the outbound schemas: anything else (an unknown
 *   event or field, a wrong streamSid, bad base64, a payload with a WAV header, a binary frame)
 *   is a protocol violation, recorded in `violations` (and otherwise ignored, as Twilio would
 *   not act on it). Received `media` is played at 8000 bytes a second (playback.ts): `heard`
 *   holds what played; marks are echoed when the audio before them has played; `clear` drops
 *   the queue and echoes every pending mark at once.
 * - `<Connect action>` ("TwiML Voice: <Connect>", https://www.twilio.com/docs/voice/twiml/connect):
 *   "When the <Connect> verb ends, Twilio sends an HTTP request to this URL"; without it
 *   "<Connect> will finish … If there is no further verb, Twilio will end the phone call."
 *   When a stream's WebSocket closes without the caller hanging up, the stand-in POSTs the
 *   action URL, signed like the voice webhook, with the call's parameters (`CallStatus`
 *   `in-progress`), and follows the TwiML it answers: a `<Connect><Stream>` starts a new stream
 *   (a fresh streamSid, its own `sequenceNumber` and `chunk` counts; what was still queued of
 *   the old stream is never heard), anything else ends the call. No action, an answer that
 *   is not 200, or none within Twilio's default read timeout (15 s) ends it too (`ended`).
 * What it simplifies: the caller is silent unless `sendAudio` is called (Twilio sends
 * `media` every 20 ms, silence included); `timestamp` is the stand-in's clock since `start`,
 * at least 20 ms after the previous chunk's; one call per instance, inbound only; no status
 * callbacks; an action request is made once (no connection-override retries) and POSTed
 * whatever `method` says; no jitter or loss.
 */
import { MULAW_LINE } from "../../audio/line-audio.js";
import { FRAME_MS, sendInFrames } from "../../audio/pacing.js";
import { base64ToBytes, bytesToBase64 } from "../../providers/base64.js";
import {
  connectActionWebhook,
  inboundCallWebhook,
  twilioSid,
} from "../../telephony/twilio/inbound-call.js";
import {
  readTwilioStreamCommand,
  type TwilioDtmf,
  type TwilioMarkEcho,
  type TwilioMedia,
  type TwilioStart,
  type TwilioStop,
  type TwilioStreamCommand,
} from "../../telephony/twilio/stream-messages.js";
import { MULAW_BYTES_PER_MS, PlaybackBuffer, type PlaybackProgress } from "./playback.js";
import { readStreamAnswer, type StreamAnswer } from "./twiml-reader.js";

/** How the stand-in reaches liveline: global fetch/WebSocket, or a Worker's own fetch. */
export interface CarrierTransport {
  fetch(request: Request): Promise<Response>;
  /** An open (or opening) socket to `url`; the stand-in waits for it to open. */
  openWebSocket(url: string): Promise<WebSocket>;
}

export interface TwilioCallStandInOptions {
  transport: CarrierTransport;
  /** Milliseconds on a monotonic clock; performance.now() unless a test injects one. */
  now?: () => number;
  /** Take a ws:// Stream URL (a gateway on localhost). Twilio itself takes wss:// only. */
  allowInsecureStream?: boolean;
  /**
   * How long an action request may take (Twilio: 15 s, its default read timeout, at most 15 s
   * with connection overrides). A test whose whole gateway restarts locally — which Cloudflare
   * never does: its Worker answers throughout a deploy — may allow it longer.
   */
  actionTimeoutMs?: number;
}

export interface PlaceCallOptions {
  /** Where liveline is, e.g. https://gw.example (no trailing slash needed). */
  baseUrl: string;
  /** The account's Auth Token: the key of X-Twilio-Signature. */
  authToken: string;
  from: string;
  to: string;
  callSid?: string;
  accountSid?: string;
  /**
   * The number's voice URL when it is not `${baseUrl}/v1/telephony/twilio/voice`, e.g. with a
   * query string; signed as given, as Twilio signs the URL it was configured with.
   */
  voiceUrl?: string;
}

/** The call a webhook answer belongs to: the sids its `start` names. */
export interface CallIdentity {
  callSid: string;
  accountSid: string;
  /**
   * The account's Auth Token, which signs the `<Connect action>` request, and the numbers it
   * names: without it (a page, which never holds the token) an action is not followed.
   */
  authToken?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/** How the call ended, when it did. */
export interface CallEnd {
  /**
   * `caller`: hung up; `no_action`: its stream closed and the answer had no action;
   * `action_answer`: the action's TwiML connects no stream (a hang-up); `action_failed`: the
   * action request failed, was refused or timed out (Twilio's application error).
   */
  how: "caller" | "no_action" | "action_answer" | "action_failed";
  detail: string;
}

/** Twilio's default read timeout for a webhook ("Webhooks: connection overrides"). */
const ACTION_TIMEOUT_MS = 15_000;

export interface PlacedCall {
  accountSid: string;
  callSid: string;
  streamSid: string;
  streamUrl: string;
  customParameters: Record<string, string>;
}

/** The call did not get to a media stream: the webhook refused it, or answered otherwise. */
export class CallSetupError extends Error {
  override name = "CallSetupError";
  /** The webhook's HTTP status and body, when it answered. */
  readonly answer: { status: number; body: string } | undefined;
  // No parameter properties: `npm run try -- --phone` runs this file with Node's type stripping.
  constructor(message: string, answer?: { status: number; body: string }) {
    super(message);
    this.answer = answer;
  }
}

export const VOICE_WEBHOOK_PATH = "/v1/telephony/twilio/voice";
const CHUNK_MS = FRAME_MS;
const SOCKET_OPEN = 1;
const SOCKET_CONNECTING = 0;

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type StreamMessage = TwilioStart | TwilioMedia | TwilioDtmf | TwilioMarkEcho | TwilioStop;

export class TwilioCallStandIn {
  /** Everything liveline sent that Twilio would refuse, in words. */
  readonly violations: string[] = [];
  /** Every valid message liveline sent, in order. */
  readonly received: TwilioStreamCommand[] = [];
  /** μ-law bytes played to the caller, in order. */
  readonly heard: Uint8Array[] = [];
  /** Names of the marks echoed to liveline, in order. */
  readonly marksEchoed: string[] = [];
  clears = 0;
  /**
   * How the socket closed, and from which side; `unheardMs`: audio still queued then, which
   * the caller never hears (the stream is gone).
   */
  closed: {
    code: number;
    reason: string;
    by: "liveline" | "caller";
    unheardMs: number;
  } | null = null;
  call: PlacedCall | null = null;
  /** Every stream the call started, in order (the first, then each the action connected). */
  readonly streams: PlacedCall[] = [];
  /** Each `<Connect action>` request made: its HTTP status and body (0: it failed). */
  readonly actionRequests: { status: number; body: string }[] = [];
  /** How the call ended (null: it goes on, or is between streams). */
  ended: CallEnd | null = null;

  private readonly transport: CarrierTransport;
  private identity: Required<CallIdentity> | null = null;
  /** The running `<Connect>`'s action URL (null: none). */
  private action: string | null = null;
  private readonly now: () => number;
  private readonly allowInsecureStream: boolean;
  private readonly actionTimeoutMs: number;
  private socket: WebSocket | null = null;
  private readonly playback = new PlaybackBuffer();
  private playbackTimer: ReturnType<typeof setTimeout> | null = null;
  private sequence = 0;
  private chunk = 0;
  private lastTimestamp = -CHUNK_MS;
  private startedAt = 0;
  private hungUp = false;
  private sending: Promise<void> = Promise.resolve();
  private readonly waiters = new Set<() => void>();

  constructor(options: TwilioCallStandInOptions) {
    this.transport = options.transport;
    this.now = options.now ?? (() => performance.now());
    this.allowInsecureStream = options.allowInsecureStream ?? false;
    this.actionTimeoutMs = options.actionTimeoutMs ?? ACTION_TIMEOUT_MS;
  }

  /** Rings liveline's voice webhook, follows its TwiML and starts the media stream. */
  async placeCall(options: PlaceCallOptions): Promise<PlacedCall> {
    if (this.call !== null || this.socket !== null) throw new Error("one call per stand-in");
    const accountSid = options.accountSid ?? twilioSid("AC");
    const callSid = options.callSid ?? twilioSid("CA");
    const response = await this.transport.fetch(
      await inboundCallWebhook({
        voiceUrl: options.voiceUrl ?? `${options.baseUrl.replace(/\/+$/, "")}${VOICE_WEBHOOK_PATH}`,
        authToken: options.authToken,
        accountSid,
        callSid,
        from: options.from,
        to: options.to,
      }),
    );
    const body = await response.text();
    const answer = { status: response.status, body };
    if (!response.ok)
      throw new CallSetupError(`the voice webhook answered ${response.status}: ${body}`, answer);
    return this.followAnswer(answer, {
      callSid,
      accountSid,
      authToken: options.authToken,
      from: options.from,
      to: options.to,
    });
  }

  /**
   * Follows a voice webhook's answer that the stand-in did not fetch itself, and starts the
   * media stream: the demo page's calls, whose webhook the Worker signs (the Auth Token never
   * reaches a page). `twiml` is what the webhook answered (200); `call` the sids it was for.
   */
  async answerCall(twiml: string, call: CallIdentity): Promise<PlacedCall> {
    if (this.call !== null || this.socket !== null) throw new Error("one call per stand-in");
    return this.followAnswer({ status: 200, body: twiml }, call);
  }

  /** Reads the webhook's answer (kept in a CallSetupError) and starts the call's stream. */
  private async followAnswer(
    answer: { status: number; body: string },
    identity: CallIdentity,
  ): Promise<PlacedCall> {
    this.identity = {
      callSid: identity.callSid,
      accountSid: identity.accountSid,
      authToken: identity.authToken ?? "",
      from: identity.from ?? "",
      to: identity.to ?? "",
    };
    let stream: StreamAnswer;
    try {
      stream = readStreamAnswer(answer.body, { allowInsecure: this.allowInsecureStream });
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new CallSetupError(
        `the voice webhook's TwiML does not connect a stream: ${why}`,
        answer,
      );
    }
    return this.startStream(stream);
  }

  /** Opens `stream`'s WebSocket and says `connected` and `start` on it: the call's new stream. */
  private async startStream(stream: StreamAnswer): Promise<PlacedCall> {
    const { callSid, accountSid } = this.identity!;
    const socket = await this.transport.openWebSocket(stream.streamUrl);
    await this.opened(socket);
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      if (this.socket === socket) this.onFrame(event.data);
    });
    socket.addEventListener("close", (event) => {
      if (this.socket === socket) this.onClose(event.code, event.reason);
    });
    this.action = stream.action ?? null;
    this.closed = null;
    // Each stream counts its own messages and chunks.
    this.sequence = 0;
    this.chunk = 0;
    this.lastTimestamp = -CHUNK_MS;
    this.call = {
      accountSid,
      callSid,
      streamSid: twilioSid("MZ"),
      streamUrl: stream.streamUrl,
      customParameters: stream.parameters,
    };
    this.streams.push(this.call);
    socket.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
    this.startedAt = this.now();
    this.emit({
      event: "start",
      sequenceNumber: this.nextSequence(),
      streamSid: this.call.streamSid,
      start: {
        streamSid: this.call.streamSid,
        accountSid,
        callSid,
        tracks: ["inbound"],
        customParameters: stream.parameters,
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
    });
    return this.call;
  }

  /**
   * Speaks `mulaw` (μ-law 8 kHz) as `media` chunks of 20 ms. `realTime`: each chunk when its
   * 20 ms have been spoken, against absolute due times (no drift). Calls queue behind each
   * other, as one caller's voice does.
   */
  sendAudio(mulaw: Uint8Array, { realTime }: { realTime: boolean }): Promise<void> {
    const run = () =>
      sendInFrames(MULAW_LINE, mulaw, {
        realTime,
        now: () => this.now(),
        stopped: () => this.hungUp,
        send: (chunk) => this.sendMedia(chunk),
      });
    this.sending = this.sending.then(run, run);
    return this.sending;
  }

  /** A key press on the caller's phone. */
  sendDtmf(digit: string): void {
    if (!/^[0-9*#]$/.test(digit)) throw new Error(`not a DTMF digit: ${digit}`);
    const call = this.requireCall();
    this.emit({
      event: "dtmf",
      sequenceNumber: this.nextSequence(),
      streamSid: call.streamSid,
      dtmf: { track: "inbound_track", digit },
    });
  }

  /** The caller hangs up: `stop`, then the socket closes. */
  hangUp(): void {
    const call = this.requireCall();
    if (this.hungUp) return;
    this.advancePlayback();
    this.hungUp = true;
    this.stopPlaybackTimer();
    this.emit({
      event: "stop",
      sequenceNumber: this.nextSequence(),
      streamSid: call.streamSid,
      stop: { accountSid: call.accountSid, callSid: call.callSid },
    });
    if (this.closed === null) {
      this.closed = { code: 1000, reason: "call ended", by: "caller", unheardMs: this.queuedMs() };
      this.socket?.close(1000, "call ended");
    }
    this.ended ??= { how: "caller", detail: "the caller hung up" };
    this.changed();
  }

  /** Milliseconds of liveline's audio the caller has heard. */
  heardMs(): number {
    this.advancePlayback();
    return this.heard.reduce((n, c) => n + c.length, 0) / MULAW_BYTES_PER_MS;
  }

  /** Everything the caller heard, as one μ-law buffer. */
  heardAudio(): Uint8Array {
    this.advancePlayback();
    return concat(this.heard);
  }

  /** What the caller heard after the first `fromMs` of it (a position from heardMs()). */
  playedSince(fromMs: number): Uint8Array {
    return this.heardAudio().slice(Math.round(fromMs * MULAW_BYTES_PER_MS));
  }

  /** Milliseconds of liveline's audio queued at the carrier, not yet played. */
  queuedMs(): number {
    this.advancePlayback();
    return this.playback.queuedMs();
  }

  /** Resolves when `predicate` holds (checked on every message and playback step). */
  waitFor(predicate: (call: this) => boolean, timeoutMs: number): Promise<void> {
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

  private requireCall(): PlacedCall {
    if (this.call === null) throw new Error("no call: placeCall first");
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

  private nextSequence(): string {
    this.sequence += 1;
    return String(this.sequence);
  }

  private emit(message: StreamMessage): void {
    if (this.socket?.readyState === SOCKET_OPEN) this.socket.send(JSON.stringify(message));
  }

  private sendMedia(payload: Uint8Array): void {
    const call = this.requireCall();
    this.chunk += 1;
    const elapsed = Math.floor(this.now() - this.startedAt);
    this.lastTimestamp = Math.max(this.lastTimestamp + CHUNK_MS, elapsed);
    this.emit({
      event: "media",
      sequenceNumber: this.nextSequence(),
      streamSid: call.streamSid,
      media: {
        track: "inbound",
        chunk: String(this.chunk),
        timestamp: String(this.lastTimestamp),
        payload: bytesToBase64(payload),
      },
    });
  }

  private onFrame(data: unknown): void {
    if (this.hungUp) return;
    if (typeof data !== "string") {
      this.violations.push("a binary frame (Twilio reads JSON text frames only)");
      this.changed();
      return;
    }
    const read = readTwilioStreamCommand(data);
    if (!read.ok) {
      this.violations.push(`${read.problem} in ${data.slice(0, 200)}`);
      this.changed();
      return;
    }
    const command = read.message;
    const call = this.requireCall();
    if (command.streamSid !== call.streamSid) {
      this.violations.push(
        `${command.event} for streamSid ${command.streamSid}, not ${call.streamSid}`,
      );
      this.changed();
      return;
    }
    this.received.push(command);
    const now = this.now();
    switch (command.event) {
      case "media": {
        const bytes = base64ToBytes(command.media.payload);
        // "RIFF": a WAV header, which Twilio would play as noise.
        if (bytes.length >= 4 && String.fromCharCode(...bytes.subarray(0, 4)) === "RIFF")
          this.violations.push("media payload carries a WAV header (send raw μ-law)");
        this.apply(this.playback.enqueueAudio(bytes, now));
        break;
      }
      case "mark":
        this.apply(this.playback.enqueueMark(command.mark.name, now));
        break;
      case "clear":
        this.clears += 1;
        this.apply(this.playback.clear(now));
        break;
      default: {
        const unreachable: never = command;
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
    // The stream is gone, and what was queued with it (never echoed: its marks went too).
    this.playback.clear(this.now());
    this.changed();
    if (!this.hungUp) void this.connectEnded();
  }

  /**
   * The `<Connect>` ended (its stream closed while the call goes on): Twilio asks its action
   * URL what next and runs the answer, or, without one, ends the call.
   */
  private async connectEnded(): Promise<void> {
    const action = this.action;
    const identity = this.identity;
    const end = (how: CallEnd["how"], detail: string) => {
      this.ended ??= { how, detail };
      this.changed();
    };
    if (action === null || identity === null) return end("no_action", "no <Connect action>");
    if (identity.authToken === "") return end("action_failed", "no Auth Token to sign with");
    let answer: { status: number; body: string };
    try {
      const request = await connectActionWebhook(action, identity);
      const response = await Promise.race([
        this.transport.fetch(request),
        sleep(this.actionTimeoutMs).then(() => {
          throw new Error(`no answer within ${this.actionTimeoutMs} ms`);
        }),
      ]);
      answer = { status: response.status, body: await response.text() };
    } catch (error) {
      this.actionRequests.push({ status: 0, body: String(error) });
      return end("action_failed", `the action request failed: ${String(error)}`);
    }
    this.actionRequests.push(answer);
    if (this.hungUp) return;
    if (answer.status !== 200)
      return end("action_failed", `the action answered ${answer.status}: ${answer.body}`);
    let stream: StreamAnswer;
    try {
      stream = readStreamAnswer(answer.body, { allowInsecure: this.allowInsecureStream });
    } catch {
      return end("action_answer", answer.body);
    }
    try {
      await this.startStream(stream);
      this.changed();
    } catch (error) {
      end("action_failed", `the new stream did not open: ${String(error)}`);
    }
  }

  private advancePlayback(): void {
    if (this.hungUp || this.call === null) return;
    this.apply(this.playback.advance(this.now()));
  }

  private apply({ played, marks }: PlaybackProgress): void {
    this.heard.push(...played);
    const call = this.call;
    if (call === null) return;
    for (const name of marks) {
      this.marksEchoed.push(name);
      this.emit({
        event: "mark",
        sequenceNumber: this.nextSequence(),
        streamSid: call.streamSid,
        mark: { name },
      });
    }
  }

  /** Steps playback every 20 ms while anything is queued, so marks are echoed on time. */
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
