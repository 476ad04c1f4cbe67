/**
 * A phone call's side of a session's object: the carrier's media stream as a client of the
 * session, for any carrier in src/carrier-registry.ts. A stream is let in only for a call's
 * session, and is no client until its start presents a token this session issued (nothing is
 * sent to it or recorded before); then what its messages mean — the caller's audio, what the
 * caller heard, a key pressed, the hang-up — goes in as the input a protocol client's frame
 * would be (made here, never written as JSON to be read again), and
 * the call's line (phone-call-line.ts) ends or transfers the call when the agent asks.
 */
import { carrierNamed, phoneCallOf } from "../carrier-registry.js";
import type { CallTokenAnswer, CallTokenPurpose } from "../contracts/session-api.js";
import type { EndReason } from "../metering/closing-record.js";
import type { CallStreamLink } from "../telephony/carrier-contract.js";
import { jsonError } from "../vocabulary/http-error.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import { frameSizeOver } from "./client-frames.js";
import type { ClientGate } from "./client-gate.js";
import type { LiveSession } from "./live-session.js";
import type { SessionMeta } from "./meta.js";
import { CALL_CONNECTED, PhoneCallLine } from "./phone-call-line.js";
import { CallReconnect } from "./phone-reconnect.js";
import { CallTokenStore } from "./phone-stream-tokens.js";
import { recordedCallLine } from "./recordings.js";
import type { SessionSockets } from "./session-sockets.js";
import {
  attach,
  attachmentOf,
  openSockets,
  type SocketAttachment,
  type SocketKind,
} from "./socket-attachment.js";
import { closeQuietly } from "./sockets.js";

/** A call's stream must say start within this long of its upgrade (carriers do at once). */
const START_WITHIN_MS = 10_000;
/** Call streams waiting for their start at once, at most (a call has one). */
const MAX_WAITING_STREAMS = 2;
/** A carrier's stream that broke the rules (no start, a bad token). */
const CLOSE_POLICY = 1008;

/** What the call's side needs from the session's object. */
export interface PhoneStreamsHost {
  readonly ctx: DurableObjectState;
  /** The object's sockets (a stream is taken into them). */
  readonly held: SessionSockets;
  /** The Worker's env with the app's settings in code (the carriers' vars). */
  env(): object;
  meta(): SessionMeta | null;
  session(): LiveSession | null;
  /** Where a stream's inputs go, as a protocol client's would (rate, then the session). */
  readonly gate: Pick<ClientGate, "takeFrame" | "takeAudio">;
  /** Ends the session (its history stays readable); every socket is closed with it. */
  end(reason: EndReason): void;
  /** The session's clients changed (a stream was bound). */
  clientsChanged(): void;
  /** How the session's audio is encoded (its model connection's). */
  sessionAudio(): AudioEncoding;
  /** How long a lost stream has to come back (CALL_RECONNECT_GRACE_MS; 0: never). */
  reconnectGraceMs(): number;
  /** The object's alarm for the call (phone-reconnect.ts), at `at` or none. */
  callAlarm(at: number | null): void;
  /** A timeline row of the session's. */
  trace(kind: "CALL_RECONNECTED" | "CALL_STREAM_LOST", detail: Record<string, unknown>): void;
  /** The largest message a client may send (MAX_FRAME_BYTES): a stream's messages too. */
  maxFrameBytes(): number;
}

export class PhoneStreams {
  /** The streams' links, by socket (made again from the attachment after a wake). */
  private readonly links = new WeakMap<WebSocket, CallStreamLink>();
  private tokenStore: CallTokenStore | null = null;
  private reconnectStore: CallReconnect | null = null;
  /** The session's call: its hang-up, transfer and keypad (null: no call, or not read yet). */
  private line: PhoneCallLine | null = null;

  constructor(private readonly host: PhoneStreamsHost) {}

