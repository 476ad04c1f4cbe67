import type { AgentDefinition, PhoneCall } from "../agents/define.js";
import type { RelayArm } from "../app-options.js";
import { phoneCallOf } from "../carrier-registry.js";
import type { HandoffAnswer } from "../contracts/session-api.js";
import type { Env } from "../contracts/worker-env.js";
import type { TraceKind } from "../core/effects.js";
import { type CoreState, policyOf } from "../core/session-state.js";
import { checkedContext, rebuildContext } from "../history/rebuild.js";
import type { EndReason } from "../metering/closing-record.js";
import type { PriceOverrides } from "../metering/prices.js";
import { providerUnavailable } from "../provider-registry.js";
import type { OtlpExporter } from "../telemetry/exporter.js";
import { frameOf } from "../vocabulary/frames.js";
import type { HistoryEvent } from "../vocabulary/log-events.js";
import type { RebuiltContext } from "../vocabulary/model.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";
import type { Config } from "../worker-config.js";
import { CarryStore } from "./carry-store.js";
import type { ClientSockets } from "./client-sockets.js";
import { ClosingRecordStore } from "./closing-record-store.js";
import { DeadlineTimers } from "./deadline-timers.js";
import { DirectCallChannel } from "./direct-call.js";
import { DirectCallStore } from "./direct-call-store.js";
import { HandoffRequests } from "./handoff-requests.js";
import { HistoryStore } from "./history-store.js";
import { SessionInterpreter } from "./interpreter.js";
import { capsOf, coreLimits } from "./limits-of.js";
import type { SessionMeta } from "./meta.js";
import { ModelConnection } from "./model-connection.js";
import { PendingHandoffStore } from "./pending-handoff-store.js";
import { recordingChoice, SessionRecordings } from "./recordings.js";
import { recoverSession } from "./recover.js";
import { SessionAgents } from "./session-agents.js";
import { SessionAlarm } from "./session-alarm.js";
import { SessionClosing } from "./session-closing.js";
import { type LogFollowUps, SessionLog } from "./session-log.js";
import { SessionMcp } from "./session-mcp.js";
import { SessionRecord } from "./session-record.js";
import { SessionTools } from "./session-tools.js";
import type { CallWatcher } from "./sip-call.js";
import { SubrequestMeter } from "./subrequests.js";
import { sessionTracer, type TurnTracer } from "./turn-tracer.js";
import { UsageStore } from "./usage-store.js";

/** Close code for a client whose session moved to a new instance of its object: reconnect. */
const CLOSE_SERVICE_RESTART = 1012;

/** The object's running session, as its channels reach it (null: none yet, or none). */
export interface RunningSession {
  live: LiveSession | null;
}

/** The running session's surroundings, as its object gives them. */
export interface LiveSessionParts {
  storage: DurableObjectStorage;
  env: Env;
  config: Config;
  meta: SessionMeta;
  agents: ReadonlyMap<string, AgentDefinition>;
  /** The object's sockets: the session's clients port. */
  sockets: ClientSockets;
  connectedClients: string[];
  arm: RelayArm | null;
  /** The phone call this session is, as its tools see it (null: no call). */
  phoneCall: PhoneCall | null;
  /** The app's prices, by model id, over the shipped ones. */
  prices: PriceOverrides;
  /** The session ended (the core ended it: a cap), as the object's meta must say. */
  ended: (by: EndReason) => void;
  /** A SIP call's line: what the log and the call's sideband tell of the call (null: none). */
  callWatcher: CallWatcher | null;
  /** This running session stood down (another writer took its log): the object lets it go. */
  stoodDown: () => void;
}

/**
 * The running session inside its Durable Object: it makes the interpreter and its ports —
 * the log (session-log.ts), the object's sockets (client-sockets.ts), the model link, the
 * tools (session-tools.ts), timers — and the direct-call channel, the closing record and
 * the read side (history, timeline, stats). Every input, whatever its source, goes through
 * `interpreter.handleInput`, one at a time; the object's single thread and synchronous
 * SQLite make each step atomic. The ports are objects: a step's effects go from the
 * interpreter straight to them, never back through here.
 */
