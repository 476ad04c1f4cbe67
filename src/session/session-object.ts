import { DurableObject } from "cloudflare:workers";
import { NO_AGENT } from "../agents/define.js";
import type { LivelineApp } from "../app-options.js";
import {
  CARRIER_HEADER,
  type CallTokenAnswer,
  type CallTokenPurpose,
  type DirectCallAnswer,
  type HandoffAnswer,
  type LogRead,
  REPLAY_HEADER,
  RESUME_FROM_HEADER,
  SESSION_HEADER,
  type SessionApi,
  type SessionInit,
  type SessionLifecycle,
  type SessionResource,
  type SipAcceptAnswer,
  type Timeline,
} from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import type { EndReason } from "../metering/closing-record.js";
import { mulawDecoder, mulawEncoder } from "../telephony/audio/transcode.js";
import { jsonError } from "../vocabulary/http-error.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { agentOf } from "./agent-resolution.js";
import { AudioIntake } from "./audio-intake.js";
import { CallStreams } from "./call-streams.js";
import { type ClientInput, clientInput } from "./client-frames.js";
import { HeldSockets } from "./held-sockets.js";
import { LiveSession } from "./live-session.js";
import { LoadProbe } from "./load-probe.js";
import { asksForNaiveRelay, MetaStore, type SessionMeta } from "./meta.js";
import {
  CLOSE_MESSAGE_TOO_BIG,
  OVERSIZED_CLOSE_REASON,
  OversizedFrames,
} from "./oversized-frames.js";
import { SipCall, sipCallOf } from "./sip-call.js";
import {
  attach,
  attachmentOf,
  openSockets,
  type SocketAttachment,
  type SocketKind,
} from "./socket-attachment.js";
import {
  type ClientLink,
  type ClientSockets,
  closeQuietly,
  protocolLink,
  send,
} from "./sockets.js";

/** Close codes used by the shell. */
const CLOSE_NORMAL = 1000;
const CLOSE_TRY_AGAIN_LATER = 1013;
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

/**
 * One live session: owns every client socket of the session and, through its LiveSession,
 * the model socket. Client sockets use the Hibernation API; every client message goes
 * through `handleClientFrame`, which checks size and rate, parses into a typed frame and
 * hands it to the session core. A restarted object restores its session from storage
 * before it takes any event.
 */
export class SessionObject extends DurableObject<Env> implements SessionApi {
  private readonly config: Config;
  private readonly meta: MetaStore;
  private readonly rates = new WeakMap<WebSocket, Record<RateKind, RateWindow>>();

  private live: LiveSession | null = null;
  /** When this instance was constructed (stats: a rebuilt object shows a later time). */
  private readonly startedAt = Date.now();
  /** Why the session's agent cannot run (gone, or its function threw), or null. */
  private agentProblem: string | null = null;
  /** The clients, read once per change of the runtime's sockets (every audio chunk goes to all). */
  private clientList: ClientLink[] | null = null;
  /** Sockets already left (their close event may still come). */
  private readonly gone = new WeakSet<WebSocket>();
  /** Every socket of the session, held as CLIENT_SOCKETS says (a call's always streaming). */
  private readonly held = new HeldSockets(this.ctx, this);
  private readonly sockets: ClientSockets = {
    all: () => {
      this.clientList ??= this.held.all().flatMap((ws) => this.linkOf(ws) ?? []);
      return this.clientList;
    },
    byId: (clientId) => {
      const ws = this.held.all().find((w) => attachmentOf(w)?.clientId === clientId);
      return ws === undefined ? undefined : (this.linkOf(ws) ?? undefined);
    },
  };
  /** Whether the object's loop is behind (it runs while audio comes in). */
  private readonly load = new LoadProbe();
  /** App sockets that keep sending frames over MAX_FRAME_BYTES are closed. */
  private readonly oversized = new OversizedFrames();
  /** Clients' audio on its way in: its oldest shed when the loop is behind. */
  private readonly intake = new AudioIntake(
    {
      deliver: (input) => this.session()?.interpreter.handleInput(input),
      shed: (clientId, chunks, ms) =>
        this.session()?.interpreter.handleInput({ type: "audio_shed", clientId, chunks, ms }),
      // Chunks are in the session's input encoding: PCM16 at 16 kHz, or a line's μ-law at 8.
      msOf: (pcm) => pcm.length / (this.sessionAudio() === "g711_ulaw" ? 8 : 32),
    },
    this.load,
  );
  /** Each socket's link, made once per object instance. */
  private readonly links = new WeakMap<WebSocket, ClientLink>();
  /** A phone call's side: the carrier's media stream, the call's line. */
  private readonly calls: CallStreams = new CallStreams({
    ctx: this.ctx,
    held: this.held,
    env: () => this.app.env(this.env),
    meta: () => this.meta.read(),
    session: () => this.session(),
    clientFrame: (ws, data) => this.handleClientFrame(ws, data),
    end: (reason) => void this.end(reason),
    clientsChanged: () => {
      this.clientList = null;
    },
    sessionAudio: () => this.sessionAudio(),
    reconnectGraceMs: () => this.config.CALL_RECONNECT_GRACE_MS,
    callAlarm: (at) => this.session()?.callAlarm(at),
    trace: (kind, detail) => this.session()?.trace(kind, detail),
    maxFrameBytes: () => this.config.MAX_FRAME_BYTES,
  });

