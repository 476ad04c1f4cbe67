import type { UpstreamOpen } from "../core/effects.js";
import { UpstreamRefused } from "../providers/websocket.js";
import type { ModelCommand, RebuiltContext } from "../vocabulary/model.js";
import type {
  AgentSpec,
  CallSignal,
  ModelRoute,
  ProviderAdapter,
} from "../vocabulary/provider-adapter.js";
import type { InputSink, ModelPort } from "./interpreter-ports.js";
import { closeQuietly } from "./sockets.js";
import type { WireTap } from "./wire-recorder.js";

/** The close a connection replaced by a direct call is reported with (the core reopens). */
const CLOSE_REPLACED = 1012;

/** A resume waits this long at most for the socket it replaces to finish closing. */
export const CLOSE_WAIT_MS = 2_000;

/** Resolves once `ws` has closed (its close handshake done), or after `ms` at the latest. */
function closedWithin(ws: WebSocket, ms: number): Promise<void> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    ws.addEventListener("close", done, { once: true });
    ws.addEventListener("error", done, { once: true });
  });
}

/** Takes no input: a link not yet given its session's interpreter (see `deliverTo`). */
const NO_INPUTS: InputSink = { handleInput: () => {} };

interface UpstreamCallbacks {
  /**
   * What must be ready before `agent`'s connection is set up (its MCP tools listed, waited
   * for a bounded time); its setup is read after.
   */
  prepare?(agent: string): Promise<void>;
  /**
   * An attempt to connect is under way (each is a subrequest, waiting for its headers until
   * it settles); what it returns is awaited in its place.
   */
  attempting?<T>(connecting: Promise<T>): Promise<T>;
  /** A frame that could not be decoded: reported, never fatal. */
  protocolError(message: string): void;
  /**
   * The direct call the link was the sideband of is over (its sideband refused): the link's
   * own connection again. (Only a session that places direct calls needs to hear it.)
   */
  callEnded?(serviceSessionId: string): void;
  /** The direct call's service session now speaks as `agent` (a handoff reached it). */
  callSetUp?(serviceSessionId: string, agent: string): void;
  /** What a call's sideband said of the call itself (a SIP call's keys and playback). */
  callSignals?(signals: CallSignal[]): void;
  /** Every frame each way, for a wire recording (absent: nothing records the wire). */
  wire?: WireTap | undefined;
}

/** How the link reaches its model: a provider's session. */
type UpstreamTarget = Pick<ModelRoute, "connect" | "adapter" | "directCallService">;

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
 * During a direct call (a device's WebRTC call with the service, see `joinCall`) every
 * connection is that call's sideband: it attaches to the running call, sets nothing up (the
 * call was set up, and seeded, when it was created) and is live once open. When the call is
 * over (its sideband is refused) the link opens its own connection again, in the same open.
 *
 * It is the interpreter's model port: the core's model effects come straight here.
 */
export class ModelConnection implements ModelPort {
  private ws: WebSocket | null = null;
  private adapter: ProviderAdapter | null = null;
  private attempt = 0;
  /** The open connection's number (its attempt), as a wire recording names it. */
  private conn = 0;
  private target: UpstreamTarget;
  /** The service session of the direct call this link is the sideband of, or null. */
  private directCallSessionId: string | null = null;
  /** The agent that call's service session is set up as (its creation's, or a handoff's). */
  private callAgent: string | null = null;
  /** A connection is on its way (its socket not open yet). */
  private opening = false;
  /**
   * Where the link's inputs go (the session's interpreter): the socket is open and setup was
   * sent (`upstream_opened`); each model event (`model`); the current connection closed,
   * never reported for one the link closed itself; opening failed before the socket was open
   * (`upstream_failed`, `refused`: retrying cannot help).
   */
  private inputs: InputSink = NO_INPUTS;

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

  /** The link's inputs go to `inputs` from now on (the session's interpreter, once made). */
  deliverTo(inputs: InputSink): void {
    this.inputs = inputs;
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
    if (ws) for (const frame of frames) this.sendFrame(ws, frame);
  }

