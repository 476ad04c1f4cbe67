import { mulawDecoder, mulawEncoder } from "../audio/transcode.js";
import { REPLAY_HEADER } from "../contracts/session-api.js";
import type { Config } from "../worker-config.js";
import type { SocketChannel } from "./client-sockets.js";
import type { LiveSession, RunningSession } from "./live-session.js";
import type { SessionSockets } from "./session-sockets.js";
import { attach, attachmentOf, openSockets, type SocketAttachment } from "./socket-attachment.js";
import { type ClientLink, closeQuietly, protocolLink, send } from "./sockets.js";

/** Close code for a socket turned away while the session is full: try again later. */
const CLOSE_TRY_AGAIN_LATER = 1013;

/** The object's side of the app sockets: a socket leaves, the held sockets changed. */
export interface AppSocketExits {
  leave(ws: WebSocket): void;
  changed(): void;
}

/**
 * The app sockets' channel: a client speaking liveline's protocol, let in up to
 * MAX_CLIENTS_PER_SESSION (the silent ones closed to make room). On a session whose audio
 * is a phone line's (μ-law 8 kHz, passed to the model untouched), an app still speaks the
 * protocol's PCM16: its link converts the model's audio for it, and `audioIn` its own.
 */
export class AppSockets implements SocketChannel {
  private readonly encoders = new WeakMap<WebSocket, (pcm: Uint8Array) => Uint8Array>();

  constructor(
    private readonly running: RunningSession,
    private readonly held: SessionSockets,
    private readonly config: Config,
    private readonly exits: AppSocketExits,
  ) {}

  /**
   * An app's socket upgrade, its session and resumeFrom already checked: held, attached and
   * connected to the session; or, with the session full (after its silent sockets were
   * closed), accepted only to say why, then closed.
   */
  accept(request: Request, live: LiveSession, resumeFrom: number | null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    if (this.open().length >= this.config.MAX_CLIENTS_PER_SESSION) this.reapStale();
    const held = this.open();
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
    this.exits.changed();
    // The core sends `ready`, then the replay after resumeFrom, then the live stream.
    live.interpreter.handleInput({
      type: "client_connected",
      clientId,
      resumeFrom: resumeFrom ?? undefined,
    });
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Notes the socket's sign of life in its attachment (it survives hibernation), throttled. */
  heard(ws: WebSocket): void {
    const attachment = attachmentOf(ws);
    if (!attachment) return;
    const now = Date.now();
    // A third of the stale deadline: an active socket is never taken for a stale one.
    if (now - (attachment.heardAt ?? attachment.connectedAt) < this.config.STALE_SOCKET_MS / 3)
      return;
    attach(ws, { ...attachment, heardAt: now });
  }

  /** The open app sockets. */
  private open(): WebSocket[] {
    return openSockets(this.held.all(), "app");
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
      this.exits.leave(ws);
    }
  }

  linkOf(ws: WebSocket, attachment: SocketAttachment): ClientLink {
    const link = protocolLink(ws, attachment.batchReplay === true);
    if (!this.onPhoneLine()) return link;
    const toPcm = mulawDecoder(24000);
    return { ...link, audio: (mulaw) => link.audio(toPcm(mulaw)) };
  }

  /** An app's audio chunk (PCM16 16 kHz) as the session takes it (see linkOf). */
  audioIn(ws: WebSocket, pcm: Uint8Array): Uint8Array {
    if (!this.onPhoneLine()) return pcm;
    let encode = this.encoders.get(ws);
    if (encode === undefined) {
      encode = mulawEncoder(16000);
      this.encoders.set(ws, encode);
    }
    return encode(pcm).slice();
  }

  /** The session's audio is a phone line's (its model connection's encoding). */
  private onPhoneLine(): boolean {
    return (this.running.live?.audio ?? "pcm16") === "g711_ulaw";
  }
}
