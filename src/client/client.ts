/**
 * The client side of exactly-once, for browsers, React Native, Node ≥ 22 and Workers (the
 * global WebSocket; no DOM types, no dependencies). It resumes from the last seq it saw, drops
 * what it already has, answers each client tool call once (a result that is ready while the
 * socket is down is sent after the resume, unless the log shows the call settled meanwhile),
 * reconnects with backoff and jitter, and asks for a fresh token when the old one is near its
 * expiry or the server refused it.
 */
import type {
  ClientStatus,
  ClientTool,
  ConnectionError,
  EphemeralFrame,
  ReadyFrame,
  SessionEvent,
  ToolProgressFrame,
} from "./events.js";

export interface ConnectOptions {
  /** The gateway's base URL (`https://…`), with `sessionId`; or `url`, a `wsUrl` as given. */
  baseUrl?: string | undefined;
  sessionId?: string | undefined;
  url?: string | undefined;
  /**
   * A session token (your backend gets it from `POST /v1/sessions/:id/token`). `null`: none
   * will come, the session is over (the gateway answered that route 410 `session_ended`): the
   * client closes with that reason instead of asking again.
   */
  getToken: () => Promise<string | { token: string; expiresAt?: string | undefined } | null>;
  /** Client tools by name: each call id is answered once. */
  tools?: Record<string, ClientTool> | undefined;
  /** Every durable frame, once, in seq order (also those replayed on a resume). */
  onEvent?: ((event: SessionEvent) => void) | undefined;
  /** The model's speech: PCM16, 24 kHz, mono (never replayed). */
  onAudio?: ((pcm: ArrayBuffer) => void) | undefined;
  onStatus?: ((status: ClientStatus) => void) | undefined;
  /** Errors about what this client sent (ephemeral `error` frames). */
  onError?: ((error: ConnectionError) => void) | undefined;
  /** How a long server tool call is getting on (ephemeral: a progress bar, a spinner). */
  onToolProgress?: ((progress: ToolProgressFrame) => void) | undefined;
  /** Replay from after this seq on the first connection (default 0: the whole session). */
  resumeFrom?: number | undefined;
  backoff?: { baseMs?: number; maxMs?: number } | undefined;
  /** Audio queued while reconnecting, at most this many ms of it (oldest dropped first). */
  maxQueuedAudioMs?: number | undefined;
  /** How long getToken may take before the attempt counts as failed (default 10 s). */
  tokenTimeoutMs?: number | undefined;
  /** How often a keepalive goes out (below the server's STALE_SOCKET_MS). */
  keepaliveMs?: number | undefined;
  /** The gateway's `MAX_FRAME_BYTES` (default 262,144): a longer line is refused by sendText. */
  maxFrameBytes?: number | undefined;
  /** A WebSocket constructor (default: the global one). */
  WebSocket?: typeof WebSocket | undefined;
}

const CLOSE_SESSION_ENDED = 1000;
/** The gateway's default `MAX_FRAME_BYTES`. */
const MAX_FRAME_BYTES = 262_144;
const KEEPALIVE = '{"type":"keepalive"}';
/** 16 kHz PCM16: 32 bytes a millisecond. */
const INPUT_BYTES_PER_MS = 32;

type Outgoing =
  | { kind: "json"; data: string; textId?: string | undefined }
  | { kind: "audio"; data: ArrayBuffer };

/** A line the gateway has not yet confirmed (its `user` frame not seen). */
interface UnconfirmedLine {
  frame: string;
  /** Written to a socket: after a reconnect it goes again (the gateway takes it once). */
  sent: boolean;
}

let lineCounter = 0;
/** An id for a line, unique enough within a session (time, randomness, a counter). */
function newTextId(): string {
  lineCounter = (lineCounter + 1) % 1_000_000;
  const random = Math.floor(Math.random() * 36 ** 8).toString(36);
  return `${Date.now().toString(36)}-${random}-${lineCounter.toString(36)}`;
}