  /** The call's line of a (re)started session, or null when the session is no call. */
  lineFor(meta: SessionMeta): PhoneCallLine | null {
    const call = phoneCallOf(this.host.env(), meta.metadata);
    this.line?.dispose();
    this.line = null;
    if (call === null) return null;
    this.line = new PhoneCallLine(call, {
      say: (text) => {
        const ws = this.open("bound_call")[0];
        const clientId = ws === undefined ? undefined : attachmentOf(ws)?.clientId;
        if (ws !== undefined && clientId !== undefined)
          this.host.gate.takeFrame(ws, clientId, { type: "text", text });
      },
      end: (reason) => this.host.end(reason),
      drained: () =>
        this.open("bound_call").every((ws) => {
          const attachment = attachmentOf(ws);
          return attachment === null || this.linkOf(ws, attachment)?.drained !== false;
        }),
      keypadMode: () => this.host.session()?.currentAgent().keypad ?? "said",
    });
    return this.line;
  }

  /**
   * A token for the call's stream, unless it has ended or its stream is already up; to
   * `reconnect`, unless the call was connected again too often (it ends).
   */
  token(ttlMs: number, purpose: CallTokenPurpose = "answer"): CallTokenAnswer {
    if (this.host.meta()?.endedAt !== null) return { refused: "ended" };
    // A webhook replayed while the call's stream is up gets nothing that could join it.
    if (this.open("bound_call").length > 0) return { refused: "in_progress" };
    if (purpose === "reconnect" && !this.reconnects().mayReconnect(Date.now()))
      return { refused: "ended" };
    return { token: this.tokens().issue(Date.now(), ttlMs) };
  }

  /**
   * The object started (or restarted) holding this call's session: a stream it had went
   * with the old instance, and must come back within the grace.
   */
  resumed(meta: SessionMeta): void {
    if (phoneCallOf(this.host.env(), meta.metadata) === null || meta.endedAt !== null) return;
    this.reconnects().resumed(Date.now());
  }

  /** The object's alarm fired: a call whose stream is gone past its grace ends. */
  alarm(): void {
    const meta = this.host.meta();
    if (meta === null || meta.endedAt !== null) return;
    if (phoneCallOf(this.host.env(), meta.metadata) === null) return;
    this.reconnects().check(Date.now());
  }

  /** The session is ending: the turn it cuts short must not end or transfer the call. */
  ending(): void {
    this.line?.dispose();
  }

