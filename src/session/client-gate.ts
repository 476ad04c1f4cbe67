import type { Config } from "../worker-config.js";
import type { AppSockets } from "./app-sockets.js";
import type { AudioIntake } from "./audio-intake.js";
import { audioInput, type ClientInput, clientInput, frameInput } from "./client-frames.js";
import type { LiveSession, RunningSession } from "./live-session.js";
import type { LoadProbe } from "./load-probe.js";
import {
  CLOSE_MESSAGE_TOO_BIG,
  OVERSIZED_CLOSE_REASON,
  OversizedFrames,
} from "./oversized-frames.js";
import { attachmentOf, type SocketAttachment } from "./socket-attachment.js";
import { closeQuietly } from "./sockets.js";

/**
 * Per-socket frame counting, one window per kind (in memory; a hibernated socket is idle):
 * audio bursts after a network stall must never crowd out a control frame.
 */
interface RateWindow {
  startedAt: number;
  count: number;
  warned: boolean;
}

type RateKind = "audio" | "control";

/** The object's side of a socket the gate closes (its frames keep coming over the limit). */
export interface GateExits {
  leave(ws: WebSocket): void;
}

/**
 * Where every client's input enters the session: an app socket's message is sized and parsed
 * into one input (client-frames.ts), a phone stream's events come as inputs already
 * (phone-streams.ts); then the socket's rate, the audio intake, and the interpreter.
 */
export class ClientGate {
  private readonly rates = new WeakMap<WebSocket, Record<RateKind, RateWindow>>();
  /** App sockets that keep sending frames over MAX_FRAME_BYTES are closed. */
  private readonly oversized = new OversizedFrames();

  constructor(
    /** The running session (the object sets it once it is restored or made). */
    private readonly running: RunningSession,
    private readonly config: Config,
    private readonly load: LoadProbe,
    /** Clients' audio on its way in: its oldest shed when the loop is behind. */
    private readonly intake: AudioIntake,
    private readonly app: AppSockets,
    private readonly exits: GateExits,
  ) {}

  /** An app socket's message: size and parse (one input), then as any input. */
  handleClientFrame(
    ws: WebSocket,
    data: string | ArrayBuffer,
    attachment: SocketAttachment | null = attachmentOf(ws),
  ): void {
    const clientId = attachment?.clientId;
    const live = this.running.live;
    if (!clientId || !live) return;
    live.recordings.wire?.client(clientId, data);
    let input = clientInput(clientId, data, this.config.MAX_FRAME_BYTES);
    // An app's audio on a phone line's session is converted to the line's (a call's is already).
    if (input.type === "client_audio" && attachment?.call === undefined)
      input = { ...input, pcm: this.app.audioIn(ws, input.pcm) };
    this.pass(ws, live, input);
    if (input.type === "client_bad_frame" && input.code === "frame_too_large")
      this.oversizedFrame(ws, live, clientId, attachment);
  }

  /**
   * A phone stream's frame (its line, its playback, a client tool's outcome), made by the
   * stream's channel as an object: checked and taken as an app's frame of the same content
   * is (recorded as one, counted against the socket's rate), with no JSON between.
   */
  takeFrame(ws: WebSocket, clientId: string, frame: Parameters<typeof frameInput>[1]): void {
    const live = this.running.live;
    if (live === null) return;
    live.recordings.wire?.client(clientId, JSON.stringify(frame));
    this.pass(ws, live, frameInput(clientId, frame));
  }

  /** A phone stream's caller audio, in the session's encoding: through rate and intake. */
  takeAudio(ws: WebSocket, clientId: string, audio: Uint8Array, quiet = false): void {
    const live = this.running.live;
    if (live === null) return;
    const chunk = audio.slice();
    live.recordings.wire?.client(clientId, chunk.buffer);
    this.pass(ws, live, audioInput(clientId, chunk, quiet));
  }

  /** Rate, then the audio intake or the interpreter. */
  private pass(ws: WebSocket, live: LiveSession, input: ClientInput): void {
    // A tool result is never dropped for rate: there is at most one per call the model made.
    // A bad frame is answered as it is.
    if (
      input.type !== "client_tool_result" &&
      input.type !== "client_bad_frame" &&
      !this.withinRate(ws, live, input)
    )
      return;
    if (input.type === "client_audio") {
      this.intake.audio(ws, input);
      return;
    }
    // The socket's audio still queued goes first: its frames keep their order. (Checked here,
    // so a line is not one call longer when nothing is queued, as is almost always the case.)
    if (this.intake.queued.size > 0) this.intake.flush(ws);
    live.interpreter.handleInput(input);
  }

  /** An app's socket that keeps sending frames over the limit is closed (its session goes on). */
  private oversizedFrame(
    ws: WebSocket,
    live: LiveSession,
    clientId: string,
    attachment: SocketAttachment | null,
  ): void {
    // A call's media stream has its own bound (session/phone-streams.ts).
    if (attachment?.call !== undefined) return;
    const frames = this.oversized.tooMany(ws, Date.now());
    if (frames === null) return;
    live.trace("OVERSIZED_CLOSE", { clientId, frames });
    closeQuietly(ws, CLOSE_MESSAGE_TOO_BIG, OVERSIZED_CLOSE_REASON);
    this.exits.leave(ws);
  }

  /**
   * Counts the frame in its kind's one-second window; past the limit it is dropped, and said
   * so: each dropped control frame gets an error naming it; dropped audio, one per window.
   */
  private withinRate(ws: WebSocket, live: LiveSession, input: ClientInput): boolean {
    const { clientId } = input;
    // The frame's own name (client_audio_end: audio_end).
    const type = input.type.slice("client_".length);
    const kind: RateKind = type === "audio" ? "audio" : "control";
    const limit =
      kind === "audio"
        ? this.config.MAX_AUDIO_FRAMES_PER_SECOND
        : this.config.MAX_FRAMES_PER_SECOND;
    const now = Date.now();
    let windows = this.rates.get(ws);
    if (!windows) {
      const fresh = () => ({ startedAt: now, count: 0, warned: false });
      windows = { audio: fresh(), control: fresh() };
      this.rates.set(ws, windows);
    }
    let window = windows[kind];
    if (now - window.startedAt >= 1000) {
      window = { startedAt: now, count: 0, warned: false };
      windows[kind] = window;
    }
    window.count += 1;
    if (window.count <= limit) return true;
    // A loop L ms late may hand over, within one second, what a client spread over 1 s + L:
    // an honest client is never dropped for the object's own backlog (found by the attack).
    if (window.count <= Math.ceil(limit * (1 + this.load.lateMs() / 1000))) return true;
    if (kind === "control" || !window.warned) {
      window.warned = true;
      live.interpreter.handleInput({
        type: "client_bad_frame",
        clientId,
        code: "rate_limited",
        message:
          kind === "audio"
            ? `audio frames dropped: more than ${limit} in a second`
            : `${type} frame dropped: more than ${limit} control frames in a second`,
      });
    }
    return false;
  }
}