  /** The session's SIP call (one the model service took, liveline its sideband), or null. */
  private sip: SipCall | null = null;

  /** The SIP call of a (re)started session, or null when the session is none. */
  private sipCallFor(meta: SessionMeta): SipCall | null {
    this.sip?.line.dispose();
    const record = sipCallOf(meta.metadata);
    this.sip =
      record === null
        ? null
        : new SipCall(record, {
            say: (text) => this.live?.sayAsCaller(text),
            toolResult: (callId, error) => this.live?.callToolResult(callId, error),
            appConnected: () => this.held.all().some((ws) => attachmentOf(ws) !== null),
            end: (reason) => void this.end(reason),
            keypadMode: () => this.live?.currentAgent().keypad ?? "said",
            control: () => this.live?.callControl() ?? null,
            background: (work) => this.ctx.waitUntil(work),
            warn: (message) => console.warn(`liveline: ${message}`),
          });
    return this.sip;
  }

  /** How the session sends to a socket's client (null: a socket that is no client yet). */
  private linkOf(ws: WebSocket): ClientLink | null {
    const cached = this.links.get(ws);
    if (cached !== undefined) return cached;
    const attachment = attachmentOf(ws);
    if (attachment === null) return null;
    const link =
      attachment.call === undefined
        ? this.appLink(ws, attachment)
        : this.calls.linkOf(ws, attachment);
    if (link === null) return null;
    this.links.set(ws, link);
    return link;
  }

  /**
   * An app's socket. On a session whose audio is a phone line's (μ-law 8 kHz, passed to the
   * model untouched), an app still speaks the protocol's PCM16: its link converts the model's
   * audio for it, and `appAudioIn` its own.
   */
  private appLink(ws: WebSocket, attachment: SocketAttachment): ClientLink {
    const link = protocolLink(ws, attachment.batchReplay === true);
    if (this.sessionAudio() !== "g711_ulaw") return link;
    const toPcm = mulawDecoder(24000);
    return { ...link, audio: (mulaw) => link.audio(toPcm(mulaw)) };
  }

  /** An app's audio chunk (PCM16 16 kHz) as the session takes it (see appLink). */
  private appAudioIn(ws: WebSocket, pcm: Uint8Array): Uint8Array {
    if (this.sessionAudio() !== "g711_ulaw") return pcm;
    let encode = this.appEncoders.get(ws);
    if (encode === undefined) {
      encode = mulawEncoder(16000);
      this.appEncoders.set(ws, encode);
    }
    return encode(pcm).slice();
  }

  private readonly appEncoders = new WeakMap<WebSocket, (pcm: Uint8Array) => Uint8Array>();

  /** How the session's audio is encoded (its model connection's); pcm16 with no session. */
  private sessionAudio(): AudioEncoding {
    return this.session()?.audio ?? "pcm16";
  }

