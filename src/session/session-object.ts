import { DurableObject } from "cloudflare:workers";
import { type Config, loadConfig } from "../config.js";
import type { Env } from "../env.js";
import { type ClientFrame, parseClientFrame } from "./client-frames.js";
import { MetaStore } from "./meta.js";
import {
  RESUME_FROM_HEADER,
  SESSION_HEADER,
  type SessionApi,
  type SessionInit,
  type Timeline,
} from "./session-api.js";

/** Frames the shell itself sends; the session's durable frames come from the core. */
type ShellFrame =
  | {
      type: "ready";
      sessionId: string;
      lastSeq: number;
      resumed: boolean;
      audio: { inputRate: number; outputRate: number };
    }
  | { type: "pong" }
  | { type: "error"; code: string; message: string; fatal: boolean };

/** What each client socket carries across hibernation. */
interface SocketAttachment {
  /** The `resumeFrom` of the upgrade URL, or null. */
  resumeFrom: number | null;
}

const INPUT_RATE = 16_000;
const OUTPUT_RATE = 24_000;

/** Close codes used by the shell. */
const CLOSE_NORMAL = 1000;
const CLOSE_TRY_AGAIN_LATER = 1013;

/** Per-socket frame counting for MAX_FRAMES_PER_SECOND (in memory; a hibernated socket is idle). */
interface RateWindow {
  startedAt: number;
  count: number;
  warned: boolean;
}

/**
 * One live session: owns every client socket of the session (and, once the core is
 * plugged in, the model socket). Sockets use the Hibernation API; every client message goes
 * through `handleClientFrame`, which checks size and rate, parses into a typed `ClientFrame`
 * and dispatches exhaustively.
 */