type ToolCallFrame = Extract<SessionEvent, { type: "tool_call" }>;

interface CallRecord {
  /** Seen in a replay: run once the replay is in, if nothing settled it by then. */
  deferred?: ToolCallFrame | undefined;
  settled: boolean;
  /** The result frame, once the tool has answered (sent, or waiting for a live socket). */
  frame: string | null;
  sent: boolean;
  abort: AbortController;
}

export class LivelineClient {
  /** The highest durable seq received. */
  lastSeq: number;
  /** Audio chunks dropped from the queue while reconnecting (the bound). */
  droppedAudioChunks = 0;
  private ws: WebSocket | null = null;
  private status: ClientStatus = { state: "connecting", attempt: 0 };
  private attempt = 0;
  private token: { token: string; exp: number } | null = null;
  private tokenRefused = false;
  /** Refusals of a fresh token in a row (two: the gateway will not take this client's tokens). */
  private refusedFresh = 0;
  private readonly queue: Outgoing[] = [];
  private queuedAudioBytes = 0;
  private readonly calls = new Map<string, CallRecord>();
  /** Lines sent whose `user` frame has not come yet, by textId, in the order sent. */
  private readonly unconfirmed = new Map<string, UnconfirmedLine>();
  private replayUntil = 0;
  private closed = false;
  private started = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private keepaliveTimer: ReturnType<typeof setInterval> | null = null;
  /** A resend of lines the gateway dropped for rate, in its next one-second window. */
  private resendTimer: ReturnType<typeof setTimeout> | null = null;

  private readonly opts: ConnectOptions;

  // A plain field, not a parameter property: the client stays loadable by Node's type stripping.
  constructor(opts: ConnectOptions) {
    this.opts = opts;
    this.lastSeq = opts.resumeFrom ?? 0;
  }

  /** Opens the first connection (once; later calls change nothing). */
  start(): this {
    if (this.started) return this;
    this.started = true;
    void this.open();
    return this;
  }

  get state(): ClientStatus {
    return this.status;
  }

  /**
   * A line from the user. It carries an id (`textId`): if the socket drops before its `user`
   * frame comes, the line goes again once the client is back, and the gateway takes it once.
   */
  sendText(text: string): void {
    // The gateway refuses a blank line (bad_frame): it would wait here unconfirmed for ever.
    if (text.trim().length === 0) throw new RangeError("a line must not be blank");
    const textId = newTextId();
    const frame = JSON.stringify({ type: "text", text, textId });
    // Nor would it take a frame over its size limit (frame_too_large), measured in UTF-8.
    const bytes = new TextEncoder().encode(frame).length;
    const max = this.opts.maxFrameBytes ?? MAX_FRAME_BYTES;
    if (bytes > max) throw new RangeError(`a line's frame is ${bytes} bytes, over ${max}`);
    this.unconfirmed.set(textId, { frame, sent: false });
    this.send({ kind: "json", data: frame, textId });
  }

  /** Lines sent whose `user` frame has not come yet. */
  get unconfirmedLines(): number {
    return this.unconfirmed.size;
  }

