import type { DurableFrame, ServerFrame } from "../vocabulary/frames.js";
import type { ClientsPort } from "./interpreter-ports.js";
import type { SessionSockets } from "./session-sockets.js";
import { attachmentOf, type SocketAttachment } from "./socket-attachment.js";
import type { ClientLink } from "./sockets.js";

/** How a channel's socket reaches its client (null: a socket that is no client yet). */
export interface SocketChannel {
  linkOf(ws: WebSocket, attachment: SocketAttachment): ClientLink | null;
}

/** What the running session gives the sockets: its recorders, and its end. */
export interface SocketsSession {
  /** Its audio recording: a reply cut was heard only up to its cut. */
  readonly audio: { cut(): void } | null;
  /** Its wire recording: every durable frame, as sent. */
  readonly wire: { durable(json: string): void } | null;
  /** Everything closes (the core closed every client). */
  dispose(): void;
}

/**
 * The one place that holds the session's client sockets — app sockets and phone streams
 * alike, each reached through its channel's link — and the interpreter's clients port: a
 * step's frames go from the interpreter through here to each client's link (sockets.ts).
 */
export class ClientSockets implements ClientsPort {
  /** The clients, read once per change of the held sockets (every audio chunk goes to all). */
  private list: ClientLink[] | null = null;
  /** Each socket's link, made once per object instance. */
  private readonly links = new WeakMap<WebSocket, ClientLink>();
  private session: SocketsSession | null = null;

  constructor(
    /** Every socket of the session, held as CLIENT_SOCKETS says. */
    readonly held: SessionSockets,
    private readonly app: SocketChannel,
    private readonly phone: SocketChannel,
  ) {}

  /** The running session the sockets serve (its recorders see what they send). */
  serve(session: SocketsSession): void {
    this.session = session;
  }

  /** The held sockets changed (one joined or left): the client list is read again. */
  changed(): void {
    this.list = null;
  }

  all(): readonly ClientLink[] {
    this.list ??= this.held.all().flatMap((ws) => this.linkOf(ws) ?? []);
    return this.list;
  }

  byId(clientId: string): ClientLink | undefined {
    const ws = this.held.all().find((w) => attachmentOf(w)?.clientId === clientId);
    return ws === undefined ? undefined : (this.linkOf(ws) ?? undefined);
  }

  /** How the session sends to a socket's client (null: a socket that is no client yet). */
  private linkOf(ws: WebSocket): ClientLink | null {
    const cached = this.links.get(ws);
    if (cached !== undefined) return cached;
    const attachment = attachmentOf(ws);
    if (attachment === null) return null;
    const channel = attachment.call === undefined ? this.app : this.phone;
    const link = channel.linkOf(ws, attachment);
    if (link === null) return null;
    this.links.set(ws, link);
    return link;
  }

  // --- the interpreter's clients port ----------------------------------------------------

  broadcast(frame: DurableFrame, json: string): void {
    for (const client of this.all()) client.frame(frame, json);
    // A reply cut was heard only up to here.
    if (frame.type === "interrupted") this.session?.audio?.cut();
    this.session?.wire?.durable(json);
  }

  send(clientId: string, frame: ServerFrame): void {
    this.byId(clientId)?.frame(frame);
  }

  sendEncoded(clientId: string, frames: readonly string[]): void {
    this.byId(clientId)?.replay(frames);
  }

  audio(pcm: Uint8Array): void {
    for (const client of this.all()) client.audio(pcm);
  }

  closeAll(code: number, reason: string): void {
    for (const client of this.all()) client.close(code, reason);
    this.session?.dispose();
  }
}
