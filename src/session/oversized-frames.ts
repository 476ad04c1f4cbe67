/**
 * A client socket that keeps sending frames over MAX_FRAME_BYTES is closed. Each such frame is
 * answered with `frame_too_large` and changes nothing — but the runtime holds every incoming
 * message whole (up to 32 MiB on Cloudflare) before liveline sees its size, in an isolate of
 * 128 MB that other sessions' objects may share. A client that errs once is told and goes on;
 * one that keeps at it is closed, and its session, its other sockets and its model connection
 * go on untouched.
 */

/** Oversized frames a socket may send within the window; one more closes it. */
export const OVERSIZED_FRAMES_ALLOWED = 3;
export const OVERSIZED_WINDOW_MS = 60_000;
/** The close: RFC 6455's "message too big", with a reason that says which limit. */
export const CLOSE_MESSAGE_TOO_BIG = 1009;
export const OVERSIZED_CLOSE_REASON = "frames over MAX_FRAME_BYTES";

export class OversizedFrames {
  /** When each socket sent its latest oversized frames (within the window). */
  private readonly seen = new WeakMap<WebSocket, number[]>();

  constructor(
    /** Oversized frames allowed within the window (Infinity: never closed, a test's control). */
    public allowed = OVERSIZED_FRAMES_ALLOWED,
    private readonly windowMs = OVERSIZED_WINDOW_MS,
  ) {}

  /** Notes an oversized frame from `ws`: how many it sent within the window, if now too many. */
  tooMany(ws: WebSocket, now: number): number | null {
    const recent = (this.seen.get(ws) ?? []).filter((at) => now - at < this.windowMs);
    recent.push(now);
    this.seen.set(ws, recent);
    return recent.length > this.allowed ? recent.length : null;
  }
}