export class LiveSession implements LogFollowUps {
  /** Steps the core and carries out its effects: the shell hands it every input (handleInput). */
  readonly interpreter: SessionInterpreter;
  readonly meta: SessionMeta;
  private readonly store: HistoryStore;
  private readonly usage: UsageStore;
  /** The session's end and account: closing records, the alarm, the cost cap. */
  readonly closing: SessionClosing;
  /** The session as an operator reads it: history, timeline, description, stats. */
  readonly record: SessionRecord;
  /** The session's turns as traces, and their exporter (null: no collector is configured). */
  private readonly tracer: TurnTracer | null;
  private readonly exporter: OtlpExporter | null;
  private readonly agents: SessionAgents;
  private readonly link: ModelConnection;
  private readonly timers = new DeadlineTimers();
  private readonly tools: SessionTools;
  private readonly handoffs: HandoffRequests;
  private readonly startedAt: number;
  /** The measurement arm this session runs as (the naive relay), or null: liveline itself. */
  private readonly arm: RelayArm | null;
  /** Every subrequest the session makes, against SUBREQUEST_BUDGET (session/subrequests.ts). */
  private readonly subrequests: SubrequestMeter;
  private readonly sockets: ClientSockets;
  private readonly stoodDown: () => void;
  /** The session's direct call (WebRTC or SIP) whose sideband its model connection is. */
  readonly directCallChannel: DirectCallChannel;
  /** The session's recordings (its audio, its model wire), as its agent or creator asked. */
  readonly recordings: SessionRecordings;
  /**
   * Why this gateway cannot reach the session's model (its provider is no longer configured),
   * or null. Such a session keeps its record readable and never opens a model connection.
   */
  readonly modelProblem: string | null;