  /** `app`: the agents and settings createLiveline was given (it subclasses this class). */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    private readonly app: LivelineApp,
  ) {
    super(ctx, env);
    this.config = app.settings(env);
    this.meta = new MetaStore(ctx.storage);
    // Every handler waits for this: the session is whole before its first event.
    void ctx.blockConcurrencyWhile(async () => {
      this.session();
    });
  }

  /** The running session, restored from storage on first use after a (re)start. */
  private session(): LiveSession | null {
    if (this.live) return this.live;
    const meta = this.meta.read();
    if (!meta) return null;
    const clients = this.held.all().flatMap((ws) => {
      const a = attachmentOf(ws);
      return a ? [a.clientId] : [];
    });
    const env = this.app.env(this.env);
    const agent = agentOf(this.app, meta, env);
    this.agentProblem = "problem" in agent ? agent.problem : null;
    const sip = this.sipCallFor(meta);
    const live = new LiveSession(
      this.ctx.storage,
      env,
      this.config,
      meta,
      "problem" in agent ? new Map([[meta.agent, NO_AGENT]]) : agent.agents,
      this.sockets,
      clients,
      // The creation route refuses `naive` where the Worker has no such arm.
      asksForNaiveRelay(meta) ? this.app.naiveRelay : null,
      this.calls.lineFor(meta)?.phoneCall ?? sip?.line.phoneCall ?? null,
      this.app.prices,
      (by) => {
        this.meta.markEnded(new Date().toISOString(), by);
        // A cap ended it: a SIP call still up is hung up (a carrier's stream closes with it).
        sip?.ending(by);
      },
      sip,
      // Its log has another writer: this instance is stale and goes, once the step is over
      // (its clients were told to reconnect; what reaches the object next finds it restored).
      () => setTimeout(() => this.ctx.abort("superseded: another instance writes the log")),
    );
    // Said once per start of the object, never retried: its record stays readable, and every
    // connection is answered model_unavailable with this reason (names, never values).
    if (live.modelProblem !== null)
      console.warn(
        `liveline: session ${meta.sessionId} cannot reach its model (provider ${meta.provider}): ${live.modelProblem}`,
      );
    this.live = live;
    // A call's stream does not outlive the instance: it must come back within the grace.
    this.calls.resumed(meta);
    return live;
  }

  // --- RPC -------------------------------------------------------------------------------

  async init(opts: SessionInit): Promise<void> {
    this.meta.init(opts);
    this.session();
  }

  async exists(): Promise<boolean> {
    return this.meta.read() !== null;
  }

  async lifecycle(): Promise<SessionLifecycle> {
    const meta = this.meta.read();
    if (meta === null) return "unknown";
    return meta.endedAt === null ? "open" : "ended";
  }

  async describe(): Promise<SessionResource> {
    const live = this.requireSession();
    const clients = this.held.all().filter((ws) => attachmentOf(ws) !== null).length;
    return { ...live.describe(), clients };
  }

  async history(read: LogRead = { whole: "stream" }): Promise<ReadableStream<Uint8Array> | string> {
    return this.requireSession().history(read);
  }

  /**
   * GET /timeline (see SessionApi): the object a Worker on older code asks for, a page, or
   * the whole answer streamed — each the same JSON, in the same order of fields.
   */
  async timeline(read?: LogRead): Promise<Timeline | ReadableStream<Uint8Array>> {
    const live = this.requireSession();
    const dropped = live.timelineDropped();
    const head = { sessionId: live.meta.sessionId, startedAt: live.meta.createdAt };
    const tail = () => ({
      ...(dropped > 0 ? { droppedRows: dropped } : {}),
      stats: {
        ...live.stats(this.ctx.storage.sql.databaseSize, this.startedAt),
        overload: {
          shedChunks: this.intake.shedTotal.chunks,
          shedMs: this.intake.shedTotal.ms,
          worstLateMs: this.load.worstLateMs,
        },
      },
    });
    if (read === undefined) return { ...head, rows: live.timeline(), ...tail() };
    if ("whole" in read) {
      const open = JSON.stringify(head);
      return live.timelineStream(
        `${open.slice(0, -1)},`,
        () => `,${JSON.stringify(tail()).slice(1)}`,
      );
    }
    const { rows, next } = live.timelinePage(read.page.after, read.page.limit);
    return { ...head, rows, ...tail(), ...(next === null ? {} : { next }) };
  }

  async handoff(agent: string, reason: string): Promise<HandoffAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null) return { problem: "the session has ended" };
    if (live.modelProblem !== null) return { problem: live.modelProblem };
    return live.requestHandoff(agent, reason);
  }

  async callToken(ttlMs: number, purpose?: CallTokenPurpose): Promise<CallTokenAnswer> {
    // Anything but `reconnect` (an earlier Worker sends none) is the voice webhook's.
    return this.calls.token(ttlMs, purpose === "reconnect" ? "reconnect" : "answer");
  }

  async directCall(offer: string): Promise<DirectCallAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null)
      return { refused: "ended", message: "the session has ended" };
    // Its history stays readable; a conversation needs its agent (as the upgrade says).
    if (this.agentProblem !== null)
      return { refused: "agent_unavailable", message: this.agentProblem };
    if (live.modelProblem !== null) return { refused: "model_failed", message: live.modelProblem };
    return live.placeCall(offer);
  }

  async acceptSipCall(callId: string): Promise<SipAcceptAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null)
      return { refused: "ended", message: "the session has ended" };
    if (this.agentProblem !== null)
      return { refused: "agent_unavailable", message: this.agentProblem };
    return live.acceptCall(callId);
  }

  async end(reason: EndReason = "deleted"): Promise<void> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt === null) {
      this.meta.markEnded(new Date().toISOString(), reason);
      live.endBy(reason);
    }
    // First: the turn the end cuts short must not end or transfer the call on its way out
    // (a SIP call still up is hung up: the service would talk on to nobody's tools).
    this.calls.ending();
    this.sip?.ending(reason);
    live.interpreter.handleInput({ type: "end_session" });
    for (const ws of this.held.all()) {
      closeQuietly(ws, CLOSE_NORMAL, "session ended");
    }
  }

  /** The alarm: a closing record's copy to retry, or the duration cap of a quiet session. */
  override async alarm(): Promise<void> {
    const live = this.session();
    await live?.onAlarm();
    // After the session's own purposes asked anew: a call's stream past its grace ends it.
    if (live !== null) this.calls.alarm();
  }

  /** Fault injection (FAULT_INJECTION=on only, see the route): dies as in a crash. */
  async crash(): Promise<void> {
    this.ctx.abort("fault injection: restart");
  }

  /** The WebSocket upgrade, already authenticated by the Worker (see SessionApi). */
  override async fetch(request: Request): Promise<Response> {
    const meta = this.meta.read();
    if (!meta || request.headers.get(SESSION_HEADER) !== meta.sessionId) {
      return jsonError(404, "unknown_session", "no such session");
    }
    if (meta.endedAt !== null) {
      return jsonError(410, "session_ended", "the session has ended");
    }
    const live = this.requireSession();
    if (this.agentProblem !== null) {
      // Its history stays readable and DELETE works; a conversation needs its agent.
      return jsonError(503, "agent_unavailable", this.agentProblem);
    }
    if (live.modelProblem !== null) {
      // Likewise for its model: the gateway no longer has the provider it was created with.
      return jsonError(503, "model_unavailable", live.modelProblem);
    }
    // The route checked the upgrade and resumeFrom's form (and strips client-sent copies of
    // these headers); only the session knows its last seq.
    const resumeHeader = request.headers.get(RESUME_FROM_HEADER);
    const resumeFrom = resumeHeader === null ? null : Number(resumeHeader);
    const lastSeq = live.lastSeq();
    if (resumeFrom !== null && resumeFrom > lastSeq) {
      // A client that thinks it saw frames the session never sent would drop the next ones.
      return jsonError(
        400,
        "bad_request",
        `resumeFrom ${resumeFrom} is beyond the session's last seq ${lastSeq}`,
      );
    }

    const carrier = request.headers.get(CARRIER_HEADER);
    if (carrier !== null) return this.calls.accept(meta, carrier);

    const { 0: client, 1: server } = new WebSocketPair();
    if (this.openSockets("app").length >= this.config.MAX_CLIENTS_PER_SESSION) this.reapStale();
    const held = this.openSockets("app");
    if (held.length >= this.config.MAX_CLIENTS_PER_SESSION) {
      // Accepted only to say why, then closed; never joins the session.
      const since = Math.min(...held.map((ws) => attachmentOf(ws)?.connectedAt ?? Date.now()));
      server.accept();
      send(server, {
        type: "error",
        code: "too_many_clients",
        message: `a session takes at most ${this.config.MAX_CLIENTS_PER_SESSION} connections: ${held.length} are held, the oldest since ${new Date(since).toISOString()}; a socket silent for ${this.config.STALE_SOCKET_MS} ms (no message, no keepalive) is closed to make room`,
        fatal: true,
      });
      server.close(CLOSE_TRY_AGAIN_LATER, "too many clients");
      return new Response(null, { status: 101, webSocket: client });
    }

    this.held.accept(server, live.currentAgent().sockets ?? this.config.CLIENT_SOCKETS);
    const clientId = crypto.randomUUID();
    const batchReplay = request.headers.get(REPLAY_HEADER) === "batch";
    attach(server, { clientId, resumeFrom, batchReplay, connectedAt: Date.now() });
    this.clientList = null;
    // The core sends `ready`, then the replay after resumeFrom, then the live stream.
    live.interpreter.handleInput({
      type: "client_connected",
      clientId,
      resumeFrom: resumeFrom ?? undefined,
    });
    return new Response(null, { status: 101, webSocket: client });
  }

  // --- socket handlers (the Hibernation API's, called by HeldSockets for streaming ones) ---

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    this.noteHeard(ws);
    const attachment = attachmentOf(ws);
    if (attachment?.call !== undefined) this.calls.message(ws, attachment, data);
    else this.handleClientFrame(ws, data, attachment);
  }

  /** Notes the socket's sign of life in its attachment (it survives hibernation), throttled. */
  private noteHeard(ws: WebSocket): void {
    const attachment = attachmentOf(ws);
    if (!attachment) return;
    const now = Date.now();
    // A third of the stale deadline: an active socket is never taken for a stale one.
    if (now - (attachment.heardAt ?? attachment.connectedAt) < this.config.STALE_SOCKET_MS / 3)
      return;
    attach(ws, { ...attachment, heardAt: now });
  }

  /** The open sockets of one kind (see SocketKind). */
  private openSockets(kind: SocketKind): WebSocket[] {
    return openSockets(this.held.all(), kind);
  }

  /**
   * Closes the sockets silent for STALE_SOCKET_MS (no message, no keepalive): a
   * phone that changed networks leaves sockets behind that would otherwise hold its slots.
   */
  private reapStale(): void {
    const now = Date.now();
    for (const ws of this.held.all()) {
      const attachment = attachmentOf(ws);
      const kept = this.held.keepaliveAt(ws) ?? 0;
      const heard = Math.max(attachment?.connectedAt ?? 0, attachment?.heardAt ?? 0, kept);
      if (now - heard < this.config.STALE_SOCKET_MS) continue;
      closeQuietly(ws, 1001, "stale: no message or keepalive");
      this.leave(ws);
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // 1005/1006 cannot be sent back; answer the others (a no-op when already closed).
    closeQuietly(ws, code === 1005 || code === 1006 ? CLOSE_NORMAL : code, reason);
    this.leave(ws);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    closeQuietly(ws, 1011, "socket error");
    this.leave(ws);
  }

  private leave(ws: WebSocket): void {
    // Once: a socket closed here (stale) or on error is closed again by its close event.
    if (this.gone.has(ws)) return;
    this.gone.add(ws);
    // What it said before it left reaches the session first.
    this.intake.flush(ws);
    this.intake.forget(ws);
    this.clientList = null;
    const attachment = attachmentOf(ws);
    if (attachment === null) return;
    const disconnected = () =>
      this.session()?.interpreter.handleInput({
        type: "client_disconnected",
        clientId: attachment.clientId,
      });
    if (attachment.call === undefined) disconnected();
    else this.calls.left(attachment, disconnected);
  }

  // --- client frames ---------------------------------------------------------------------

  /** Every client message enters here: size and parse (one input), rate, then the interpreter. */
  handleClientFrame(
    ws: WebSocket,
    data: string | ArrayBuffer,
    attachment: SocketAttachment | null = attachmentOf(ws),
  ): void {
    const clientId = attachment?.clientId;
    const live = this.session();
    if (!clientId || !live) return;
    live.recordings.wire?.client(clientId, data);
    let input = clientInput(clientId, data, this.config.MAX_FRAME_BYTES);
    // An app's audio on a phone line's session is converted to the line's (a call's is already).
    if (input.type === "client_audio" && attachment?.call === undefined)
      input = { ...input, pcm: this.appAudioIn(ws, input.pcm) };
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
    if (input.type === "client_bad_frame" && input.code === "frame_too_large")
      this.oversizedFrame(ws, live, clientId, attachment);
  }

  /** An app's socket that keeps sending frames over the limit is closed (its session goes on). */
  private oversizedFrame(
    ws: WebSocket,
    live: LiveSession,
    clientId: string,
    attachment: SocketAttachment | null,
  ): void {
    // A call's media stream has its own bound (session/call-streams.ts).
    if (attachment?.call !== undefined) return;
    const frames = this.oversized.tooMany(ws, Date.now());
    if (frames === null) return;
    live.trace("OVERSIZED_CLOSE", { clientId, frames });
    closeQuietly(ws, CLOSE_MESSAGE_TOO_BIG, OVERSIZED_CLOSE_REASON);
    this.leave(ws);
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

  private requireSession(): LiveSession {
    const live = this.session();
    if (!live) throw new Error("unknown session");
    return live;
  }
}