  /** Later connections open as `agent` (the session's agents only); its target, or null. */
  private retarget(agent: string): AgentTarget | null {
    const next = this.targetOf(agent);
    if (next === null) return null;
    this.target = next.target;
    this.agent = agent;
    return next;
  }

  /**
   * From now on every connection is the sideband of the direct call `serviceSessionId`. A
   * connection open or on its way (the link's own, or an earlier call's sideband) is closed,
   * and reported lost, so that the core opens the next one by its rules: the call's sideband.
   */
  joinCall(serviceSessionId: string, setUpAs: string): void {
    this.directCallSessionId = serviceSessionId;
    this.callAgent = setUpAs;
    if (this.ws === null && !this.opening) return;
    this.close("replaced by a direct call");
    this.closed(CLOSE_REPLACED, "replaced by a direct call", false);
  }

  /** Opens a connection with `agent`'s setup (a handoff's new agent takes it from here on). */
  open(open: UpstreamOpen, rebuild: () => RebuiltContext, agent: string): void {
    if (agent !== this.agent) this.retarget(agent);
    const previous = this.ws;
    this.close("replaced");
    const attempt = ++this.attempt;
    this.opening = true;
    // A resume is refused while an earlier socket of the same service session is open (Gemini
    // closes it with 1011: aicc2025/sip-to-ai PR #14): the one just closed must be gone first.
    const gone =
      open.mode === "resume" && previous !== null ? closedWithin(previous, CLOSE_WAIT_MS) : null;
    const prepared = this.callbacks.prepare?.(this.agent);
    const proceed = () => {
      if (attempt !== this.attempt) return;
      // The agent's setup as it stands now (its MCP tools, listed meanwhile).
      this.retarget(this.agent);
      this.openSocket(open, rebuild, attempt);
    };
    if (gone !== null) void Promise.all([prepared, gone]).then(proceed);
    else if (prepared !== undefined) void prepared.then(proceed);
    else this.openSocket(open, rebuild, attempt);
  }

  private openSocket(open: UpstreamOpen, rebuild: () => RebuiltContext, attempt: number): void {
    const adapter = this.target.adapter(attempt);
    const connecting = this.connect(attempt);
    (this.callbacks.attempting?.(connecting) ?? connecting).then(
      ({ ws, sideband }) => {
        if (attempt !== this.attempt) {
          closeQuietly(ws, 1000, "superseded");
          return;
        }
        this.opening = false;
        this.ws = ws;
        this.adapter = adapter;
        this.conn = attempt;
        const wire = this.callbacks.wire;
        wire?.opened(attempt);
        // A sideband's call holds its conversation already (seeded when it was created).
        const seed = open.mode === "rebuild" && !sideband ? adapter.encodeContext(rebuild()) : [];
        let seeded = seed.length === 0;
        ws.addEventListener("message", (event) => {
          if (attempt !== this.attempt) return;
          wire?.received(attempt, event.data as string | ArrayBuffer);
          const decoded = adapter.decode(event.data as string | ArrayBuffer);
          if (!decoded.ok) {
            this.callbacks.protocolError(decoded.error.message);
            return;
          }
          if (!seeded && decoded.events.some((e) => e.type === "setup_complete")) {
            seeded = true;
            for (const frame of seed) this.sendFrame(ws, frame);
          }
          for (const frame of decoded.send ?? []) this.sendFrame(ws, frame);
          for (const event of decoded.events) this.inputs.handleInput({ type: "model", event });
          if (decoded.call !== undefined) this.callbacks.callSignals?.(decoded.call);
        });
        const onGone = (code: number, reason: string) => {
          if (attempt !== this.attempt) return;
          this.ws = null;
          this.attempt++; // report once
          wire?.closed(attempt, code, reason, "model");
          // The adapter maps the provider's close codes to "cannot be fixed by retrying".
          this.closed(code, reason, adapter.classifyClose(code) === "fatal");
        };
        ws.addEventListener("close", (event) => onGone(event.code, event.reason));
        ws.addEventListener("error", () => onGone(1006, "socket error"));
        if (sideband) {
          // Nothing to set up (a sideband never sends session.start): live once open. The
          // agent's settings a running session lets change go first (a handoff's new agent).
          this.setUpCall(ws, adapter);
          this.inputs.handleInput({ type: "upstream_opened" });
          this.inputs.handleInput({ type: "model", event: { type: "setup_complete" } });
          return;
        }
        this.sendFrame(
          ws,
          adapter.setupFrame({
            resumeHandle: open.mode === "resume" ? open.handle : undefined,
            seeded: seed.length > 0,
          }),
        );
        this.inputs.handleInput({ type: "upstream_opened" });
      },
      (err: unknown) => {
        if (attempt !== this.attempt) return;
        this.opening = false;
        this.inputs.handleInput({
          type: "upstream_failed",
          message: err instanceof Error ? err.message : String(err),
          refused: err instanceof UpstreamRefused,
        });
      },
    );
  }