  constructor(parts: LiveSessionParts) {
    const { storage, env, config, meta, arm, sockets } = parts;
    this.meta = meta;
    this.arm = arm;
    this.sockets = sockets;
    this.stoodDown = parts.stoodDown;
    this.store = new HistoryStore(storage, arm === null, config.TIMELINE_MAX_ROWS);
    this.subrequests = new SubrequestMeter(config.SUBREQUEST_BUDGET, (kind, detail) =>
      this.trace(kind, detail),
    );
    this.usage = new UsageStore(storage);
    const alarm = new SessionAlarm(storage);
    const closings = new ClosingRecordStore(
      storage,
      alarm,
      env.USAGE_DB,
      (m) => console.warn(`liveline: ${m}`),
      () => this.subrequests.count("usage"),
    );
    this.startedAt = Date.parse(meta.createdAt);
    this.modelProblem = providerUnavailable(env, meta.provider);
    this.agents = new SessionAgents(
      parts.agents,
      env,
      meta,
      arm,
      this.modelProblem,
      config.TOOL_TIMEOUT_MS,
    );
    const provider = this.agents.providerFor(meta.agent);
    const coreConfig = this.agents.coreConfig(config);
    const caps = capsOf(parts.agents.get(meta.agent), meta);
    coreConfig.limits = coreLimits(caps, this.startedAt);
    this.closing = new SessionClosing(
      this,
      meta,
      this.store,
      this.usage,
      closings,
      alarm,
      caps,
      parts.prices,
      parts.ended,
      this.startedAt,
    );
    const agentTools = coreConfig.agentTools ?? {};
    const traced = sessionTracer(config, this.subrequests, {
      sessionId: meta.sessionId,
      provider: meta.provider,
      agent: () => this.state.agent,
      model: () => this.model,
      usageOf: (turnId) => this.closing.usageOf(turnId),
      policies: () => agentTools[this.state.agent] ?? {},
    });
    this.exporter = traced?.exporter ?? null;
    this.tracer = traced?.tracer ?? null;
    this.recordings = new SessionRecordings({
      env,
      config,
      meta,
      choice: recordingChoice(
        parts.agents.get(meta.agent)?.recording,
        meta.recording,
        config.RECORDING_MAX_BYTES,
      ),
      audio: provider.audio,
      phoneCall: phoneCallOf(env, meta.metadata) !== null,
      model: provider.model,
      capabilities: provider.capabilities,
      trace: (kind, detail) => this.trace(kind, detail),
      warn: (m) => console.warn(`liveline: ${m}`),
      track: (request) => this.subrequests.track("recording", request),
    });
    this.record = new SessionRecord(
      this,
      meta,
      this.store,
      this.usage,
      this.closing,
      this.subrequests,
      this.exporter,
      parts.prices,
      this.startedAt,
    );
    const { audio: audioRecorder, wire: wireRecorder } = this.recordings;
    sockets.serve({ audio: audioRecorder, wire: wireRecorder, dispose: () => this.dispose() });
    this.link = new ModelConnection(meta.agent, this.agents.targetOf, {
      // A connection is set up with the agent's MCP tools listed so far (waited for briefly).
      prepare: (agent) => this.agents.mcp?.ready(agent) ?? Promise.resolve(),
      attempting: (connecting) => this.subrequests.track("model", connecting),
      protocolError: (message) => this.trace("UPSTREAM_CLOSED", { protocolError: message }),
      callEnded: (serviceSessionId) => this.directCallChannel.ended(serviceSessionId),
      callSignals: (signals) => parts.callWatcher?.signals(signals),
      callSetUp: (serviceSessionId, agent) => this.directCallChannel.setUp(serviceSessionId, agent),
      wire: wireRecorder ?? undefined,
    });
    const directCallStore = new DirectCallStore(storage);
    this.directCallChannel = new DirectCallChannel(
      this,
      meta,
      this.agents,
      this.store,
      directCallStore,
      this.link,
      this.subrequests,
      parts.callWatcher,
    );
    this.tools = new SessionTools(
      this,
      this.agents,
      meta,
      env,
      this.subrequests,
      parts.phoneCall,
      config.MAX_FRAME_BYTES,
    );
    const speech = new CarryStore(storage);
    const pendingHandoffs = new PendingHandoffStore(storage);
    this.handoffs = new HandoffRequests(this, this.agents, pendingHandoffs);
    // The naive relay carries nothing over a restart (it closes what was in flight).
    const recovered = recoverSession(
      this.store,
      coreConfig,
      parts.connectedClients,
      Date.now(),
      arm === null ? { speech, rerunTimeoutMs: (name) => this.agents.rerunTimeoutMs(name) } : null,
    );
    for (const e of recovered.closing) for (const c of sockets.all()) c.frame(frameOf(e));
    this.interpreter = new SessionInterpreter(recovered.state, {
      log: new SessionLog(
        this.store,
        this.usage,
        speech,
        pendingHandoffs,
        this.tracer,
        parts.callWatcher,
        this,
        () => this.model,
      ),
      clients: sockets,
      model: this.link,
      tools: this.tools,
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
    this.link.deliverTo(this.interpreter);
    // The duration cap ends the session even if nothing else wakes its object; an end the
    // object did not live to record, or a record it did not live to copy.
    this.closing.started();
    // The agents' MCP servers list their tools; each listing gives the core their policies.
    this.agents.mcp = new SessionMcp(this.agents.byName, config.TOOL_TIMEOUT_MS, {
      trace: (kind, detail) => this.trace(kind, detail),
      fetch: this.subrequests.fetcher("mcp", (input, init) => fetch(input, init)),
      listed: (agent, tools) => {
        // The agent's next connection is set up with them.
        this.agents.forget(agent);
        this.interpreter.handleInput({ type: "tools_listed", agent, tools });
      },
    });
    // What a restart carried over goes on: calls run again with their key, and the carried
    // turn waits for the next connection (core/restart.ts).
    const { plan } = recovered;
    if (plan.rerun.length > 0 || plan.reoffered.length > 0 || plan.carriedTurn !== null)
      this.interpreter.handleInput({ type: "session_restored", rerun: plan.rerun });
    this.handoffs.resume();
    this.directCallChannel.resume();
  }

  // --- what the log's writes call for (LogFollowUps) ---------------------------------------

  statusLogged(state: "ended" | "idle"): void {
    queueMicrotask(() => this.closing.close(state));
    // Its MCP connections too (a server's notification stream would hold the object).
    this.agents.mcp?.close();
  }

  usageAdded(): void {
    this.closing.checkCostCap();
  }

  callIdled(): void {
    this.directCallChannel.idled();
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
  contextOf(events: readonly HistoryEvent[]): RebuiltContext {
    // A measurement arm seeds as it measures (the naive relay: as frameworks do).
    if (this.arm !== null) return this.arm.rebuild(events);
    const checked = checkedContext(rebuildContext(events, (name) => this.isSilentTool(name)));
    if (checked.problems.length > 0) this.trace("CONTEXT_INVALID", { problems: checked.problems });
    return checked.context;
  }

  /** A handoff the app's backend or a server tool asks for (see HandoffRequests). */
  requestHandoff(to: string, reason: string): HandoffAnswer {
    return this.handoffs.request(to, reason);
  }

  /** How the session's audio is encoded, both ways (its model connection's). */
  get audio(): AudioEncoding {
    return this.agents.providerFor(this.state.agent).audio;
  }

  /** The model the session's current agent asks its provider for. */
  get model(): string {
    return this.agents.providerFor(this.state.agent).model;
  }

  private get state(): CoreState {
    return this.interpreter.state;
  }

  /** The agent speaking now (its definition). */
  currentAgent(): AgentDefinition {
    return this.agents.get(this.state.agent);
  }

  /** The last durable seq of the session (what `ready.lastSeq` says). */
  lastSeq(): number {
    return this.state.nextSeq - 1;
  }

  /** A row of the shell's own in the timeline (what the core does not see). */
  trace(kind: TraceKind, detail: Record<string, unknown>): void {
    this.store.trace([{ at: Date.now(), kind, detail }]);
  }

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
    this.tools.abortAll("session moved");
    this.link.close("session moved");
    this.agents.mcp?.close();
    this.stoodDown();
  }

  /** Stops timers and tools, closes the model connection (the object is going away). */
  dispose(): void {
    this.timers.clearAll();
    this.tools.abortAll("session closed");
    this.link.close("session closed");
    this.agents.mcp?.close();
    void this.tracer?.flushNow();
    this.recordings.finish();
  }
}
