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
import { jsonError } from "../vocabulary/http-error.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { agentOf } from "./agent-resolution.js";
import { AppSockets } from "./app-sockets.js";
import { AudioIntake } from "./audio-intake.js";
import { ClientGate } from "./client-gate.js";
import { ClientSockets } from "./client-sockets.js";
import { LiveSession, type RunningSession } from "./live-session.js";
import { LoadProbe } from "./load-probe.js";
import { asksForNaiveRelay, MetaStore, type SessionMeta } from "./meta.js";
import { PhoneStreams } from "./phone-streams.js";
import { SessionSockets } from "./session-sockets.js";
import { SipCall, sipCallOf } from "./sip-call.js";
import { attachmentOf } from "./socket-attachment.js";
import { closeQuietly } from "./sockets.js";

/** Close codes used by the shell. */
const CLOSE_NORMAL = 1000;

/**
 * One live session's Durable Object, kept small: it answers the Worker's RPC and the upgrade,
 * and hands each socket event to its channel — an app socket's message to the client gate
 * (client-gate.ts: size, parse, rate, then the interpreter), a phone stream's to
 * phone-streams.ts. Its sockets are in one place (client-sockets.ts, the clients port); the
 * running session (live-session.ts) makes the interpreter and its other ports. A restarted
 * object restores its session from storage before it takes any event.
 */
