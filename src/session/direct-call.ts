import type { DirectCallAnswer, SipAcceptAnswer } from "../contracts/session-api.js";
import type { CoreState } from "../core/session-state.js";
import { DirectCallRefused } from "../providers/direct-call-refused.js";
import type { HistoryEvent } from "../vocabulary/log-events.js";
import type { RebuiltContext } from "../vocabulary/model.js";
import type { DirectCall, DirectCallService } from "../vocabulary/provider-adapter.js";
import type { DirectCallStore } from "./direct-call-store.js";
import type { HistoryStore } from "./history-store.js";
import type { SessionInterpreter } from "./interpreter.js";
import type { SessionMeta } from "./meta.js";
import type { ModelConnection } from "./model-connection.js";
import { CALL_CONNECTED } from "./phone-call-line.js";
import type { SessionAgents } from "./session-agents.js";
import type { CallWatcher } from "./sip-call.js";
import type { SubrequestMeter } from "./subrequests.js";

/** What the direct call reaches of its running session. */
export interface DirectCallSession {
  readonly interpreter: SessionInterpreter;
  /** Why the session's model cannot be reached, or null. */
  readonly modelProblem: string | null;
  /** The model the session's current agent asks for (named in a refusal). */
  readonly model: string;
  /** The conversation to seed a model with, from these events of the log. */
  contextOf(events: readonly HistoryEvent[]): RebuiltContext;
}

/**
 * The session's direct-call channel: a device's WebRTC call with the model service (its SDP
 * offer), or a SIP call the service took; either way the session's model connection becomes
 * the call's sideband, and the call joins the session as a client (its device's, reached
 * through the service): the core opens the connection for it as for any client, and does not
 * take the session for one nobody uses.
 */
export class DirectCallChannel {
  /** The direct call whose sideband the model connection is, or null. */
  private current: string | null = null;
  /** SIP calls being accepted, by call id (a webhook delivered twice accepts once). */
  private readonly accepting = new Map<string, Promise<SipAcceptAnswer>>();

  constructor(
    private readonly session: DirectCallSession,
    private readonly meta: SessionMeta,
    private readonly agents: SessionAgents,
    private readonly store: HistoryStore,
    private readonly calls: DirectCallStore,
    private readonly link: ModelConnection,
    private readonly subrequests: SubrequestMeter,
    private readonly callWatcher: CallWatcher | null,
  ) {}

  private get state(): CoreState {
    return this.session.interpreter.state;
  }

  /**
   * A direct call that outlived the object's last run: its sideband is attached again, once
   * the object holds this session (the step's frames reach its sockets through it).
   */
  resume(): void {
    const direct = this.calls.read();
    if (direct !== null && !this.state.ended)
      queueMicrotask(() => this.join(direct.serviceSessionId, direct.agent ?? this.meta.agent));
    else if (direct !== null) this.calls.clear();
  }

  /**
   * A device's direct call (WebRTC) with the service, for its SDP `offer`: created with the
   * server's key, set up as the session's agent and seeded with the conversation so far; the
   * session's model connection becomes the call's sideband. Whatever connection the session
   * held (its own, or an earlier call's sideband) is replaced: a turn in flight on it ends as
   * on any lost connection, and an earlier call is left to its device (not ended).
   */
  async place(offer: string): Promise<DirectCallAnswer> {
    const calls = this.agents.providerFor(this.state.agent).directCallService;
    if (calls?.create === undefined)
      return {
        refused: "unsupported",
        message: `this session's model (provider ${this.meta.provider}, ${this.session.model}) takes no direct WebRTC calls; GPT-Live does (provider gpt-live)`,
      };
    if (this.state.upstream.phase === "failed")
      return {
        refused: "model_failed",
        message:
          "the session's model connection has failed; send input on the session's socket to try again, then place the call",
      };
    // The log as a new connection would be seeded with, less the input still waiting to go
    // out (it goes to the call as itself once the sideband is live).
    const since = this.state.outboxSince;
    const events = this.store.readAfter(0);
    const context = this.session.contextOf(
      since === null ? events : events.filter((e) => e.seq < since),
    );
    let call: DirectCall;
    try {
      call = await this.subrequests.track("call", calls.create(offer, context));
    } catch (err) {
      if (!(err instanceof DirectCallRefused)) throw err;
      return {
        refused: err.offerRefused ? "offer_refused" : "service_failed",
        message: err.message,
      };
    }
    // Ended while the service answered: the call has no session to record it.
    if (this.state.ended)
      return { refused: "ended", message: "the session ended while the call was made" };
    this.replaceWith(call.serviceSessionId);
    return { answer: call };
  }

