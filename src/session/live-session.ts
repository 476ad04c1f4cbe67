import type {
  AgentDefinition,
  PhoneCall,
  SessionLimitOptions,
  ToolDefinition,
  ToolProgress,
} from "../agents/define.js";
import { handoffToolName, idempotencyKey, NO_AGENT, toolPolicies } from "../agents/define.js";
import { withHandoffTools } from "../agents/handoff-tools.js";
import type { RelayArm } from "../app-options.js";
import { phoneCallOf } from "../carrier-registry.js";
import type {
  DirectCallAnswer,
  HandoffAnswer,
  LogRead,
  SessionResource,
  SessionStats,
  SipAcceptAnswer,
  TimelineRow,
} from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import type { TraceKind } from "../core/effects.js";
import {
  ALL_GUARDS,
  type Arrival,
  type CoreState,
  defaultConfig,
  policyOf,
} from "../core/session-state.js";
import { checkedContext, rebuildContext } from "../history/rebuild.js";
import { mcpRerunTimeoutMs } from "../mcp/rerun-policy.js";
import {
  type ClosingCopy,
  type ClosingRecord,
  type EndReason,
  modelLiveMs,
} from "../metering/closing-record.js";
import { type Cost, costOf, emptyUsage, sumCosts } from "../metering/cost.js";
import { type PriceOverrides, priceFor } from "../metering/prices.js";
import { type SessionReport, sessionReport } from "../metering/session-report.js";
import { providerSession, providerUnavailable } from "../provider-registry.js";
import { DirectCallRefused } from "../providers/direct-call-refused.js";
import { unreachableModel } from "../providers/unreachable.js";
import { OtlpExporter } from "../telemetry/exporter.js";
import { traceExport } from "../telemetry/otel-settings.js";
import { frameOf, type ServerFrame } from "../vocabulary/frames.js";
import type { HistoryEvent, ToolOutcome } from "../vocabulary/log-events.js";
import type { ModelCapabilities, RebuiltContext, ToolPolicy } from "../vocabulary/model.js";
import type {
  AgentSpec,
  AudioEncoding,
  DirectCall,
  DirectCalls,
  ProviderSession,
} from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { CALL_CONNECTED } from "./call-line.js";
import { CarryStore } from "./carry-store.js";
import { ClosingRecordStore } from "./closing-record-store.js";
import { DeadlineTimers } from "./deadline-timers.js";
import { DirectCallStore } from "./direct-call-store.js";
import { HistoryStore } from "./history-store.js";
import { SessionInterpreter } from "./interpreter.js";
import { capsOf, coreLimits } from "./limits-of.js";
import type { SessionMeta } from "./meta.js";
import { PendingHandoffStore } from "./pending-handoff-store.js";
import { recordingChoice, SessionRecordings } from "./recordings.js";
import { recoverSession } from "./recover.js";
import { SessionAlarm } from "./session-alarm.js";
import { SessionMcp } from "./session-mcp.js";
import type { CallWatcher } from "./sip-call.js";
import type { ClientSockets } from "./sockets.js";
import { SubrequestMeter } from "./subrequests.js";
import { runServerTool } from "./tool-runner.js";
import { TurnTracer } from "./turn-tracer.js";
import { UpstreamLink } from "./upstream-link.js";
import { UsageStore } from "./usage-store.js";

/** Close code for a client whose session moved to a new instance of its object: reconnect. */
const CLOSE_SERVICE_RESTART = 1012;

/**
 * The running session inside its Durable Object: the pure core plus everything that carries
 * out its effects — the log in SQLite, client sockets, the model connection, tool runs and
 * timers. Every input, whatever its source, goes through `interpreter.handleInput`, one at a
 * time; the object's single thread and synchronous SQLite make each step atomic.
 */