export class SessionObject extends DurableObject<Env> implements SessionApi {
  private readonly config: Config;
  private readonly meta: MetaStore;
  private readonly rates = new WeakMap<WebSocket, RateWindow>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.config = loadConfig(env);
    this.meta = new MetaStore(ctx.storage);
  }

  // --- RPC -------------------------------------------------------------------------------

  async init(opts: SessionInit): Promise<void> {
    this.meta.init(opts);
  }

  async exists(): Promise<boolean> {
    return this.meta.read() !== null;
  }

  async history(): Promise<{ events: unknown[] }> {
    this.requireMeta();
    return { events: [] };
  }

  async timeline(): Promise<Timeline> {
    const meta = this.requireMeta();
    return { sessionId: meta.sessionId, startedAt: meta.createdAt, rows: [] };
  }

  async end(): Promise<void> {
    this.requireMeta();
    this.meta.markEnded(new Date().toISOString());
    for (const ws of this.ctx.getWebSockets()) {
      closeQuietly(ws, CLOSE_NORMAL, "session ended");
    }
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
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return jsonError(426, "upgrade_required", "expected a WebSocket upgrade");
    }
    const resumeHeader = request.headers.get(RESUME_FROM_HEADER);
    const resumeFrom = resumeHeader === null ? null : Number(resumeHeader);
    if (resumeFrom !== null && !(Number.isSafeInteger(resumeFrom) && resumeFrom >= 0)) {
      return jsonError(400, "bad_request", "resumeFrom must be a non-negative integer");
    }

    const { 0: client, 1: server } = new WebSocketPair();
    if (this.ctx.getWebSockets().length >= this.config.MAX_CLIENTS_PER_SESSION) {
      // Accepted only to say why, then closed; never joins the session.
      server.accept();
      send(server, {
        type: "error",
        code: "too_many_clients",
        message: `a session takes at most ${this.config.MAX_CLIENTS_PER_SESSION} connections`,
        fatal: true,
      });
      server.close(CLOSE_TRY_AGAIN_LATER, "too many clients");
      return new Response(null, { status: 101, webSocket: client });
    }

    this.ctx.acceptWebSocket(server);
    server.binaryType = "arraybuffer";
    server.serializeAttachment({ resumeFrom } satisfies SocketAttachment);
    send(server, {
      type: "ready",
      sessionId: meta.sessionId,
      lastSeq: 0,
      resumed: resumeFrom !== null,
      audio: { inputRate: INPUT_RATE, outputRate: OUTPUT_RATE },
    });
    return new Response(null, { status: 101, webSocket: client });
  }

  // --- Hibernation API handlers ----------------------------------------------------------

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    this.handleClientFrame(ws, data);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // 1005/1006 cannot be sent back; answer the others (a no-op when already closed).
    closeQuietly(ws, code === 1005 || code === 1006 ? CLOSE_NORMAL : code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    closeQuietly(ws, 1011, "socket error");
  }

  // --- client frames ---------------------------------------------------------------------

  /** Every client message enters here: size, rate, parse, then one exhaustive dispatch. */
  handleClientFrame(ws: WebSocket, data: string | ArrayBuffer): void {
    const size = sizeOver(data, this.config.MAX_FRAME_BYTES);
    if (size !== null) {
      send(ws, {
        type: "error",
        code: "frame_too_large",
        message: `frames are limited to ${this.config.MAX_FRAME_BYTES} bytes; this one had ${size}`,
        fatal: false,
      });
      return;
    }
    if (!this.withinRate(ws)) return;

    const parsed = parseClientFrame(data);
    if (!parsed.ok) {
      send(ws, { type: "error", code: "bad_frame", message: parsed.message, fatal: false });
      return;
    }
    const frame = parsed.frame;
    switch (frame.type) {
      case "ping":
        send(ws, { type: "pong" });
        return;
      case "text":
      case "audio_end":
      case "tool_result":
      case "audio":
        this.toSessionCore(ws, frame);
        return;
      default:
        assertNever(frame);
    }
  }

  /**
   * The seam to the session core: user input and tool results. With no core attached to
   * this shell yet, no model can take them: text turns, audio_end and tool results are
   * answered with a non-fatal `upstream_unavailable` error, audio chunks are dropped.
   */
  private toSessionCore(ws: WebSocket, frame: Exclude<ClientFrame, { type: "ping" }>): void {
    if (frame.type === "audio") return;
    send(ws, {
      type: "error",
      code: "upstream_unavailable",
      message: "no model is connected to this session",
      fatal: false,
    });
  }

  /** Counts the frame in its one-second window; past the limit it is dropped. */
  private withinRate(ws: WebSocket): boolean {
    const now = Date.now();
    let window = this.rates.get(ws);
    if (!window || now - window.startedAt >= 1000) {
      window = { startedAt: now, count: 0, warned: false };
      this.rates.set(ws, window);
    }
    window.count += 1;
    if (window.count <= this.config.MAX_FRAMES_PER_SECOND) return true;
    if (!window.warned) {
      window.warned = true; // one error per window, not one per dropped frame
      send(ws, {
        type: "error",
        code: "rate_limited",
        message: `more than ${this.config.MAX_FRAMES_PER_SECOND} frames in a second: frames dropped`,
        fatal: false,
      });
    }
    return false;
  }

  private requireMeta() {
    const meta = this.meta.read();
    if (!meta) throw new Error("unknown session");
    return meta;
  }
}

function send(ws: WebSocket, frame: ShellFrame): void {
  try {
    ws.send(JSON.stringify(frame));
  } catch {
    // The socket is closing; its close handler cleans up.
  }
}

function closeQuietly(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}

/** The frame's size in bytes when it exceeds `max`, else null. */
function sizeOver(data: string | ArrayBuffer, max: number): number | null {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most text frames need no encoding.
  if (typeof data === "string" && data.length * 3 <= max) return null;
  const size =
    typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength;
  return size > max ? size : null;
}

function jsonError(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

function assertNever(x: never): never {
  throw new Error(`unhandled client frame ${JSON.stringify(x)}`);
}
