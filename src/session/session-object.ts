import { DurableObject } from "cloudflare:workers";
import { type AgentDefinition, NO_AGENT, resolveAgent } from "../agents/define.js";
import type { LivelineApp } from "../app-options.js";
import {
  CARRIER_HEADER,
  type CallTokenAnswer,
  type HandoffAnswer,
  REPLAY_HEADER,
  RESUME_FROM_HEADER,
  SESSION_HEADER,
  type SessionApi,
  type SessionInit,
  type SessionLifecycle,
  type SessionResource,
  type Timeline,
} from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import { mulawDecoder, mulawEncoder } from "../telephony/audio/transcode.js";
import { callMetadataOf } from "../telephony/twilio/call-session.js";
import { TwilioCallStream } from "../telephony/twilio/call-stream.js";
import { readTwilioStreamEvent } from "../telephony/twilio/stream-messages.js";
import { jsonError } from "../vocabulary/http-error.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { CallLine } from "./call-line.js";
import { CallTokenStore } from "./call-token-store.js";
import { type ClientInput, clientInput } from "./client-frames.js";
import { LiveSession } from "./live-session.js";
import { asksForNaiveRelay, MetaStore, type SessionMeta } from "./meta.js";
import {
  type ClientLink,
  type ClientSockets,
  closeQuietly,
  protocolLink,
  send,
} from "./sockets.js";

/** What each client socket carries across hibernation. */
interface SocketAttachment {
  clientId: string;
  /** The `resumeFrom` of the upgrade URL, or null. */
  resumeFrom: number | null;
  /** The client takes its replay in batches (`&replay=batch`). */
  batchReplay?: boolean | undefined;
  /** When the socket joined (ms since the epoch): its last sign of life until it sends. */
  connectedAt: number;
  /** When it last sent a message, to within a third of STALE_SOCKET_MS (absent: not since it joined). */
  heardAt?: number | undefined;
  /**
   * A carrier's media stream (a phone call) in place of a protocol client: its carrier, and
   * its stream once a `start` with a valid token bound it (till then it is no client).
   */
  call?: { carrier: "twilio"; streamSid: string | null } | undefined;
}

/** Answered by the runtime itself, byte for byte (see PROTOCOL.md, keepalive). */
const KEEPALIVE = '{"type":"keepalive"}';

/** Close codes used by the shell. */
const CLOSE_NORMAL = 1000;
const CLOSE_TRY_AGAIN_LATER = 1013;
/** A call's stream must say `start` within this long of its upgrade (Twilio does at once). */
const START_WITHIN_MS = 10_000;
/** Call streams waiting for their `start` at once, at most (a call has one). */
const MAX_WAITING_STREAMS = 2;

/** What the model is told when a call's stream starts (the caller waits to be greeted). */
const CALL_CONNECTED = "(The caller is on the line. Greet them.)";