export class LiveSession {
  /** Steps the core and carries out its effects: the shell hands it every input (handleInput). */
  readonly interpreter: SessionInterpreter;
  private readonly store: HistoryStore;
  private readonly usage: UsageStore;
  private readonly closings: ClosingRecordStore;
  /** The object's alarm: a closing record's copy to retry, the duration cap. */
  private readonly alarm: SessionAlarm;
  /** The session's turns as traces (null: no collector is configured). */
  private readonly tracer: TurnTracer | null = null;
  private readonly exporter: OtlpExporter | null = null;
  /** Why the shell is ending the session (set before its end_session input), or null. */
  private endReason: EndReason | null = null;
  /** The session's caps: its agent's, lowered where its creator asked. */
  private readonly caps: SessionLimitOptions;
  private costCapReached = false;
  /** The session's agents by name (its first and every one it may reach by handoff). */
  private readonly agents: ReadonlyMap<string, AgentDefinition>;
  /** A provider session per agent, made when that agent first opens a connection. */
  private readonly providers = new Map<string, ProviderSession>();
  private readonly link: UpstreamLink;
  private readonly timers = new DeadlineTimers();
  private readonly tools = new Map<string, AbortController>();
  /** The agents' MCP servers and the tools they listed (null until the session is whole). */
  private mcp: SessionMcp | null = null;
  /** When each running call last reported progress (reports are passed on once a second). */
  private readonly progressAt = new Map<string, number>();
  private readonly startedAt: number;
  /** A server tool's result is held to what a client's may carry (MAX_FRAME_BYTES). */
  private readonly maxResultBytes: number;
  /** The measurement arm this session runs as (the naive relay), or null: liveline itself. */
  private readonly arm: RelayArm | null;
  /** Every subrequest the session makes, against SUBREQUEST_BUDGET (session/subrequests.ts). */
  private readonly subrequests: SubrequestMeter;
  private readonly pendingHandoffs: PendingHandoffStore;
  /** Speech the model heard and no turn answers yet, kept across a restart. */
  private readonly speech: CarryStore;
  private readonly toolTimeoutMs: number;
  private readonly directCalls: DirectCallStore;
  /**
   * The direct call whose sideband the model connection is, or null. (The link knows it too;
   * the log port reads it here, on every write, without a call into the link.)
   */
  private directCall: string | null = null;
  /** The session's recordings (its audio, its model wire), as its agent or creator asked. */
  readonly recordings: SessionRecordings;
  /**
   * Why this gateway cannot reach the session's model (its provider is no longer configured),
   * or null. Such a session keeps its record readable and never opens a model connection.
   */
  readonly modelProblem: string | null;

