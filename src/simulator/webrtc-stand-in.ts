/**
 * The GPT-Live face's WebRTC sessions, as far as a stand-in without media can go: the
 * creation's answer (a stand-in SDP), and the browser's side, stood in for by a WebSocket
 * (`/v1/live/sessions/{id}/peer`) that speaks what the browser's data channel would (the
 * primary's client and server events), its audio as `session.input_audio.append` (README,
 * "GPT-Live face": assumed, the simulator's own).
 */

/** At most this many server events wait for a stand-in browser that has not joined yet. */
const MAX_HELD = 1000;

/**
 * The browser's side of a WebRTC session: what the session sends its primary waits here
 * until the stand-in joins (a real data channel opens after the SDP exchange too), then goes
 * to it, in order.
 */
/** What the slot needs of the stand-in's socket. */
type PeerSocket = Pick<WebSocket, "send" | "close">;

export class PeerSlot {
  private ws: PeerSocket | null = null;
  private held: (string | Uint8Array)[] = [];
  private closed = false;

  /** Whether a stand-in may still join (none has, and the session has not ended). */
  get open(): boolean {
    return this.ws === null && !this.closed;
  }

  send(data: string | Uint8Array): void {
    if (this.ws === null) {
      if (!this.closed && this.held.length < MAX_HELD) this.held.push(data);
      return;
    }
    try {
      this.ws.send(data);
    } catch {
      // a stand-in going away misses what it would have seen
    }
  }

  /** The stand-in browser joins: what waited for it first. */
  join(ws: PeerSocket): void {
    this.ws = ws;
    for (const data of this.held) ws.send(data);
    this.held = [];
  }

  close(code: number, reason: string): void {
    this.closed = true;
    this.held = [];
    try {
      this.ws?.close(code, reason.slice(0, 123));
    } catch {
      // already closing
    }
  }
}

/**
 * An offer the stand-in takes: an SDP with an audio section (a GPT-Live call carries the
 * user's microphone). What the real service checks beyond that is not known (assumed).
 */
export function offersAudio(sdp: string): boolean {
  return sdp.startsWith("v=0") && /^m=audio /m.test(sdp);
}

/**
 * A stand-in SDP answer: well-formed, but with no transport a browser could use (the
 * simulator has no media); `a=x-liveline-peer` names where the stand-in browser connects.
 */
export function standInAnswer(sessionId: string): string {
  return [
    "v=0",
    "o=- 0 2 IN IP4 127.0.0.1",
    "s=liveline simulator",
    "t=0 0",
    "m=audio 9 UDP/TLS/RTP/SAVPF 111",
    "c=IN IP4 0.0.0.0",
    "a=mid:0",
    "a=sendrecv",
    "a=rtpmap:111 opus/48000/2",
    `a=x-liveline-peer:/v1/live/sessions/${encodeURIComponent(sessionId)}/peer`,
    "",
  ].join("\r\n");
}

/** The service's HTTP refusal, in OpenAI's error shape (`{error: {type, code, message, param}}`). */
export function liveHttpError(
  status: number,
  code: string,
  message: string,
  param: string | null = null,
): Response {
  return Response.json(
    { error: { type: "invalid_request_error", code, message, param } },
    { status },
  );
}