  /** The current connection closed (or was replaced): the core hears it as the model's event. */
  private closed(code: number, reason: string, fatal: boolean): void {
    this.inputs.handleInput({
      type: "model",
      event: { type: "upstream_closed", code, reason, fatal },
    });
  }

  /**
   * A sideband attached: the call takes the agent's tools (and, when the call was set up as
   * another agent, its instructions), as far as the service lets a running session change.
   */
  private setUpCall(ws: WebSocket, adapter: ProviderAdapter): void {
    const call = this.directCallSessionId;
    if (call === null) return;
    const handedOff = this.callAgent !== this.agent;
    for (const frame of adapter.attachFrames?.({ handedOff }) ?? []) this.sendFrame(ws, frame);
    if (!handedOff) return;
    this.callAgent = this.agent;
    this.callbacks.callSetUp?.(call, this.agent);
  }

  /**
   * The direct call's sideband, or the link's own connection: also when the call turns out to
   * be over (its sideband refused: the service ended it), said once by `callEnded`.
   */
  private async connect(attempt: number): Promise<{ ws: WebSocket; sideband: boolean }> {
    const call = this.directCallSessionId;
    const calls = this.target.directCallService;
    if (call !== null && calls !== undefined) {
      try {
        return { ws: await calls.attach(call), sideband: true };
      } catch (err) {
        if (!(err instanceof UpstreamRefused)) throw err;
        if (this.directCallSessionId === call) {
          this.directCallSessionId = null;
          this.callbacks.callEnded?.(call);
        }
        // The call's end ended the session (a SIP call's session is the call): no connection
        // of its own is opened (the open's failure is not reported: the attempt is gone).
        if (attempt !== this.attempt) throw err;
      }
    }
    return { ws: await this.target.connect(attempt), sideband: false };
  }

  send(command: ModelCommand): void {
    const ws = this.ws;
    const adapter = this.adapter;
    if (!ws || !adapter) return;
    // A call's audio goes to the service over its own media; a sideband takes none.
    if (this.directCallSessionId !== null && command.type === "user_audio") return;
    for (const frame of adapter.encode(command)) this.sendFrame(ws, frame);
  }

  /** A frame to the model (and to a wire recording). */
  private sendFrame(ws: WebSocket, frame: string | ArrayBuffer | ArrayBufferView): void {
    ws.send(frame);
    this.callbacks.wire?.sent(this.conn, frame);
  }

  /** Closes the current connection; its close is not reported. */
  close(reason: string): void {
    const ws = this.ws;
    this.ws = null;
    this.adapter = null;
    this.opening = false;
    this.attempt++;
    if (ws) {
      closeQuietly(ws, 1000, reason);
      this.callbacks.wire?.closed(this.conn, 1000, reason, "gateway");
    }
  }
}