  constructor(
    storage: DurableObjectStorage,
    private readonly env: Env,
    config: Config,
    readonly meta: SessionMeta,
    agents: ReadonlyMap<string, AgentDefinition>,
    private readonly sockets: ClientSockets,
    connectedClients: string[],
    arm: RelayArm | null,
    /** The phone call this session is, as its tools see it (null: no call). */
    private readonly call: PhoneCall | null = null,
    /** The app's prices, by model id, over the shipped ones. */
    private readonly prices: PriceOverrides = {},
    /** The session ended (the core ended it: a cap), as the object's meta must say. */
    private readonly ended: (by: EndReason) => void = ignoreEnd,
    /** A SIP call's line: what the log and the call's sideband tell of the call (null: none). */
    private readonly callWatcher: CallWatcher | null = null,
    /** This running session stood down (another writer took its log): the object lets it go. */
    private readonly stoodDown: () => void = ignoreStandDown,
  ) {
    this.arm = arm;
    this.store = new HistoryStore(storage, arm === null, config.TIMELINE_MAX_ROWS);
    this.subrequests = new SubrequestMeter(config.SUBREQUEST_BUDGET, (kind, detail) =>
      this.store.trace([{ at: Date.now(), kind, detail }]),
    );
    this.usage = new UsageStore(storage);
    this.alarm = new SessionAlarm(storage);
    this.closings = new ClosingRecordStore(
      storage,
      this.alarm,
      env.USAGE_DB,
      (m) => console.warn(`liveline: ${m}`),
      () => this.subrequests.count("usage"),
    );
    this.pendingHandoffs = new PendingHandoffStore(storage);
    this.directCalls = new DirectCallStore(storage);
    this.startedAt = Date.parse(meta.createdAt);
    this.maxResultBytes = config.MAX_FRAME_BYTES;
    // Each agent as the model sees it: its own tools and one transfer tool per handoff target.
    this.agents = new Map([...agents].map(([name, a]) => [name, withHandoffTools(a)]));
    this.modelProblem = providerUnavailable(env, meta.provider);
    const provider = this.providerFor(meta.agent);
    const agentTools: Record<string, Record<string, ToolPolicy>> = {};
    const transfers: Record<string, string> = {};
    const arrival: Record<string, Arrival> = {};
    const links: Record<string, string> = {};
    const capabilities: Record<string, ModelCapabilities> = {};
    for (const [name, a] of this.agents) {
      agentTools[name] = toolPolicies(a, config.TOOL_TIMEOUT_MS);
      for (const target of a.handoffs ?? []) transfers[handoffToolName(target)] = target;
      arrival[name] = a.arrival ?? "announce";
      if (this.agents.size === 1) continue;
      const session = this.providerFor(name);
      if (session.sharedLinkKey !== undefined) links[name] = session.sharedLinkKey;
      capabilities[name] = session.capabilities;
    }
    const coreConfig = defaultConfig({
      sessionId: meta.sessionId,
      guards: arm?.guards ?? ALL_GUARDS,
      tools: agentTools[meta.agent] ?? {},
      agent: meta.agent,
      agentTools,
      handoffTools: transfers,
      agentArrival: arrival,
      agentLinks: links,
      agentCapabilities: capabilities,
      capabilities: provider.capabilities,
      idleTimeoutMs: config.IDLE_TIMEOUT_MS,
      modelTimeoutMs: config.MODEL_TIMEOUT_MS,
      utteranceQuietMs: config.UTTERANCE_QUIET_MS,
    });
    const traces = traceExport(config);
    if (traces !== null) {
      this.exporter = new OtlpExporter(
        traces,
        (m) => console.warn(`liveline: ${m}`),
        this.subrequests.fetcher("traces", (input, init) => fetch(input, init)),
        // Near the subrequest budget, a batch waits for nothing: it is dropped (and counted).
        () => this.subrequests.admit("traces"),
      );
      this.tracer = new TurnTracer(this.exporter, {
        sessionId: meta.sessionId,
        provider: meta.provider,
        agent: () => this.state.agent,
        model: () => this.model,
        usageOf: (turnId) => {
          const row = this.usage.ofTurn(turnId);
          if (row === null) return null;
          const price = priceFor(row.model === "" ? this.model : row.model, this.prices);
          return { usage: row.usage, cost: costOf(row.usage, price) };
        },
        policies: () => agentTools[this.state.agent] ?? {},
      });
    }
    this.caps = capsOf(agents.get(meta.agent), meta);
    coreConfig.limits = coreLimits(this.caps, this.startedAt);
    this.recordings = new SessionRecordings({
      env,
      config,
      meta,
      choice: recordingChoice(
        agents.get(meta.agent)?.recording,
        meta.recording,
        config.RECORDING_MAX_BYTES,
      ),
      audio: provider.audio,
      phoneCall: phoneCallOf(env, meta.metadata) !== null,
      model: provider.model,
      capabilities: provider.capabilities,
      trace: (kind, detail) => this.store.trace([{ at: Date.now(), kind, detail }]),
      warn: (m) => console.warn(`liveline: ${m}`),
      track: (request) => this.subrequests.track("recording", request),
    });
    const { audio: audioRecorder, wire: wireRecorder } = this.recordings;
    const targetOf = (name: string) =>
      this.agents.has(name) ? { target: this.providerFor(name), spec: this.specOf(name) } : null;
    this.link = new UpstreamLink(meta.agent, targetOf, {
      // A connection is set up with the agent's MCP tools listed so far (waited for briefly).
      prepare: (agent) => this.mcp?.ready(agent) ?? Promise.resolve(),
      attempting: (connecting) => this.subrequests.track("model", connecting),
      opened: () => this.interpreter.handleInput({ type: "upstream_opened" }),
      events: (events) => {
        for (const event of events) this.interpreter.handleInput({ type: "model", event });
      },
      protocolError: (message) =>
        this.store.trace([
          { at: Date.now(), kind: "UPSTREAM_CLOSED", detail: { protocolError: message } },
        ]),
      closed: (code, reason, fatal) =>
        this.interpreter.handleInput({
          type: "model",
          event: { type: "upstream_closed", code, reason, fatal },
        }),
      failed: (message, refused) =>
        this.interpreter.handleInput({ type: "upstream_failed", message, refused }),
      callEnded: (serviceSessionId) => this.callEnded(serviceSessionId),
      callSignals: (signals) => this.callWatcher?.signals(signals),
      callSetUp: (serviceSessionId, agent) => {
        this.directCalls.setAgent(serviceSessionId, agent);
        this.store.trace([{ at: Date.now(), kind: "CALL_AGENT", detail: { agent } }]);
      },
      wire: wireRecorder ?? undefined,
    });
    this.speech = new CarryStore(storage);
    this.toolTimeoutMs = config.TOOL_TIMEOUT_MS;
    // The naive relay carries nothing over a restart (it closes what was in flight).
    const recovered = recoverSession(
      this.store,
      coreConfig,
      connectedClients,
      Date.now(),
      arm === null
        ? { speech: this.speech, rerunTimeoutMs: (name) => this.rerunTimeoutMs(name) }
        : null,
    );
    for (const e of recovered.closing) this.broadcast(frameOf(e));
    this.interpreter = new SessionInterpreter(recovered.state, {
      log: {
        append: (events, frames, traces) => {
          this.store.append(events, frames, traces);
          this.tracer?.observe(traces);
          // A backend's pending handoff is kept until the handoff is in the log.
          if (events.some((e) => e.kind === "handoff")) this.pendingHandoffs.clear();
          // The session ended or idled: its closing record, once the step is done.
          for (const e of events)
            if (e.kind === "status" && (e.state === "ended" || e.state === "idle")) {
              const state = e.state;
              queueMicrotask(() => this.close(state));
              // Its MCP connections too (a server's notification stream would hold the object).
              this.mcp?.close();
            }
          if (this.directCall !== null) this.keepCallAttached(events);
          if (this.callWatcher !== null) watchCall(this.callWatcher, events);
        },
        readAfter: (seq) => this.store.readAfter(seq),
        framesAfter: (seq) => this.store.framesAfter(seq),
        lastSeq: () => this.store.lastSeq(),
        hasTextId: (textId) => this.store.hasTextId(textId),
        keepHandle: (handle, seq) => this.speech.keepHandle(handle, seq),
        keepSpeech: (transcript, at) => {
          this.speech.keep(transcript, at);
          if (transcript !== null && transcript !== "")
            this.store.trace([{ at, kind: "SPEECH_KEPT", detail: { chars: transcript.length } }]);
        },
        trace: (rows) => {
          this.store.trace(rows);
          this.tracer?.observe(rows);
        },
        addUsage: (turnId, usage) => {
          this.usage.add(turnId, usage, this.model);
          this.checkCostCap();
        },
      },
      clients: {
        broadcast: (frame, json) => {
          for (const client of this.sockets.all()) client.frame(frame, json);
          // A reply cut was heard only up to here.
          if (frame.type === "interrupted") audioRecorder?.cut();
          wireRecorder?.durable(json);
        },
        send: (clientId, frame) => this.sockets.byId(clientId)?.frame(frame),
        sendEncoded: (clientId, frames) => this.sockets.byId(clientId)?.replay(frames),
        audio: (pcm) => {
          for (const client of this.sockets.all()) client.audio(pcm);
        },
        closeAll: (code, reason) => {
          for (const client of this.sockets.all()) client.close(code, reason);
          this.dispose();
        },
      },
      model: this.link,
      tools: {
        run: (callId, name, args) => this.runTool(callId, name, args),
        abort: (callId, reason) => {
          this.tools.get(callId)?.abort(reason);
          this.tools.delete(callId);
        },
      },
      timers: this.timers,
      clock: Date.now,
      rebuild: (events) => this.contextOf(events),
      reportError: (message) => console.error(`liveline: ${message}`),
      superseded: (message) => this.standDown(message),
      tap: audioRecorder ?? undefined,
      stepping:
        wireRecorder === null
          ? undefined
          : (input) => {
              if (input.type === "client_connected")
                wireRecorder.connected(input.clientId, input.resumeFrom ?? null);
              else if (input.type === "client_disconnected") wireRecorder.left(input.clientId);
            },
    });
    // The duration cap ends the session even if nothing else wakes its object.
    this.armLimitAlarm();
    // An end the object did not live to record, or a record it did not live to copy.
    const closing = this.closings.read();
    if (this.state.ended && closing?.record.state !== "ended") this.close("ended");
    else if (this.closings.pending()) queueMicrotask(() => void this.closings.copy());
    // The agents' MCP servers list their tools; each listing gives the core their policies.
    this.mcp = new SessionMcp(this.agents, config.TOOL_TIMEOUT_MS, {
      trace: (kind, detail) => this.store.trace([{ at: Date.now(), kind, detail }]),
      fetch: this.subrequests.fetcher("mcp", (input, init) => fetch(input, init)),
      listed: (agent, tools) => {
        // The agent's next connection is set up with them.
        this.providers.delete(agent);
        this.interpreter.handleInput({ type: "tools_listed", agent, tools });
      },
    });
    // What a restart carried over goes on: calls run again with their key, and the carried
    // turn waits for the next connection (core/restart.ts).
    const { plan } = recovered;
    if (plan.rerun.length > 0 || plan.reoffered.length > 0 || plan.carriedTurn !== null)
      this.interpreter.handleInput({ type: "session_restored", rerun: plan.rerun });
    // A backend's handoff asked for before the object restarted, and not yet in the log.
    const pending = this.pendingHandoffs.read();
    if (pending !== null && this.agents.has(pending.agent) && pending.agent !== this.state.agent)
      this.interpreter.handleInput({
        type: "handoff_requested",
        to: pending.agent,
        reason: pending.reason,
      });
    else if (pending !== null) this.pendingHandoffs.clear();
    // A direct call that outlived the object's last run: its sideband is attached again,
    // once the object holds this session (the step's frames reach its sockets through it).
    const direct = this.directCalls.read();
    if (direct !== null && !this.state.ended)
      queueMicrotask(() => this.joinCall(direct.serviceSessionId, direct.agent ?? this.meta.agent));
    else if (direct !== null) this.directCalls.clear();
  }

