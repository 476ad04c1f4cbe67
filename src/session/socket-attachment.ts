/**
 * What each socket of a session's object carries across hibernation (its attachment), and
 * the sockets of one kind: protocol clients (apps) and carriers' media streams (calls).
 */

export interface SocketAttachment {
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
   * A carrier's media stream (a phone call) in place of a protocol client: its carrier (a
   * name in src/carrier-registry.ts), and its stream once a start with a valid token bound
   * it (till then it is no client).
   */
  call?: { carrier: string; streamId: string | null; line?: string | undefined } | undefined;
}

/**
 * A socket's attachment, read from the runtime once per object instance (deserialising it
 * for each of 50 audio frames a second showed in profiles); `attach` keeps both in step.
 */
const attachments = new WeakMap<WebSocket, SocketAttachment>();

export function attachmentOf(ws: WebSocket): SocketAttachment | null {
  const cached = attachments.get(ws);
  if (cached !== undefined) return cached;
  const stored = (ws.deserializeAttachment() as SocketAttachment | null) ?? null;
  if (stored !== null) attachments.set(ws, stored);
  return stored;
}

export function attach(ws: WebSocket, attachment: SocketAttachment): void {
  ws.serializeAttachment(attachment);
  attachments.set(ws, attachment);
}

/**
 * `app`: the clients that hold a slot (a call's stream holds none: a call has one, bound by
 * its token); a call's stream `waiting_call` for its start, or `bound_call` by it.
 */
export type SocketKind = "app" | "waiting_call" | "bound_call";

/** The open sockets of one kind (one being closed counts for none). */
export function openSockets(sockets: readonly WebSocket[], kind: SocketKind): WebSocket[] {
  return sockets.filter((ws) => {
    if (ws.readyState !== WebSocket.OPEN) return false;
    const call = attachmentOf(ws)?.call;
    if (kind === "app") return call === undefined;
    return call !== undefined && (call.streamId === null) === (kind === "waiting_call");
  });
}