/** A carrier's stream that broke the rules (no start, a bad token). */
const CLOSE_POLICY = 1008;

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
  private readonly sockets: ClientSockets = {
    all: () => {
      this.clientList ??= this.ctx.getWebSockets().flatMap((ws) => this.linkOf(ws) ?? []);
      return this.clientList;
    },
    byId: (clientId) => {
      const ws = this.ctx.getWebSockets().find((w) => attachmentOf(w)?.clientId === clientId);
      return ws === undefined ? undefined : (this.linkOf(ws) ?? undefined);
    },
  };
  /** Each socket's link, made once per object instance. */
  private readonly links = new WeakMap<WebSocket, ClientLink>();
  /** The phone calls' media streams, by socket (made again from the attachment after a wake). */
  private readonly calls = new WeakMap<WebSocket, TwilioCallStream>();

  /** How the session sends to a socket's client (null: a socket that is no client yet). */
  private linkOf(ws: WebSocket): ClientLink | null {
    const cached = this.links.get(ws);
    if (cached !== undefined) return cached;
    const attachment = attachmentOf(ws);
    if (attachment === null) return null;
    const link =
      attachment.call === undefined
        ? this.appLink(ws, attachment)
        : this.callStreamOf(ws, attachment);
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

  /** A bound call's media stream (null before its `start`). */
  private callStreamOf(ws: WebSocket, attachment: SocketAttachment): TwilioCallStream | null {
    const streamSid = attachment.call?.streamSid ?? null;
    if (streamSid === null) return null;
    let stream = this.calls.get(ws);
    if (stream === undefined) {
      stream = new TwilioCallStream(
        ws,
        streamSid,
        {
          played: (ms) => this.handleClientFrame(ws, JSON.stringify({ type: "played", ms })),
          turnEnded: () => this.callLine?.turnEnded(),
          drained: () => this.callLine?.drained(),
          cut: () => this.callLine?.cut(),
          clientToolCall: (callId, name) => {
            // Answered at once where no app is connected to run it: the model hears why, and
            // the call does not wait out the tool's timeout. (An app on the session answers it.)
            if (this.openSockets("app").length > 0) return;
            const error = `${name} runs in an app, and this phone call has none`;
            this.handleClientFrame(ws, JSON.stringify({ type: "tool_result", callId, error }));
          },
        },
        this.sessionAudio(),
      );
      this.calls.set(ws, stream);
    }
    return stream;
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
    // A keepalive is answered by the runtime without waking the object; its timestamp keeps
    // the socket alive. (`ping` still goes through the session, in order with every frame.)
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(KEEPALIVE, KEEPALIVE));
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
    const clients = this.ctx.getWebSockets().flatMap((ws) => {
      const a = attachmentOf(ws);
      return a ? [a.clientId] : [];
    });
    const env = this.app.env(this.env);
    const agent = agentOf(this.app, meta, env);
    this.agentProblem = "problem" in agent ? agent.problem : null;
    this.live = new LiveSession(
      this.ctx.storage,
      env,
      this.config,
      meta,
      "problem" in agent ? new Map([[meta.agent, NO_AGENT]]) : agent.agents,
      this.sockets,
      clients,
      // The creation route refuses `naive` where the Worker has no such arm.
      asksForNaiveRelay(meta) ? this.app.naiveRelay : null,
      this.callLineFor(meta)?.phoneCall ?? null,
    );
    return this.live;
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
    const clients = this.ctx.getWebSockets().filter((ws) => attachmentOf(ws) !== null).length;
    return { ...live.describe(), clients };
  }

  async history(): Promise<string> {
    return this.requireSession().historyJson();
  }

  async timeline(): Promise<Timeline> {
    const live = this.requireSession();
    const dropped = live.timelineDropped();
    return {
      sessionId: live.meta.sessionId,
      startedAt: live.meta.createdAt,
      rows: live.timeline(),
      ...(dropped > 0 ? { droppedRows: dropped } : {}),
      stats: live.stats(this.ctx.storage.sql.databaseSize, this.startedAt),
    };
  }

  async handoff(agent: string, reason: string): Promise<HandoffAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null) return { problem: "the session has ended" };
    return live.requestHandoff(agent, reason);
  }

  async callToken(ttlMs: number): Promise<CallTokenAnswer> {
    if (this.meta.read()?.endedAt !== null) return { refused: "ended" };
    // A webhook replayed while the call's stream is up gets nothing that could join it.
    if (this.openSockets("bound_call").length > 0) return { refused: "in_progress" };
    return { token: this.callTokens().issue(Date.now(), ttlMs) };
  }

  private callTokenStore: CallTokenStore | null = null;
  /** A phone call's session: its hang-up, transfer and keypad (null: no call). */
  private callLine: CallLine | null = null;

  private callLineFor(meta: SessionMeta): CallLine | null {
    const call = callMetadataOf(meta.metadata);
    if (call === null) return null;
    this.callLine?.dispose();
    this.callLine = new CallLine(
      call,
      { authToken: this.config.TWILIO_AUTH_TOKEN, apiBaseUrl: this.config.TWILIO_API_BASE_URL },
      {
        say: (text) => {
          const ws = this.openSockets("bound_call")[0];
          if (ws !== undefined) this.handleClientFrame(ws, JSON.stringify({ type: "text", text }));
        },
        end: () => void this.end(),
        drained: () =>
          this.openSockets("bound_call").every((ws) => {
            const attachment = attachmentOf(ws);
            return attachment === null || this.callStreamOf(ws, attachment)?.drained !== false;
          }),
        keypadMode: () => this.live?.currentAgent().keypad ?? "said",
      },
    );
    return this.callLine;
  }

  private callTokens(): CallTokenStore {
    this.callTokenStore ??= new CallTokenStore(this.ctx.storage);
    return this.callTokenStore;
  }

  async end(): Promise<void> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt === null) this.meta.markEnded(new Date().toISOString());
    // First: the turn the end cuts short must not end or transfer the call on its way out.
    this.callLine?.dispose();
    live.interpreter.handleInput({ type: "end_session" });
    for (const ws of this.ctx.getWebSockets()) {
      closeQuietly(ws, CLOSE_NORMAL, "session ended");
    }
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

    if (request.headers.get(CARRIER_HEADER) === "twilio") return this.acceptCallStream(meta);

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

    this.ctx.acceptWebSocket(server);
    server.binaryType = "arraybuffer";
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

  /**
   * A phone call's media stream: only for a call's session, and no client until its `start`
   * presents a token of this session (nothing is sent to it or recorded before). Streams not
   * yet started hold no client's slot; a few at most are let in, each for a few seconds.
   */
  private acceptCallStream(meta: SessionMeta): Response {
    if (callMetadataOf(meta.metadata) === null)
      return jsonError(404, "unknown_session", "no phone call has this session");
    if (this.openSockets("waiting_call").length >= MAX_WAITING_STREAMS)
      return jsonError(429, "rate_limited", "too many media streams wait for their start");
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.binaryType = "arraybuffer";
    attach(server, {
      clientId: crypto.randomUUID(),
      resumeFrom: null,
      connectedAt: Date.now(),
      call: { carrier: "twilio", streamSid: null },
    });
    setTimeout(() => {
      if (attachmentOf(server)?.call?.streamSid === null)
        closeQuietly(server, CLOSE_POLICY, "the stream has not started");
    }, START_WITHIN_MS);
    return new Response(null, { status: 101, webSocket: client });
  }

  // --- Hibernation API handlers ----------------------------------------------------------

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    this.noteHeard(ws);
    const attachment = attachmentOf(ws);
    if (attachment?.call !== undefined) this.handleCallFrame(ws, attachment, data);
    else this.handleClientFrame(ws, data);
  }

  // --- a phone call's media stream ------------------------------------------------------

  /**
   * Every message of a carrier's media stream enters here: parsed as the carrier documents
   * it, then what it means to the session — the caller's audio, what the caller heard, a
   * key pressed, the hang-up — goes in as a protocol client's frame would.
   */
  private handleCallFrame(ws: WebSocket, attachment: SocketAttachment, data: string | ArrayBuffer) {
    const read =
      typeof data === "string"
        ? readTwilioStreamEvent(data)
        : ({ ok: false, problem: "a binary message" } as const);
    const stream = this.callStreamOf(ws, attachment);
    if (stream === null) {
      // Before a `start` bound it, the stream may only say `connected`, then `start`:
      // anything else (audio, marks, keys, a malformed start) is nobody's call.
      if (read.ok && read.message.event === "connected") return;
      if (read.ok && read.message.event === "start") {
        this.bindCall(ws, attachment, read.message.start);
        return;
      }
      closeQuietly(
        ws,
        CLOSE_POLICY,
        read.ok ? "the stream has not started" : `not a start the carrier sends: ${read.problem}`,
      );
      return;
    }
    // A message out of place is counted (BAD_FRAME in the timeline) and skipped: the call
    // goes on.
    const skip = (message: string) =>
      this.session()?.interpreter.handleInput({
        type: "client_bad_frame",
        clientId: attachment.clientId,
        code: "bad_frame",
        message,
      });
    if (!read.ok) {
      skip(`a media stream message the carrier does not send: ${read.problem}`);
      return;
    }
    const event = read.message;
    if (event.event === "connected" || event.event === "start") {
      skip(`the stream has already started: a second ${event.event} is skipped`);
      return;
    }
    switch (event.event) {
      case "media": {
        const pcm = stream.callerAudio(event.media.payload);
        if (pcm !== null) this.handleClientFrame(ws, pcm.slice().buffer);
        return;
      }
      case "mark":
        stream.marked(event.mark.name);
        return;
      case "dtmf":
        this.callLine?.pressed(event.dtmf.digit);
        return;
      case "stop":
        // The caller hung up: the call's session ends (its history stays readable).
        void this.end();
        return;
      default: {
        const unreachable: never = event;
        throw new Error(`unhandled media stream event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * A `start`: its token must be one this session issued, unused and unexpired, for this
   * call (its CallSid), while no other stream of the call is bound.
   */
  private bindCall(
    ws: WebSocket,
    attachment: SocketAttachment,
    start: { streamSid: string; callSid: string; customParameters: Record<string, string> },
  ): void {
    const meta = this.meta.read();
    const live = this.session();
    const token = start.customParameters.token;
    const check = token === undefined ? "unknown" : this.callTokens().take(token, Date.now());
    const callSid = meta === null ? undefined : callMetadataOf(meta.metadata)?.callSid;
    const why =
      live === null || meta === null || meta.endedAt !== null
        ? "the session has ended"
        : check === "expired"
          ? "the stream token has expired"
          : check === "unknown"
            ? "the stream token is wrong or already used"
            : start.callSid !== callSid
              ? "the stream is not this session's call"
              : this.openSockets("bound_call").length > 0
                ? "the call's stream is already up"
                : null;
    if (why !== null || live === null) {
      closeQuietly(ws, CLOSE_POLICY, why ?? "the session has ended");
      return;
    }
    const { streamSid } = start;
    attach(ws, { ...attachment, call: { carrier: "twilio", streamSid } });
    this.clientList = null;
    live.interpreter.handleInput({ type: "client_connected", clientId: attachment.clientId });
    // The callee speaks first on a phone: the call's connection is said to the model, in the
    // record like any line, so that it greets the caller.
    this.handleClientFrame(ws, JSON.stringify({ type: "text", text: CALL_CONNECTED }));
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

  /**
   * The open sockets of one kind (one being closed counts for none): `app`, the clients that
   * hold a slot (a call's stream holds none: a call has one, bound by its token); a call's
   * stream `waiting_call` for its `start`, or `bound_call` by it.
   */
  private openSockets(kind: "app" | "waiting_call" | "bound_call"): WebSocket[] {
    return this.ctx.getWebSockets().filter((ws) => {
      if (ws.readyState !== WebSocket.OPEN) return false;
      const call = attachmentOf(ws)?.call;
      if (kind === "app") return call === undefined;
      return call !== undefined && (call.streamSid === null) === (kind === "waiting_call");
    });
  }

  /**
   * Closes the sockets silent for STALE_SOCKET_MS (no message, no keepalive): a
   * phone that changed networks leaves sockets behind that would otherwise hold its slots.
   */
  private reapStale(): void {
    const now = Date.now();
    for (const ws of this.ctx.getWebSockets()) {
      const attachment = attachmentOf(ws);
      const kept = this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
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
    this.clientList = null;
    const attachment = attachmentOf(ws);
    if (attachment?.call !== undefined && attachment.call.streamSid === null) return;
    // A call's stream gone: the call neither ends nor transfers on what happens next.
    if (attachment?.call !== undefined) this.callLine?.dispose();
    if (attachment)
      this.session()?.interpreter.handleInput({
        type: "client_disconnected",
        clientId: attachment.clientId,
      });
    // A call's stream closed without a `stop` (the carrier dropped it): the call is over.
    if (attachment?.call !== undefined && this.meta.read()?.endedAt === null) void this.end();
  }

  // --- client frames ---------------------------------------------------------------------

  /** Every client message enters here: size and parse (one input), rate, then the interpreter. */
  handleClientFrame(ws: WebSocket, data: string | ArrayBuffer): void {
    const attachment = attachmentOf(ws);
    const clientId = attachment?.clientId;
    const live = this.session();
    if (!clientId || !live) return;
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
    live.interpreter.handleInput(input);
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

/**
 * The agent a session runs, resolved from the app at every start of its object (an agent may
 * be a function of the session). An agent the app no longer has, or whose function throws,
 * leaves the session readable (history, timeline, DELETE) and refuses new connections with
 * the reason; it is said in the log too.
 */
function agentOf(
  app: LivelineApp,
  meta: SessionMeta,
  env: Env,
): { agents: Map<string, AgentDefinition> } | { problem: string } {
  const resolve = (name: string): AgentDefinition => {
    const agent = app.agent(name);
    if (agent === undefined) throw new Error(`the agent "${name}" is no longer offered`);
    // The creator's options belong to the agent the session was created for.
    const options = name === meta.agent ? meta.options : {};
    return resolveAgent(agent, { ...meta, agent: name, options, env });
  };
  let first: AgentDefinition;
  try {
    first = resolve(meta.agent);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`liveline: session ${meta.sessionId}: agent "${meta.agent}": ${message}`);
    return { problem: `agent "${meta.agent}" cannot take this session: ${message}` };
  }
  // Every agent reachable by handoff, resolved for this session; one that cannot be (gone,
  // or its function refuses) is left out, and the transfers to it with it.
  const agents = new Map([[meta.agent, first]]);
  const queue = [...(first.handoffs ?? [])];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (agents.has(name)) continue;
    try {
      const agent = resolve(name);
      agents.set(name, agent);
      queue.push(...(agent.handoffs ?? []));
    } catch (err) {
      console.error(
        `liveline: session ${meta.sessionId}: handoff target "${name}": ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  for (const [name, agent] of agents)
    agents.set(name, { ...agent, handoffs: (agent.handoffs ?? []).filter((t) => agents.has(t)) });
  return { agents };
}

/**
 * A socket's attachment, read from the runtime once per object instance (deserialising it
 * for each of 50 audio frames a second showed in profiles); `attach` keeps both in step.
 */
const attachments = new WeakMap<WebSocket, SocketAttachment>();

function attachmentOf(ws: WebSocket): SocketAttachment | null {
  const cached = attachments.get(ws);
  if (cached !== undefined) return cached;
  const stored = (ws.deserializeAttachment() as SocketAttachment | null) ?? null;
  if (stored !== null) attachments.set(ws, stored);
  return stored;
}

function attach(ws: WebSocket, attachment: SocketAttachment): void {
  ws.serializeAttachment(attachment);
  attachments.set(ws, attachment);
}
