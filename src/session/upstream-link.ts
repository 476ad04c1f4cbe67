import type { UpstreamOpen } from "../core/effects.js";
import { UpstreamRefused } from "../providers/websocket.js";
import type { ModelCommand, ModelEvent, RebuiltContext } from "../vocabulary/model.js";
import type {
  AgentSpec,
  ProviderAdapter,
  ProviderSession,
} from "../vocabulary/provider-adapter.js";
import type { ModelPort } from "./interpreter.js";
import { closeQuietly } from "./sockets.js";

interface UpstreamCallbacks {
  /** The socket is open and setup was sent. */
  opened(): void;
  events(events: ModelEvent[]): void;
  /** A frame that could not be decoded: reported, never fatal. */
  protocolError(message: string): void;
  /** The current connection closed (never reported for one we closed ourselves). */
  closed(code: number, reason: string, fatal: boolean): void;
  /** Opening failed before the socket was open; `refused`: retrying cannot help. */
  failed(message: string, refused: boolean): void;
}

/** How the link reaches its model: a provider's session. */
type UpstreamTarget = Pick<ProviderSession, "connect" | "adapter">;

/** An agent's way to its model: its provider session, and the agent as that session sets it up. */
interface AgentTarget {
  target: UpstreamTarget;
  spec: AgentSpec;
}

/**
 * The session's one model connection. Every connection gets a number; events of a
 * connection that was replaced or closed by us are dropped, so the core only ever hears of
 * the current one. A connection seeded from the log reads the log when its socket opens
 * (its setup must say whether a seed follows), and sends the seed right after
 * `setupComplete`, before the core's queued input goes out.
 *
 * It is the interpreter's model port: the core's model effects come straight here.
 */
export class UpstreamLink implements ModelPort {
  private ws: WebSocket | null = null;
  private adapter: ProviderAdapter | null = null;
  private attempt = 0;
  private target: UpstreamTarget;

  /**
   * `agent`: whose setup the first connection opens with; `targetOf`: any agent's way to its
   * model, or null for an agent the session does not have.
   */
  constructor(
    private agent: string,
    private readonly targetOf: (agent: string) => AgentTarget | null,
    private readonly callbacks: UpstreamCallbacks,
  ) {
    const first = targetOf(agent);
    if (first === null) throw new Error(`no model target for the agent "${agent}"`);
    this.target = first.target;
  }

  /**
   * A handoff on the live connection (agents sharing a link): it takes `agent`'s setup in
   * place, and later connections open with that agent's target.
   */
  update(agent: string): void {
    const next = this.retarget(agent);
    if (next === null) return;
    const ws = this.ws;
    const frames = this.adapter?.updateAgent?.(next.spec) ?? [];
    if (ws) for (const frame of frames) ws.send(frame);
  }

  /** Later connections open as `agent` (the session's agents only); its target, or null. */
  private retarget(agent: string): AgentTarget | null {
    const next = this.targetOf(agent);
    if (next === null) return null;
    this.target = next.target;
    this.agent = agent;
    return next;
  }

  /** Opens a connection with `agent`'s setup (a handoff's new agent takes it from here on). */
  open(open: UpstreamOpen, rebuild: () => RebuiltContext, agent: string): void {
    if (agent !== this.agent) this.retarget(agent);
    this.close("replaced");
    const attempt = ++this.attempt;
    const adapter = this.target.adapter(attempt);
    this.target.connect(attempt).then(
      (ws) => {
        if (attempt !== this.attempt) {
          closeQuietly(ws, 1000, "superseded");
          return;
        }
        this.ws = ws;
        this.adapter = adapter;
        const seed = open.mode === "rebuild" ? adapter.encodeContext(rebuild()) : [];
        let seeded = seed.length === 0;
        ws.addEventListener("message", (event) => {
          if (attempt !== this.attempt) return;
          const decoded = adapter.decode(event.data as string | ArrayBuffer);
          if (!decoded.ok) {
            this.callbacks.protocolError(decoded.error.message);
            return;
          }
          if (!seeded && decoded.events.some((e) => e.type === "setup_complete")) {
            seeded = true;
            for (const frame of seed) ws.send(frame);
          }
          for (const frame of decoded.send ?? []) ws.send(frame);
          this.callbacks.events(decoded.events);
        });
        const onGone = (code: number, reason: string) => {
          if (attempt !== this.attempt) return;
          this.ws = null;
          this.attempt++; // report once
          // The adapter maps the provider's close codes to "cannot be fixed by retrying".
          this.callbacks.closed(code, reason, adapter.classifyClose(code) === "fatal");
        };
        ws.addEventListener("close", (event) => onGone(event.code, event.reason));
        ws.addEventListener("error", () => onGone(1006, "socket error"));
        ws.send(
          adapter.setupFrame({
            resumeHandle: open.mode === "resume" ? open.handle : undefined,
            seeded: seed.length > 0,
          }),
        );
        this.callbacks.opened();
      },
      (err: unknown) => {
        if (attempt !== this.attempt) return;
        this.callbacks.failed(
          err instanceof Error ? err.message : String(err),
          err instanceof UpstreamRefused,
        );
      },
    );
  }

  send(command: ModelCommand): void {
    const ws = this.ws;
    const adapter = this.adapter;
    if (!ws || !adapter) return;
    for (const frame of adapter.encode(command)) ws.send(frame);
  }

  /** Closes the current connection; its close is not reported. */
  close(reason: string): void {
    const ws = this.ws;
    this.ws = null;
    this.adapter = null;
    this.attempt++;
    if (ws) closeQuietly(ws, 1000, reason);
  }
}