  /**
   * A tool whose result the model takes without a word: the speaking agent's, else any
   * agent's (a workerd test replaces it for its control).
   */
  isSilentTool(name: string): boolean {
    const { config } = this.interpreter.state;
    const policy =
      policyOf(this.interpreter.state, name) ??
      Object.values(config.agentTools ?? {}).find((tools) => tools[name] !== undefined)?.[name];
    return policy?.followUp === "silent";
  }

  /** The conversation to seed a model with, from these events of the log. */
  private contextOf(events: readonly HistoryEvent[]): RebuiltContext {
    // A measurement arm seeds as it measures (the naive relay: as frameworks do).
    if (this.arm !== null) return this.arm.rebuild(events);
    const checked = checkedContext(rebuildContext(events, (name) => this.isSilentTool(name)));
    if (checked.problems.length > 0) {
      this.store.trace([
        { at: Date.now(), kind: "CONTEXT_INVALID", detail: { problems: checked.problems } },
      ]);
    }
    return checked.context;
  }

  /**
   * A device's direct call (WebRTC) with the service, for its SDP `offer`: created with the
   * server's key, set up as the session's agent and seeded with the conversation so far; the
   * session's model connection becomes the call's sideband. Whatever connection the session
   * held (its own, or an earlier call's sideband) is replaced: a turn in flight on it ends as
   * on any lost connection, and an earlier call is left to its device (not ended).
   */
  async placeCall(offer: string): Promise<DirectCallAnswer> {
    const calls = this.providerFor(this.state.agent).directCalls;
    if (calls?.create === undefined)
      return {
        refused: "unsupported",
        message: `this session's model (provider ${this.meta.provider}, ${this.model}) takes no direct WebRTC calls; GPT-Live does (provider gpt-live)`,
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
    const context = this.contextOf(since === null ? events : events.filter((e) => e.seq < since));
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
    const earlier = this.directCall;
    if (earlier !== null) this.leaveCall(earlier);
    this.directCalls.set(call.serviceSessionId, this.state.agent);
    this.joinCall(call.serviceSessionId, this.state.agent);
    return { answer: call };
  }

  /**
   * The model connection becomes the call's sideband, and the call joins the session as a
   * client (its device's, reached through the service): the core opens the connection for it
   * as for any client, and does not take the session for one nobody uses.
   */
  private joinCall(serviceSessionId: string, setUpAs: string): void {
    this.directCall = serviceSessionId;
    this.link.joinCall(serviceSessionId, setUpAs);
    this.interpreter.handleInput({
      type: "client_connected",
      clientId: callClient(serviceSessionId),
    });
  }

  private leaveCall(serviceSessionId: string): void {
    this.interpreter.handleInput({
      type: "client_disconnected",
      clientId: callClient(serviceSessionId),
    });
  }

  /** The call is over (its sideband refused): the session is its own again. */
  private callEnded(serviceSessionId: string): void {
    if (this.directCall === serviceSessionId) this.directCall = null;
    if (this.directCalls.read()?.serviceSessionId === serviceSessionId) this.directCalls.clear();
    this.leaveCall(serviceSessionId);
    // A SIP call's session is the call: it ends with it.
    this.callWatcher?.callOver();
  }

  /** SIP calls being accepted, by call id (a webhook delivered twice accepts once). */
  private readonly accepting = new Map<string, Promise<SipAcceptAnswer>>();

  /**
   * A call that reached the service by SIP (its webhook named it): accepted as the session's
   * agent, and the session's model connection becomes its sideband; the model is told the
   * caller is on the line. A call accepted already (a webhook the service delivered again) is
   * not accepted twice.
   */
  acceptCall(callId: string): Promise<SipAcceptAnswer> {
    if (this.directCalls.read()?.serviceSessionId === callId)
      return Promise.resolve({ accepted: true });
    const running = this.accepting.get(callId);
    if (running !== undefined) return running;
    const accepting = this.acceptOnce(callId).finally(() => this.accepting.delete(callId));
    this.accepting.set(callId, accepting);
    return accepting;
  }

  private async acceptOnce(callId: string): Promise<SipAcceptAnswer> {
    if (this.modelProblem !== null)
      return { refused: "model_unavailable", message: this.modelProblem };
    const accept = this.providerFor(this.state.agent).directCalls?.accept;
    if (accept === undefined)
      return {
        refused: "unsupported",
        message: `this session's model (provider ${this.meta.provider}, ${this.model}) takes no SIP calls; OpenAI Realtime does (provider openai)`,
      };
    try {
      await this.subrequests.track("model", accept(callId));
    } catch (err) {
      if (!(err instanceof DirectCallRefused)) throw err;
      return { refused: "service_failed", message: err.message };
    }
    if (this.state.ended)
      return { refused: "ended", message: "the session ended while the call was accepted" };
    const earlier = this.directCall;
    if (earlier !== null) this.leaveCall(earlier);
    this.directCalls.set(callId, this.state.agent);
    this.joinCall(callId, this.state.agent);
    // The caller waits to be greeted, as on a carrier's call.
    this.sayAsCaller(CALL_CONNECTED);
    return { accepted: true };
  }

  /** A line to the model as the direct call's caller's (a SIP call's keys, its line's notes). */
  sayAsCaller(text: string): void {
    const call = this.directCall;
    if (call === null || this.state.ended) return;
    this.interpreter.handleInput({ type: "client_text", clientId: callClient(call), text });
  }

  /** A client tool's outcome, as the direct call's (a phone has no app to run it). */
  callToolResult(callId: string, error: string): void {
    const call = this.directCall;
    if (call === null || this.state.ended) return;
    this.interpreter.handleInput({
      type: "client_tool_result",
      clientId: callClient(call),
      callId,
      error,
    });
  }

  /** The call control of the session's provider (a SIP call's REFER and hang-up), or null. */
  callControl(): DirectCalls | null {
    const calls = this.providerFor(this.state.agent).directCalls;
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
  private keepCallAttached(events: readonly HistoryEvent[]): void {
    const call = this.directCall;
    if (call === null || !events.some((e) => e.kind === "status" && e.state === "idle")) return;
    queueMicrotask(() => {
      if (this.directCall === call && !this.state.ended)
        this.interpreter.handleInput({ type: "client_connected", clientId: callClient(call) });
    });
  }

  /**
   * Hands the session to `to` once nothing is in flight (the app's backend or a server tool
   * asks); why it cannot, or null.
   */
  requestHandoff(to: string, reason: string): HandoffAnswer {
    if (!this.agents.has(to))
      return {
        problem: `this session cannot hand off to "${to}"; its agents: ${[...this.agents.keys()].join(", ")}`,
      };
    const transfer = this.state.pendingHandoff;
    if (transfer?.callId !== undefined) {
      // The model's transfer is answered (the model and the clients were told): it stands.
      if (transfer.to === to) return { pending: true };
      return {
        problem: `the model's transfer to "${transfer.to}" (call ${transfer.callId}) is pending; hand off again once it has taken effect`,
      };
    }
    if (to === this.state.agent && this.state.pendingHandoff === null)
      return { problem: `"${to}" is already the session's agent` };
    // To the agent that speaks now, with a handoff pending: that handoff is called off.
    const revoked = to === this.state.agent;
    if (revoked) this.pendingHandoffs.clear();
    else this.pendingHandoffs.set(to, reason);
    this.interpreter.handleInput({ type: "handoff_requested", to, reason });
    return { pending: !revoked };
  }

  /** How the session's audio is encoded, both ways (its model connection's). */
  get audio(): AudioEncoding {
    return this.providerFor(this.state.agent).audio;
  }

  /** The model the session's current agent asks its provider for. */
  get model(): string {
    return this.providerFor(this.state.agent).model;
  }

  /** The provider session of an agent of this session (its setup: instructions, tools, voice). */
  private providerFor(name: string): ProviderSession {
    const cached = this.providers.get(name);
    if (cached) return cached;
    if (this.modelProblem !== null) {
      const unreachable = unreachableModel(this.modelProblem);
      this.providers.set(name, unreachable);
      return unreachable;
    }
    const provider = providerSession(this.meta.provider, {
      env: this.env,
      sessionId: this.meta.sessionId,
      agent: this.specOf(name),
      metadata: this.meta.metadata,
      // A phone call's audio is its carrier's (G.711 μ-law): a provider that takes it gets it
      // untouched.
      audio: phoneCallOf(this.env, this.meta.metadata)?.audio ?? "pcm16",
      wireArm: this.arm?.wire ?? null,
    });
    this.providers.set(name, provider);
    return provider;
  }

  /** An agent's tools: its own, and those its MCP servers listed. */
  private toolsOf(name: string): readonly ToolDefinition[] {
    const own = (this.agents.get(name) ?? NO_AGENT).tools;
    const listed = this.mcp?.toolsOf(name) ?? [];
    return listed.length === 0 ? own : [...own, ...listed];
  }

  /** An agent of this session as its model connection is set up for it. */
  private specOf(name: string): AgentSpec {
    const agent = this.agents.get(name) ?? NO_AGENT;
    return {
      systemInstruction: agent.instructions,
      tools: this.toolsOf(name),
      voice: agent.voice,
      model: agent.model,
      language: agent.language,
    };
  }

  private get state(): CoreState {
    return this.interpreter.state;
  }

  /** The last durable seq of the session (what `ready.lastSeq` says). */
  /** The agent speaking now (its definition). */
  currentAgent(): AgentDefinition {
    return this.agents.get(this.state.agent) ?? NO_AGENT;
  }

  lastSeq(): number {
    return this.state.nextSeq - 1;
  }

  /** GET /history's JSON body, straight from the log: a page, or the whole log streamed. */
  history(read: LogRead): ReadableStream<Uint8Array> | string {
    if ("page" in read)
      return this.store.historyPage(this.meta.agent, read.page.after, read.page.limit);
    return this.store.historyStream(this.meta.agent);
  }

  /** GET /timeline's rows: a page of them (ms since the session started), with the next cursor. */
  timelinePage(after: number, limit: number): { rows: TimelineRow[]; next: string | null } {
    return this.store.timelinePage(this.startedAt, after, limit);
  }

  /** GET /timeline streamed: `head` (its fields before `rows`), the rows, `tail()` (after them). */
  timelineStream(head: string, tail: () => string): ReadableStream<Uint8Array> {
    return this.store.timelineStream(this.startedAt, head, tail);
  }

  /** A row of the shell's own in the timeline (what the core does not see). */
  trace(kind: TraceKind, detail: Record<string, unknown>): void {
    this.store.trace([{ at: Date.now(), kind, detail }]);
  }

  /** Timeline rows the cap dropped (the oldest). */
  timelineDropped(): number {
    return this.store.timelineDropped();
  }

  timeline(): { ms: number; kind: string; detail?: unknown }[] {
    return this.store
      .timeline()
      .map(({ at, kind, detail }) =>
        detail === undefined
          ? { ms: at - this.startedAt, kind }
          : { ms: at - this.startedAt, kind, detail },
      );
  }

  /** The shell is about to end the session, for this reason (its closing record says it). */
  endBy(reason: EndReason): void {
    this.endReason ??= reason;
  }

  /**
   * The session ended or its model connection idled: a closing record, kept in the session
   * and copied to the usage database (never waited on).
   */
  private close(state: "idle" | "ended"): void {
    // An idle after the end (none is expected) would only replace the end's record.
    if (state === "idle" && this.state.ended) return;
    const limit = this.state.limit;
    const endedBy: EndReason | null =
      state === "idle"
        ? null
        : (this.endReason ?? this.meta.endedBy ?? (limit !== null ? "limit" : "deleted"));
    if (endedBy !== null) this.ended(endedBy);
    const now = Date.now();
    const { turns: _, ...usage } = this.usage.totals();
    const record: ClosingRecord = {
      sessionId: this.meta.sessionId,
      agent: this.meta.agent,
      provider: this.meta.provider,
      model: this.model,
      state,
      endedBy,
      limit:
        endedBy === "limit" && limit !== null ? { limit: limit.limit, value: limit.value } : null,
      createdAt: this.meta.createdAt,
      closedAt: new Date(now).toISOString(),
      durationMs: now - this.startedAt,
      modelLiveMs: modelLiveMs(this.store.statusTimes(), now),
      usage,
      cost: this.cost(),
      turns: this.state.turnCount,
      toolCalls: this.state.toolCallCount,
      version: this.closings.nextVersion(),
    };
    this.closings.keep(record);
    if (state === "ended") {
      this.armLimitAlarm();
      this.recordings.finish();
    }
  }

  /**
   * The object's alarm: a closing record's copy that failed, or never ran, is tried again, and
   * the duration cap is looked at (a session no client or model holds open ends at its cap).
   */
  async onAlarm(): Promise<void> {
    this.alarm.fired();
    if (!this.state.ended && this.state.config.limits?.endsAt !== undefined)
      this.interpreter.handleInput({ type: "timer_fired", timer: "limit" });
    this.armLimitAlarm();
    await this.closings.copy();
  }

  /** The alarm at the duration cap, while the session runs and has not reached a cap. */
  private armLimitAlarm(): void {
    const endsAt = this.state.config.limits?.endsAt;
    if (endsAt !== undefined && !this.state.ended && this.state.limit === null)
      this.alarm.set("limit", endsAt);
    else this.alarm.clear("limit");
  }

  /** The object's alarm for a phone call's stream (session/call-reconnect.ts), or none. */
  callAlarm(at: number | null): void {
    if (at === null) this.alarm.clear("call");
    else this.alarm.set("call", at);
  }

  /** The latest closing record and whether the usage database holds it (null: none yet). */
  closingRecord(): { record: ClosingRecord; copy: ClosingCopy } | null {
    return this.closings.read();
  }

  /** The session as an operator sees it (GET /v1/sessions/:id), but for its socket count. */
  describe(): Omit<SessionResource, "clients"> {
    return {
      sessionId: this.meta.sessionId,
      createdAt: this.meta.createdAt,
      agent: this.state.agent,
      provider: this.meta.provider,
      model: this.model,
      connection: this.state.ended ? "ended" : this.state.upstream.phase,
      lastSeq: this.lastSeq(),
      usage: this.usage.totals(),
      ...this.report(),
      closing: this.closings.read(),
    };
  }

  /**
   * The cost cap, measured where the cost is known: after each usage report. The core hears
   * of it once, after the step that reported it (never from inside a step).
   */
  private checkCostCap(): void {
    const max = this.caps.maxCostUsd;
    if (max === undefined || this.costCapReached) return;
    const cost = this.cost();
    if (cost.status === "unpriced" || cost.usd < max) return;
    this.costCapReached = true;
    queueMicrotask(() =>
      this.interpreter.handleInput({ type: "limit_reached", limit: "cost", value: cost.usd }),
    );
  }

  /** The session's cost so far, each turn priced by the model that reported its usage. */
  private cost(): Cost {
    const priceOf = (model: string) => priceFor(model === "" ? this.model : model, this.prices);
    return sumCosts(
      this.usage.byTurn().map((row) => costOf(row.usage, priceOf(row.model))),
      costOf(emptyUsage(), priceOf(this.model)),
    );
  }

  /** What the session cost and how fast it answered, per turn and in total. */
  report(): SessionReport {
    return sessionReport(this.usage.byTurn(), this.timeline(), this.model, (model) =>
      priceFor(model, this.prices),
    );
  }

  stats(databaseBytes: number, objectStartedAt: number): SessionStats {
    return {
      events: this.store.lastSeq(),
      objectStartedAt,
      transactions: this.interpreter.transactions,
      modelEvents: this.interpreter.modelEvents,
      databaseBytes,
      stateBytes: JSON.stringify({ ...this.state, config: null, archive: null }).length,
      callsInState: Object.keys(this.state.calls).length,
      audioPassed: { ...this.interpreter.passed },
      counters: { ...this.state.counters },
      ...(this.exporter === null ? {} : { traces: { ...this.exporter.counts } }),
      subrequests: this.subrequests.stats(),
    };
  }

  /**
   * The timeout of a run again of the tool `name` after a restart, if it may run again with
   * its key (its definition's `idempotent`, or its MCP server's policy), else null. Any agent
   * of the session's: the restart decides before it knows which one speaks.
   */
  private rerunTimeoutMs(name: string): number | null {
    for (const agent of this.agents.values()) {
      const own = agent.tools.find((t) => t.name === name && t.runOn === "server");
      if (own !== undefined)
        return own.idempotent === true ? (own.timeoutMs ?? this.toolTimeoutMs) : null;
      const mcp = mcpRerunTimeoutMs(agent.mcp ?? [], name, this.toolTimeoutMs);
      if (mcp !== undefined) return mcp;
    }
    return null;
  }

  private async runTool(
    callId: string,
    name: string,
    args: Record<string, unknown>,
  ): Promise<ToolOutcome | null> {
    const controller = new AbortController();
    this.tools.set(callId, controller);
    const speaking = this.state.agent;
    // A call run again right after a restart may be an MCP server's whose tools are still
    // being listed: it waits for them (bounded, as a connection's setup does).
    if (!this.toolsOf(speaking).some((t) => t.name === name))
      await (this.mcp?.ready(speaking) ?? Promise.resolve());
    if (this.tools.get(callId) !== controller) return null; // aborted meanwhile
    const own = this.agents.get(speaking) ?? NO_AGENT;
    const agent = { ...own, tools: this.toolsOf(speaking) };
    const outcome = await runServerTool(
      agent,
      name,
      args,
      {
        signal: controller.signal,
        sessionId: this.meta.sessionId,
        env: this.env,
        metadata: this.meta.metadata,
        agent: this.state.agent,
        callId,
        idempotencyKey: idempotencyKey(this.meta.sessionId, callId),
        handoff: (to, reason = "") => {
          const answer = this.requestHandoff(to, reason);
          if ("problem" in answer) throw new Error(answer.problem);
        },
        call: this.phoneCall(),
        progress: (update) => this.progress(callId, controller, update),
      },
      this.maxResultBytes,
    );
    this.progressAt.delete(callId);
    if (this.tools.get(callId) !== controller) return null; // aborted: the core settled it
    this.tools.delete(callId);
    return outcome;
  }

  /** The phone call as tools see it: a transfer asked for is the carrier's REST call (counted). */
  private phoneCall(): PhoneCall | null {
    const call = this.call;
    if (call === null) return null;
    return {
      ...call,
      transfer: (number) => {
        call.transfer(number);
        this.subrequests.count("carrier");
      },
    };
  }

  /** A running call's progress, passed to the core at most once a second (the first at once). */
  private progress(callId: string, controller: AbortController, update: ToolProgress): void {
    if (this.tools.get(callId) !== controller || !Number.isFinite(update.progress)) return;
    const now = Date.now();
    if (now - (this.progressAt.get(callId) ?? Number.NEGATIVE_INFINITY) < 1_000) return;
    this.progressAt.set(callId, now);
    // Near the subrequest budget a report waits for nothing: the call's outcome still comes.
    if (!this.subrequests.admit("progress")) return;
    this.interpreter.handleInput({
      type: "tool_progress",
      callId,
      progress: update.progress,
      ...(update.total === undefined ? {} : { total: update.total }),
      ...(typeof update.message === "string" ? { message: update.message.slice(0, 500) } : {}),
    });
  }

  private broadcast(frame: ServerFrame): void {
    for (const client of this.sockets.all()) client.frame(frame);
  }

  /** Stops timers and tools, closes the model connection (the object is going away). */
  /**
   * Another instance of the object writes the session's log now (a restart, and this one still
   * ran: local wrangler dev reloads so). This one lets go of everything: its clients reconnect
   * (1012) and resume from what they saw, on the instance that writes; its model connection,
   * tools and timers stop here, and its recording is left as a crash leaves it.
   */
  private standDown(message: string): void {
    console.warn(`liveline: session ${this.meta.sessionId} stands down: ${message}`);
    for (const client of this.sockets.all())
      client.close(CLOSE_SERVICE_RESTART, "the session moved to a new instance: reconnect");
    this.timers.clearAll();
    for (const c of this.tools.values()) c.abort("session moved");
    this.tools.clear();
    this.link.close("session moved");
    this.mcp?.close();
    this.stoodDown();
  }

  dispose(): void {
    this.timers.clearAll();
    for (const c of this.tools.values()) c.abort("session closed");
    this.tools.clear();
    this.link.close("session closed");
    this.mcp?.close();
    void this.tracer?.flushNow();
    this.recordings.finish();
  }
}

/** An end no one needs to hear of (a session made outside an object: tests). */
function ignoreEnd(): void {}

/** A stand-down no object needs to hear of (a session made outside an object: tests). */
function ignoreStandDown(): void {}

/** The client id a direct call joins its session as (it has no socket: frames to it go nowhere). */
/** What the log tells a SIP call's line: each turn's end, each client tool asked. */
function watchCall(watcher: CallWatcher, events: readonly HistoryEvent[]): void {
  for (const e of events) {
    if (e.kind === "turn_complete" || e.kind === "interrupted") watcher.turnEnded();
    else if (e.kind === "tool_call" && e.runOn === "client")
      watcher.clientToolCall(e.callId, e.name);
  }
}

function callClient(serviceSessionId: string): string {
  return `webrtc:${serviceSessionId}`;
}