export class SessionObject extends DurableObject<Env> implements SessionApi {
  private readonly config: Config;
  private readonly meta: MetaStore;
  /** The running session, restored from storage on first use after a (re)start. */
  private readonly running: RunningSession = { live: null };
  /** When this instance was constructed (stats: a rebuilt object shows a later time). */
  private readonly startedAt = Date.now();
  /** Why the session's agent cannot run (gone, or its function threw), or null. */
  private agentProblem: string | null = null;
  /** Sockets already left (their close event may still come). */
  private readonly gone = new WeakSet<WebSocket>();
  /** Every socket of the session, held as CLIENT_SOCKETS says (a call's always streaming). */
  private readonly held = new SessionSockets(this.ctx, this);
  /** Whether the object's loop is behind (it runs while audio comes in). */
  private readonly load = new LoadProbe();
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
  /** The app sockets' channel. */
  private readonly appSockets: AppSockets;
  /** Every client's input enters here (an app socket's frames, a phone stream's inputs). */
  private readonly gate: ClientGate;
  /** The phone streams' channel: the carrier's media stream, the call's line. */
  private readonly calls: PhoneStreams;
  /** The one place that holds the session's sockets (its clients port). */
  private readonly sockets: ClientSockets;

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
            say: (text) => this.running.live?.directCallChannel.sayAsCaller(text),
            toolResult: (callId, error) =>
              this.running.live?.directCallChannel.toolResult(callId, error),
            appConnected: () => this.held.all().some((ws) => attachmentOf(ws) !== null),
            end: (reason) => void this.end(reason),
            keypadMode: () => this.running.live?.currentAgent().keypad ?? "said",
            control: () => this.running.live?.directCallChannel.control() ?? null,
            background: (work) => this.ctx.waitUntil(work),
            warn: (message) => console.warn(`liveline: ${message}`),
          });
    return this.sip;
  }

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
    this.appSockets = new AppSockets(this.running, this.held, this.config, {
      leave: (ws) => this.leave(ws),
      changed: () => this.sockets.changed(),
    });
    this.gate = new ClientGate(this.running, this.config, this.load, this.intake, this.appSockets, {
      leave: (ws) => this.leave(ws),
    });
    this.calls = new PhoneStreams({
      ctx,
      held: this.held,
      env: () => this.app.env(this.env),
      meta: () => this.meta.read(),
      session: () => this.session(),
      gate: this.gate,
      end: (reason) => void this.end(reason),
      clientsChanged: () => this.sockets.changed(),
      sessionAudio: () => this.sessionAudio(),
      reconnectGraceMs: () => this.config.CALL_RECONNECT_GRACE_MS,
      callAlarm: (at) => this.session()?.closing.callAlarm(at),
      trace: (kind, detail) => this.session()?.trace(kind, detail),
      maxFrameBytes: () => this.config.MAX_FRAME_BYTES,
    });
    this.sockets = new ClientSockets(this.held, this.appSockets, this.calls);
    // Every handler waits for this: the session is whole before its first event.
    void ctx.blockConcurrencyWhile(async () => {
      this.session();
    });
  }

  /** The running session, restored from storage on first use after a (re)start. */
  private session(): LiveSession | null {
    if (this.running.live) return this.running.live;
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
    const live = new LiveSession({
      storage: this.ctx.storage,
      env,
      config: this.config,
      meta,
      agents: "problem" in agent ? new Map([[meta.agent, NO_AGENT]]) : agent.agents,
      sockets: this.sockets,
      connectedClients: clients,
      // The creation route refuses `naive` where the Worker has no such arm.
      arm: asksForNaiveRelay(meta) ? this.app.naiveRelay : null,
      phoneCall: this.calls.lineFor(meta)?.phoneCall ?? sip?.line.phoneCall ?? null,
      prices: this.app.prices ?? {},
      ended: (by) => {
        this.meta.markEnded(new Date().toISOString(), by);
        // A cap ended it: a SIP call still up is hung up (a carrier's stream closes with it).
        sip?.ending(by);
      },
      callWatcher: sip,
      // Its log has another writer: this instance is stale and goes, once the step is over
      // (its clients were told to reconnect; what reaches the object next finds it restored).
      stoodDown: () =>
        setTimeout(() => this.ctx.abort("superseded: another instance writes the log")),
    });
    // Said once per start of the object, never retried: its record stays readable, and every
    // connection is answered model_unavailable with this reason (names, never values).
    if (live.modelProblem !== null)
      console.warn(
        `liveline: session ${meta.sessionId} cannot reach its model (provider ${meta.provider}): ${live.modelProblem}`,
      );
    this.running.live = live;
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
    return { ...live.record.describe(), clients };
  }

  async history(read: LogRead = { whole: "stream" }): Promise<ReadableStream<Uint8Array> | string> {
    return this.requireSession().record.history(read);
  }

  /**
   * GET /timeline (see SessionApi): the object a Worker on older code asks for, a page, or
   * the whole answer streamed — each the same JSON, in the same order of fields.
   */
  async timeline(read?: LogRead): Promise<Timeline | ReadableStream<Uint8Array>> {
    const live = this.requireSession();
    const dropped = live.record.timelineDropped();
    const head = { sessionId: live.meta.sessionId, startedAt: live.meta.createdAt };
    const tail = () => ({
      ...(dropped > 0 ? { droppedRows: dropped } : {}),
      stats: {
        ...live.record.stats(this.ctx.storage.sql.databaseSize, this.startedAt),
        overload: {
          shedChunks: this.intake.shedTotal.chunks,
          shedMs: this.intake.shedTotal.ms,
          worstLateMs: this.load.worstLateMs,
        },
      },
    });
    if (read === undefined) return { ...head, rows: live.record.timeline(), ...tail() };
    if ("whole" in read) {
      const open = JSON.stringify(head);
      return live.record.timelineStream(
        `${open.slice(0, -1)},`,
        () => `,${JSON.stringify(tail()).slice(1)}`,
      );
    }
    const { rows, next } = live.record.timelinePage(read.page.after, read.page.limit);
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

  async placeDirectCall(offer: string): Promise<DirectCallAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null)
      return { refused: "ended", message: "the session has ended" };
    // Its history stays readable; a conversation needs its agent (as the upgrade says).
    if (this.agentProblem !== null)
      return { refused: "agent_unavailable", message: this.agentProblem };
    if (live.modelProblem !== null) return { refused: "model_failed", message: live.modelProblem };
    return live.directCallChannel.place(offer);
  }

  async acceptSipCall(callId: string): Promise<SipAcceptAnswer> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt !== null)
      return { refused: "ended", message: "the session has ended" };
    if (this.agentProblem !== null)
      return { refused: "agent_unavailable", message: this.agentProblem };
    return live.directCallChannel.accept(callId);
  }

  async end(reason: EndReason = "deleted"): Promise<void> {
    const live = this.requireSession();
    if (this.meta.read()?.endedAt === null) {
      this.meta.markEnded(new Date().toISOString(), reason);
      live.closing.endBy(reason);
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
    await live?.closing.onAlarm();
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

    return this.appSockets.accept(request, live, resumeFrom);
  }

  // --- socket handlers (the Hibernation API's, called by SessionSockets for streaming ones) ---

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    this.appSockets.heard(ws);
    const attachment = attachmentOf(ws);
    if (attachment?.call !== undefined) this.calls.message(ws, attachment, data);
    else this.gate.handleClientFrame(ws, data, attachment);
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
    this.sockets.changed();
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

  private requireSession(): LiveSession {
    const live = this.session();
    if (!live) throw new Error("unknown session");
    return live;
  }
}