  /**
   * A call's media stream upgrade: only for a call's session, on its carrier. Streams not yet
   * started hold no client's slot; a few at most are let in, each for a few seconds.
   */
  accept(meta: SessionMeta, carrier: string): Response {
    const call = phoneCallOf(this.host.env(), meta.metadata);
    if (call === null || call.carrier !== carrier)
      return jsonError(404, "unknown_session", "no phone call has this session");
    if (this.open("waiting_call").length >= MAX_WAITING_STREAMS)
      return jsonError(429, "rate_limited", "too many media streams wait for their start");
    const { 0: client, 1: server } = new WebSocketPair();
    // A call streams both ways for as long as it lasts: the object cannot leave memory in it
    // anyway, and a hibernatable socket's per-message event would cost as much again.
    this.host.held.accept(server, "streaming");
    attach(server, {
      clientId: crypto.randomUUID(),
      resumeFrom: null,
      connectedAt: Date.now(),
      call: { carrier, streamId: null },
    });
    setTimeout(() => {
      if (attachmentOf(server)?.call?.streamId === null)
        closeQuietly(server, CLOSE_POLICY, "the stream has not started");
    }, START_WITHIN_MS);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** A started stream's link to the session (null before its start). */
  linkOf(ws: WebSocket, attachment: SocketAttachment): CallStreamLink | null {
    const call = attachment.call;
    if (call === undefined || call.streamId === null) return null;
    let link = this.links.get(ws);
    if (link !== undefined) return link;
    const carrier = carrierNamed(call.carrier);
    if (carrier === null) return null;
    link = carrier.streamLink(
      ws,
      call.streamId,
      {
        played: (ms) => this.host.gate.takeFrame(ws, attachment.clientId, { type: "played", ms }),
        turnEnded: () => this.line?.turnEnded(),
        drained: () => this.line?.drained(),
        cut: () => this.line?.cut(),
        // Counted in the timeline (BAD_FRAME, with what is wrong): the audio goes on as declared.
        lineProblem: (message) =>
          this.host.session()?.interpreter.handleInput({
            type: "client_bad_frame",
            clientId: attachment.clientId,
            code: "bad_frame",
            message,
          }),
        clientToolCall: (callId, name) => {
          // Answered at once where no app is connected to run it: the model hears why, and
          // the call does not wait out the tool's timeout. (An app on the session answers it.)
          if (this.open("app").length > 0) return;
          const error = `${name} runs in an app, and this phone call has none`;
          this.host.gate.takeFrame(ws, attachment.clientId, { type: "tool_result", callId, error });
        },
      },
      this.host.sessionAudio(),
      call.line,
    );
    this.links.set(ws, link);
    return link;
  }

  /** Every message of a carrier's media stream enters here, read as its carrier documents it. */
  message(ws: WebSocket, attachment: SocketAttachment, data: string | ArrayBuffer): void {
    const carrier = carrierNamed(attachment.call?.carrier ?? "");
    if (carrier === null) return;
    const link = this.linkOf(ws, attachment);
    // A message out of place is counted (BAD_FRAME in the timeline) and skipped: the call
    // goes on.
    const skip = (message: string, code = "bad_frame") =>
      this.host.session()?.interpreter.handleInput({
        type: "client_bad_frame",
        clientId: attachment.clientId,
        code,
        message,
      });
    // Bounded as a client's message is, before it is read (a carrier sends 20 ms a message).
    const max = this.host.maxFrameBytes();
    const size = frameSizeOver(data, max);
    if (size !== null) {
      const why = `stream messages are limited to ${max} bytes; this one had ${size}`;
      if (link === null) closeQuietly(ws, CLOSE_POLICY, why);
      else skip(why, "frame_too_large");
      return;
    }
    const read = carrier.readStreamEvent(data);
    if (link === null) {
      // Before a start bound it, the stream may only say connected, then start: anything
      // else (audio, marks, keys, a malformed start) is nobody's call.
      if (read.ok && read.event.kind === "connected") return;
      if (read.ok && read.event.kind === "start") {
        this.bind(ws, attachment, read.event);
        return;
      }
      closeQuietly(
        ws,
        CLOSE_POLICY,
        read.ok ? "the stream has not started" : `not a start the carrier sends: ${read.problem}`,
      );
      return;
    }
    if (!read.ok) {
      skip(`a media stream message the carrier does not send: ${read.problem}`);
      return;
    }
    const event = read.event;
    switch (event.kind) {
      case "connected":
      case "start":
        skip(`the stream has already started: a second ${event.kind} is skipped`);
        return;
      case "audio": {
        const audio = link.callerAudio(event.payload);
        if (audio === null) skip("a media payload that is not base64 audio");
        // Its silence is sent on, marked quiet: no sign that the caller is speaking.
        else this.host.gate.takeAudio(ws, attachment.clientId, audio, link.callerQuiet);
        return;
      }
      case "mark":
        link.marked(event.name);
        return;
      case "key": {
        const live = this.host.session();
        // A key the model must not hear (a PIN) is not kept in the audio recording either.
        if (live?.currentAgent().keypad === "tools")
          live.recordings.audio?.key(attachment.clientId);
        this.line?.pressed(event.digit);
        return;
      }
      case "stop":
        // The caller hung up: the call's session ends (its history stays readable).
        this.host.end("caller_hung_up");
        return;
      case "ack":
        return;
      default: {
        const unreachable: never = event;
        throw new Error(`unhandled media stream event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * A stream's socket is gone. One that never started was no client; a bound one was: it is
   * `disconnected` from the session. A stream closed without a stop (the carrier dropped it,
   * or the object's reset closed it) leaves the call to its carrier's reconnect, within the
   * grace (phone-reconnect.ts); without a grace the call ends, and neither ends nor transfers
   * on what happens next.
   */
  left(attachment: SocketAttachment, disconnected: () => void): void {
    if (attachment.call?.streamId === null) return;
    // The carrier may connect the call again (a deploy reset the object, a network blip):
    // it has the grace, and the call's line stays; without one, the call ends with its stream.
    const open = this.host.meta()?.endedAt === null;
    const reconnecting = open && this.reconnects().lost(Date.now());
    if (!reconnecting) this.line?.dispose();
    disconnected();
    if (open && !reconnecting) this.host.end("stream_dropped");
  }

  /**
   * A start: its token must be one this session issued, unused and unexpired, for this call
   * (the carrier's id of it), while no other stream of the call is bound.
   */
  private bind(
    ws: WebSocket,
    attachment: SocketAttachment,
    start: { streamId: string; callId: string; token: string | null; line?: string },
  ): void {
    const meta = this.host.meta();
    const live = this.host.session();
    const check = start.token === null ? "unknown" : this.tokens().check(start.token, Date.now());
    const call = meta === null ? null : phoneCallOf(this.host.env(), meta.metadata);
    const why =
      live === null || meta === null || meta.endedAt !== null
        ? "the session has ended"
        : check === "expired"
          ? "the stream token has expired"
          : check === "unknown"
            ? "the stream token is wrong or already used"
            : start.callId !== call?.id
              ? "the stream is not this session's call"
              : this.open("bound_call").length > 0
                ? "the call's stream is already up"
                : null;
    if (why !== null || live === null || attachment.call === undefined || start.token === null) {
      closeQuietly(ws, CLOSE_POLICY, why ?? "the session has ended");
      return;
    }
    // Spent by the start that binds, and only by it (a start for another call leaves it).
    this.tokens().spend(start.token);
    attach(ws, {
      ...attachment,
      call: { ...attachment.call, streamId: start.streamId, line: start.line },
    });
    this.host.clientsChanged();
    const first = this.reconnects().started(Date.now());
    live.interpreter.handleInput({ type: "client_connected", clientId: attachment.clientId });
    // The callee speaks first on a phone: the call's connection is said to the model, in the
    // record like any line, so that it greets the caller. A stream that connects the call
    // again (after a deploy, say) is the same conversation going on: no second greeting.
    if (!first) return;
    const announce = live.recordings.announcement;
    const text = announce === null ? CALL_CONNECTED : recordedCallLine(announce);
    this.host.gate.takeFrame(ws, attachment.clientId, { type: "text", text });
  }

  private open(kind: SocketKind): WebSocket[] {
    return openSockets(this.host.held.all(), kind);
  }

  private reconnects(): CallReconnect {
    const graceMs = () => this.graceMs();
    this.reconnectStore ??= new CallReconnect(this.host.ctx.storage, {
      get graceMs() {
        return graceMs();
      },
      bound: () => this.open("bound_call").length > 0,
      ended: () => this.host.meta()?.endedAt !== null,
      end: (reason) => this.host.end(reason),
      alarm: (at) => this.host.callAlarm(at),
      trace: (kind, detail) => this.host.trace(kind, detail),
    });
    return this.reconnectStore;
  }

  /**
   * The call's grace for a lost stream: none on a carrier that cannot reattach a call (its
   * `reattach` is `none`): it ends the call with its stream, so nothing would come back.
   */
  private graceMs(): number {
    const meta = this.host.meta();
    const call = meta === null ? null : phoneCallOf(this.host.env(), meta.metadata);
    const reattach = call === null ? undefined : carrierNamed(call.carrier)?.reattach.kind;
    return reattach === "answer_webhook" ? this.host.reconnectGraceMs() : 0;
  }

  private tokens(): CallTokenStore {
    this.tokenStore ??= new CallTokenStore(this.host.ctx.storage);
    return this.tokenStore;
  }
}