  /**
   * A call that reached the service by SIP (its webhook named it): accepted as the session's
   * agent, and the session's model connection becomes its sideband; the model is told the
   * caller is on the line. A call accepted already (a webhook the service delivered again) is
   * not accepted twice.
   */
  accept(callId: string): Promise<SipAcceptAnswer> {
    if (this.calls.read()?.serviceSessionId === callId) return Promise.resolve({ accepted: true });
    const running = this.accepting.get(callId);
    if (running !== undefined) return running;
    const accepting = this.acceptOnce(callId).finally(() => this.accepting.delete(callId));
    this.accepting.set(callId, accepting);
    return accepting;
  }

  private async acceptOnce(callId: string): Promise<SipAcceptAnswer> {
    if (this.session.modelProblem !== null)
      return { refused: "model_unavailable", message: this.session.modelProblem };
    const accept = this.agents.providerFor(this.state.agent).directCallService?.accept;
    if (accept === undefined)
      return {
        refused: "unsupported",
        message: `this session's model (provider ${this.meta.provider}, ${this.session.model}) takes no SIP calls; OpenAI Realtime does (provider openai)`,
      };
    try {
      await this.subrequests.track("model", accept(callId));
    } catch (err) {
      if (!(err instanceof DirectCallRefused)) throw err;
      return { refused: "service_failed", message: err.message };
    }
    if (this.state.ended)
      return { refused: "ended", message: "the session ended while the call was accepted" };
    this.replaceWith(callId);
    // The caller waits to be greeted, as on a carrier's call.
    this.sayAsCaller(CALL_CONNECTED);
    return { accepted: true };
  }

  /** The call `serviceSessionId` takes the sideband from the one before it (left to its device). */
  private replaceWith(serviceSessionId: string): void {
    const earlier = this.current;
    if (earlier !== null) this.leave(earlier);
    this.calls.set(serviceSessionId, this.state.agent);
    this.join(serviceSessionId, this.state.agent);
  }

  private join(serviceSessionId: string, setUpAs: string): void {
    this.current = serviceSessionId;
    this.link.joinCall(serviceSessionId, setUpAs);
    this.input({ type: "client_connected", clientId: callClient(serviceSessionId) });
  }

  private leave(serviceSessionId: string): void {
    this.input({ type: "client_disconnected", clientId: callClient(serviceSessionId) });
  }

  /** The call is over (its sideband refused): the session is its own again. */
  ended(serviceSessionId: string): void {
    if (this.current === serviceSessionId) this.current = null;
    if (this.calls.read()?.serviceSessionId === serviceSessionId) this.calls.clear();
    this.leave(serviceSessionId);
    // A SIP call's session is the call: it ends with it.
    this.callWatcher?.callOver();
  }

  /** The call's service session now speaks as `agent` (a handoff reached it). */
  setUp(serviceSessionId: string, agent: string): void {
    this.calls.setAgent(serviceSessionId, agent);
    this.store.trace([{ at: Date.now(), kind: "CALL_AGENT", detail: { agent } }]);
  }

  /** A line to the model as the direct call's caller's (a SIP call's keys, its line's notes). */
  sayAsCaller(text: string): void {
    const call = this.current;
    if (call === null || this.state.ended) return;
    this.input({ type: "client_text", clientId: callClient(call), text });
  }

  /** A client tool's outcome, as the direct call's (a phone has no app to run it). */
  toolResult(callId: string, error: string): void {
    const call = this.current;
    if (call === null || this.state.ended) return;
    this.input({ type: "client_tool_result", clientId: callClient(call), callId, error });
  }

  /** The call control of the session's provider (a SIP call's REFER and hang-up), or null. */
  control(): DirectCallService | null {
    const calls = this.agents.providerFor(this.state.agent).directCallService;
    if (calls === undefined) return null;
    // Each is a subrequest to the model service, counted as the model connection's are.
    const { refer, hangUp } = calls;
    return {
      ...calls,
      ...(refer === undefined
        ? {}
        : { refer: (id, uri) => this.subrequests.track("model", refer(id, uri)) }),
      ...(hangUp === undefined
        ? {}
        : { hangUp: (id) => this.subrequests.track("model", hangUp(id)) }),
    };
  }

  /**
   * The core closes a connection nobody used for the idle time (status `idle`), and opens the
   * next on a client's input; a call's device speaks to the service, not to liveline, so no
   * such input comes, and its tools would go unanswered. Its client connects again, after the
   * step that closed it: the sideband is attached again at once.
   */
  idled(): void {
    const call = this.current;
    if (call === null) return;
    queueMicrotask(() => {
      if (this.current === call && !this.state.ended)
        this.input({ type: "client_connected", clientId: callClient(call) });
    });
  }

  private input(input: Parameters<SessionInterpreter["handleInput"]>[0]): void {
    this.session.interpreter.handleInput(input);
  }
}

/** The client id a direct call joins its session as (it has no socket: frames to it go nowhere). */
function callClient(serviceSessionId: string): string {
  return `webrtc:${serviceSessionId}`;
}
