/**
 * A face's connection as the simulator's object runs it: the pure machine of a face driven by
 * its client's frames and its own timer, its effects carried out in order to its end (a
 * WebSocket, or a stand-in's slot).
 */

import { closeReason } from "../close-reason.js";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Where a face's machine sends what it says to its client: a WebSocket, or a WebRTC
 * session's stand-in browser (webrtc-stand-in.ts).
 */
export interface FaceEnd {
  send(data: string | Uint8Array): void;
  close(code: number, reason: string): void;
}

export function socketEnd(ws: WebSocket): FaceEnd {
  return { send: (data) => ws.send(data), close: (code, reason) => closeQuietly(ws, code, reason) };
}

/** A face's machine driven by WebSocket `ws`: its frames in; its end stops the machine. */
export function listen<S, I, E>(ws: WebSocket, socket: FaceSocket<S, I, E>): void {
  ws.addEventListener("message", (event) =>
    socket.feed({ type: "frame", text: frameText(event.data) }),
  );
  ws.addEventListener("close", () => socket.stop());
  ws.addEventListener("error", () => socket.stop());
}

/** What a face's machine takes from its socket (each machine's input includes these). */
export type SocketInput = { type: "open" } | { type: "frame"; text: string } | { type: "tick" };

/** A face: its pure machine's step, and how the shell carries out one of its effects. */
export interface Face<S, I, E> {
  step(
    state: S,
    input: I | SocketInput,
    now: number,
  ): { state: S; effects: E[]; wakeAt: number | null };
  carryOut(effect: E, socket: FaceSocket<S, I, E>): void;
}

/**
 * One connection of a face: its client (a WebSocket, see `listen`) drives the machine —
 * frames and ticks in, effects out in order to its end, one timer for the machine's next
 * wake-up.
 */
export class FaceSocket<S, I, E> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    readonly end: FaceEnd,
    private state: S,
    private readonly face: Face<S, I, E>,
  ) {
    this.feed({ type: "open" });
  }

  feed(input: I | SocketInput): void {
    this.take(input);
  }

  /** One input: the machine's step, its effects carried out (and returned, in order). */
  take(input: I | SocketInput): E[] {
    if (this.closed) return [];
    const { state, effects, wakeAt } = this.face.step(this.state, input, Date.now());
    this.state = state;
    for (const effect of effects) {
      if (this.closed) return effects;
      this.face.carryOut(effect, this);
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (wakeAt !== null && !this.closed) {
      this.timer = setTimeout(() => this.feed({ type: "tick" }), Math.max(0, wakeAt - Date.now()));
    }
    return effects;
  }

  close(code: number, reason: string): void {
    this.stop();
    this.end.close(code, reason);
  }

  stop(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}

/** A client frame as text (what a machine parses); a binary frame not UTF-8 is refused there. */
export function frameText(data: string | ArrayBuffer): string {
  try {
    return typeof data === "string" ? data : utf8.decode(data);
  } catch {
    return "\u0000not utf-8";
  }
}

export function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, closeReason(reason));
  } catch {
    // already closing
  }
}