  /** A chunk of microphone audio: PCM16, 16 kHz, mono. */
  sendAudio(pcm: ArrayBuffer | Uint8Array | Int16Array): void {
    const data =
      pcm instanceof ArrayBuffer
        ? pcm
        : (pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength) as ArrayBuffer);
    this.send({ kind: "audio", data });
  }

  endAudio(): void {
    this.send({ kind: "json", data: JSON.stringify({ type: "audio_end" }) });
  }

  /** How much of the interrupted reply's audio was played (PROTOCOL.md `played`). */
  played(ms: number): void {
    this.send({ kind: "json", data: JSON.stringify({ type: "played", ms: Math.round(ms) }) });
  }

  /** Closes for good (a second call changes nothing). */
  close(reason = "closed by the client"): void {
    this.end(reason, reason);
  }

  /** Cuts the socket as a network drop would (a demo's button; tests): the client resumes. */
  dropConnection(): void {
    const ws = this.ws;
    if (ws === null) return;
    this.detach(ws);
    ws.close(4000, "dropped by the client");
    this.scheduleReconnect("dropped");
  }

  private send(out: Outgoing): void {
    if (this.closed) throw new Error(`the client is closed (${this.closedReason()})`);
    const ws = this.ws;
    if (ws !== null && this.status.state === "live") {
      ws.send(out.data);
      this.markSent(out);
      return;
    }
    this.queue.push(out);
    if (out.kind === "audio") {
      this.queuedAudioBytes += out.data.byteLength;
      this.boundAudio();
    }
  }

  private markSent(out: Outgoing): void {
    if (out.kind !== "json" || out.textId === undefined) return;
    const line = this.unconfirmed.get(out.textId);
    if (line !== undefined) line.sent = true;
  }

  private boundAudio(): void {
    const max = (this.opts.maxQueuedAudioMs ?? 2_000) * INPUT_BYTES_PER_MS;
    while (this.queuedAudioBytes > max) {
      const i = this.queue.findIndex((o) => o.kind === "audio");
      if (i < 0) return;
      const [dropped] = this.queue.splice(i, 1);
      this.queuedAudioBytes -= dropped!.data instanceof ArrayBuffer ? dropped!.data.byteLength : 0;
      this.droppedAudioChunks++;
    }
  }

  private async freshToken(): Promise<string | null> {
    const now = Date.now();
    if (this.token !== null && !this.tokenRefused && this.token.exp - now > 60_000)
      return this.token.token;
    const timeoutMs = this.opts.tokenTimeoutMs ?? 10_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const got = await Promise.race([
      this.opts.getToken(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no token within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (got === null) return null;
    if (typeof got !== "string" && (typeof got !== "object" || typeof got?.token !== "string"))
      throw new Error("getToken must give a token string, or {token, expiresAt?}");
    const token = typeof got === "string" ? got : got.token;
    const expiresAt = typeof got === "string" ? undefined : got.expiresAt;
    const exp = expiresAt !== undefined ? Date.parse(expiresAt) : jwtExpiry(token);
    this.token = { token, exp: Number.isFinite(exp) ? exp : now + 10 * 60_000 };
    this.tokenRefused = false;
    return token;
  }

  private urlFor(token: string): string {
    const { url, baseUrl, sessionId } = this.opts;
    let u: URL;
    if (url !== undefined) u = new URL(url);
    else if (baseUrl !== undefined && sessionId !== undefined)
      u = new URL(`/v1/sessions/${encodeURIComponent(sessionId)}/ws`, baseUrl);
    else throw new Error("connect needs url, or baseUrl and sessionId");
    u.protocol = u.protocol === "https:" || u.protocol === "wss:" ? "wss:" : "ws:";
    u.searchParams.set("token", token);
    u.searchParams.set("resumeFrom", String(this.lastSeq));
    u.searchParams.set("replay", "batch");
    return u.toString();
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    this.setStatus({ state: "connecting", attempt: this.attempt });
    let token: string | null;
    try {
      token = await this.freshToken();
    } catch (err) {
      this.scheduleReconnect(`getToken failed: ${err instanceof Error ? err.message : err}`);
      return;
    }
    if (this.closed) return;
    if (token === null) {
      this.fail("session ended: getToken has no token for it");
      return;
    }
    const Ctor = this.opts.WebSocket ?? globalThis.WebSocket;
    const ws = new Ctor(this.urlFor(token));
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    let opened = false;
    ws.addEventListener("open", () => {
      opened = true;
    });
    ws.addEventListener("message", (event) => {
      if (this.ws !== ws) return;
      this.onMessage(ws, event.data as string | ArrayBuffer);
    });
    const gone = (code: number, reason: string) => {
      if (this.ws !== ws) return; // reported already (some runtimes send error and close)
      this.detach(ws);
      if (code === CLOSE_SESSION_ENDED && reason === "session ended") {
        this.fail("session ended");
        return;
      }
      const why = `closed ${code}${reason ? `: ${reason}` : ""}`;
      if (opened) {
        this.scheduleReconnect(why);
        return;
      }
      // Refused before it opened: the browser does not show why (an expired token, an ended
      // session, a seq beyond the session are all a failed upgrade). The session's state route
      // tells a refusal for good from an outage; the next attempt asks for a fresh token.
      this.tokenRefused = true;
      void this.whyRefused(token).then((final) => {
        if (final !== null) this.fail(final);
        else this.scheduleReconnect(why);
      });
    };
    ws.addEventListener("close", (event) => gone(event.code, event.reason));
    // A failed upgrade may come as an error alone (Node's WebSocket does so).
    ws.addEventListener("error", () => {
      if (!opened) gone(1006, "the connection could not be opened");
    });
  }

  /** Why the gateway refuses this client for good, or null (an outage: try again). */
  private async whyRefused(token: string): Promise<string | null> {
    const ws = new URL(this.urlFor(token));
    const url = new URL(ws.pathname.replace(/\/ws$/, ""), ws);
    url.protocol = ws.protocol === "wss:" ? "https:" : "http:";
    url.searchParams.set("token", token);
    let res: Response;
    try {
      res = await fetch(url);
    } catch {
      return null;
    }
    if (this.closed) return null;
    const body = (await res.json().catch(() => ({}))) as {
      error?: { message?: string };
      connection?: string;
      lastSeq?: number;
    };
    const message = body.error?.message ?? `HTTP ${res.status}`;
    if (res.status === 404 || res.status === 410 || res.status === 400) return message;
    if (res.status === 401) {
      // A token fresh from getToken refused as well: asking again cannot help.
      this.refusedFresh++;
      return this.refusedFresh >= 2 ? `the gateway refuses the token: ${message}` : null;
    }
    if (res.status === 200) {
      this.refusedFresh = 0;
      if (body.connection === "ended") return "session ended";
      if (typeof body.lastSeq === "number" && body.lastSeq < this.lastSeq)
        return `resumeFrom ${this.lastSeq} is beyond the session's last seq ${body.lastSeq}`;
    }
    return null;
  }

  private resendLinesLater(ws: WebSocket): void {
    if (this.resendTimer !== null) return;
    this.resendTimer = setTimeout(() => {
      this.resendTimer = null;
      if (this.ws !== ws || this.status.state !== "live") return; // a reconnect sends them
      this.resendUnconfirmed(ws);
    }, 1_000);
  }

  /** The lines written to a socket whose `user` frame never came, again, in order. */
  private resendUnconfirmed(ws: WebSocket): void {
    for (const line of this.unconfirmed.values()) if (line.sent) ws.send(line.frame);
  }

  private detach(ws: WebSocket): void {
    if (this.ws === ws) {
      this.ws = null;
      // A result written to the socket that went may never have reached the session (its
      // object restarted, say, and keeps the call open): it goes again once the next
      // connection's replay is in, unless the replay settles the call (the gateway takes one).
      for (const call of this.calls.values()) if (!call.settled) call.sent = false;
    }
    if (this.keepaliveTimer !== null) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }

  private scheduleReconnect(why: string): void {
    if (this.closed || this.retryTimer !== null) return;
    const base = this.opts.backoff?.baseMs ?? 250;
    const max = this.opts.backoff?.maxMs ?? 10_000;
    // Exponential, capped, with full jitter over its upper half: clients that dropped
    // together do not come back together.
    const ceiling = Math.min(max, base * 2 ** this.attempt);
    const inMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    this.attempt++;
    this.setStatus({ state: "reconnecting", attempt: this.attempt, inMs, why });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.open();
    }, inMs);
  }

  private onMessage(ws: WebSocket, data: string | ArrayBuffer): void {
    if (typeof data !== "string") {
      this.notify(() => this.opts.onAudio?.(data));
      return;
    }
    if (data === KEEPALIVE) return;
    let frame: { type: string; seq?: number };
    try {
      frame = JSON.parse(data) as { type: string; seq?: number };
    } catch {
      return;
    }
    if (frame.type === "replay") {
      for (const f of (frame as unknown as { frames: SessionEvent[] }).frames) this.onDurable(f);
      this.afterReplay(ws);
      return;
    }
    if (typeof frame.seq === "number") {
      this.onDurable(frame as SessionEvent);
      this.afterReplay(ws);
      return;
    }
    const ephemeral = frame as EphemeralFrame;
    if (ephemeral.type === "ready") this.onReady(ws, ephemeral);
    else if (ephemeral.type === "tool_progress")
      this.notify(() => this.opts.onToolProgress?.(ephemeral));
    else if (ephemeral.type === "error") {
      this.notify(() => this.opts.onError?.(ephemeral));
      // A line dropped for rate (which one, the error does not say): the lines still
      // unconfirmed go again in the gateway's next window; it takes each once.
      if (ephemeral.code === "rate_limited" && ephemeral.message.startsWith("text frame"))
        this.resendLinesLater(ws);
      // Refused for good (a full session): retrying the same way cannot help.
      if (ephemeral.fatal && ephemeral.code === "too_many_clients") this.fail(ephemeral.message);
    }
  }

  private onReady(ws: WebSocket, ready: ReadyFrame): void {
    this.attempt = 0;
    this.refusedFresh = 0;
    this.replayUntil = ready.lastSeq;
    this.setStatus({ state: "live", lastSeq: ready.lastSeq });
    const every = this.opts.keepaliveMs ?? 15_000;
    this.keepaliveTimer = setInterval(() => {
      if (this.ws === ws) ws.send(KEEPALIVE);
    }, every);
    // Lines sent on an earlier socket whose `user` frame never came go again first, in order
    // (the gateway takes a line once: one that did arrive is not taken again); then queued
    // lines and audio; held tool results once the replay says what is settled.
    this.resendUnconfirmed(ws);
    for (const out of this.queue.splice(0)) {
      ws.send(out.data);
      this.markSent(out);
    }
    this.queuedAudioBytes = 0;
    this.afterReplay(ws);
  }

  /** Once every frame up to `ready.lastSeq` is in: results still owed go out, each once. */
  private afterReplay(ws: WebSocket): void {
    if (this.lastSeq < this.replayUntil || this.ws !== ws || this.status.state !== "live") return;
    for (const call of this.calls.values()) {
      if (call.settled) continue;
      if (call.deferred !== undefined) {
        const frame = call.deferred;
        call.deferred = undefined;
        this.runTool(frame, call);
      } else if (!call.sent && call.frame !== null) {
        call.sent = true;
        ws.send(call.frame);
      }
    }
  }

  private onDurable(frame: SessionEvent): void {
    if (frame.seq <= this.lastSeq) return; // already had it
    if (frame.seq !== this.lastSeq + 1) {
      // A gap cannot be filled from here: reconnect and resume from what was seen.
      const ws = this.ws;
      if (ws !== null) {
        this.detach(ws);
        ws.close(4001, "gap");
        this.scheduleReconnect(`gap: seq ${frame.seq} after ${this.lastSeq}`);
      }
      return;
    }
    this.lastSeq = frame.seq;
    this.notify(() => this.opts.onEvent?.(frame));
    // The session ended (DELETE, or the model gave up for good): nothing more will come.
    if (frame.type === "status" && frame.state === "ended") {
      this.fail("session ended");
      return;
    }
    switch (frame.type) {
      case "user":
        if (frame.textId !== undefined) this.unconfirmed.delete(frame.textId);
        return;
      case "tool_call":
        if (frame.runOn !== "client" || this.calls.has(frame.callId)) return;
        // A call in the replay may be settled further on: it runs once the replay is in.
        if (frame.seq < this.replayUntil)
          this.calls.set(frame.callId, { ...newCall(), deferred: frame });
        else this.runTool(frame, newCall());
        return;
      case "tool_result":
      case "tool_cancelled": {
        const call = this.calls.get(frame.callId);
        if (call !== undefined) {
          call.settled = true;
          call.frame = null;
          if (frame.type === "tool_cancelled") call.abort.abort();
        } else this.calls.set(frame.callId, settledCall());
        return;
      }
      default:
        return;
    }
  }

  private runTool(frame: ToolCallFrame, call: CallRecord): void {
    this.calls.set(frame.callId, call);
    const tool = this.opts.tools?.[frame.name];
    const answer = (body: { result: Record<string, unknown> } | { error: string }) => {
      if (call.settled) return; // cancelled or timed out meanwhile: not answered
      call.frame = JSON.stringify({ type: "tool_result", callId: frame.callId, ...body });
      const ws = this.ws;
      if (ws !== null && this.status.state === "live" && this.lastSeq >= this.replayUntil) {
        call.sent = true;
        ws.send(call.frame);
      }
    };
    if (tool === undefined) {
      answer({ error: `this client has no tool "${frame.name}"` });
      return;
    }
    Promise.resolve()
      .then(() =>
        tool(frame.args, {
          callId: frame.callId,
          name: frame.name,
          turnId: frame.turnId,
          signal: call.abort.signal,
        }),
      )
      .then(
        (result) => {
          // The protocol takes an object: anything else is said as an error, not left to time out.
          if (result === null || typeof result !== "object" || Array.isArray(result))
            return answer({ error: `the tool "${frame.name}" gave no object` });
          try {
            JSON.stringify(result);
          } catch (err) {
            return answer({
              error: `the tool "${frame.name}" gave a result that is not JSON: ${err}`,
            });
          }
          answer({ result });
        },
        (err: unknown) => answer({ error: err instanceof Error ? err.message : String(err) }),
      );
  }

  private setStatus(status: ClientStatus): void {
    this.status = status;
    this.notify(() => this.opts.onStatus?.(status));
  }

  private closedReason(): string {
    return this.status.state === "closed" ? this.status.reason : "closed";
  }

  /** Ends for good, for a reason the app should see (the session is gone, the token refused). */
  private fail(reason: string): void {
    this.end(reason, "closing");
  }

  /** The one way to the end: timers stopped, tools aborted, the socket closed, `closed` said once. */
  private end(reason: string, socketReason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    for (const call of this.calls.values()) call.abort.abort();
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000, socketReason);
    this.setStatus({ state: "closed", reason });
  }

  /**
   * Calls the app's handler; one that throws must not cost a frame, a line or a tool answer:
   * the error is rethrown on its own (the runtime reports it) and the client goes on.
   */
  private notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      setTimeout(() => {
        throw err;
      }, 0);
    }
  }

  private clearTimers(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.resendTimer !== null) clearTimeout(this.resendTimer);
    this.resendTimer = null;
    if (this.keepaliveTimer !== null) clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
  }
}

function newCall(): CallRecord {
  return { settled: false, frame: null, sent: false, abort: new AbortController() };
}

function settledCall(): CallRecord {
  return { ...newCall(), settled: true, sent: true };
}

/** The `exp` of a JWT, in ms (NaN if it has none). */
function jwtExpiry(token: string): number {
  try {
    const part = token.split(".")[1] ?? "";
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === "number" ? exp * 1000 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Connects and keeps connected until `close()`. */
export function connect(opts: ConnectOptions): LivelineClient {
  return new LivelineClient(opts).start();
}
