import type { RecordingOptions, SessionLimitOptions, SessionOptions } from "../agents/define.js";
import type { ClosingCopy, ClosingRecord, EndReason } from "../metering/closing-record.js";
import type { Cost } from "../metering/cost.js";
import type { LatencySummary } from "../metering/latency.js";
import type { TurnReport } from "../metering/session-report.js";
import type { ProviderName } from "../provider-registry.js";
import type { ExportCounts } from "../telemetry/exporter.js";
import type { UsageTotals } from "../vocabulary/model.js";

export type { UsageTotals } from "../vocabulary/model.js";

/** A handoff request's answer: pending (or, back to the current agent, a pending one revoked). */
export type HandoffAnswer = { pending: boolean } | { problem: string };

/** A session's life as the routes see it: never created, open, or ended with `DELETE`. */
export type SessionLifecycle = "unknown" | "open" | "ended";

/** What `init` records about a new session. */
export interface SessionInit {
  sessionId: string;
  agent: string;
  provider: ProviderName;
  metadata: Record<string, unknown>;
  /** Per-session options, already checked against what the agent allows. */
  options: SessionOptions;
  /** The session's own caps (within the agent's; the agent's apply where it asks none). */
  limits?: SessionLimitOptions | undefined;
  /** What its creator asked to record, over its agent's `recording` (absent: the agent's). */
  recording?: SessionRecording | undefined;
  /** ISO 8601. */
  createdAt: string;
}

/** A session's own recording choice (POST /v1/sessions `recording`): over its agent's. */
export type SessionRecording = Pick<RecordingOptions, "audio" | "wire" | "maxBytes">;

/** One row of `GET /v1/sessions/:id/timeline`. */
export interface TimelineRow {
  /** Milliseconds since the session started. */
  ms: number;
  /** USER, MODEL_TEXT, TOOL_CALL, TOOL_RESPONSE, TURN_COMPLETE, SUPPRESSED, … */
  kind: string;
  detail?: unknown;
}

/** What the session object has done, for operators and benchmarks (an optional extension). */
export interface SessionStats {
  /** Durable events in the log. */
  events: number;
  /**
   * When this instance of the session's object was constructed (epoch ms): a later value
   * than before means the object left memory (hibernated or evicted) and was rebuilt.
   */
  objectStartedAt: number;
  /** Log transactions (one per input that recorded anything), since the object last started. */
  transactions: number;
  /** Model events taken in since the object last started (a decoded frame can carry several). */
  modelEvents: number;
  /** Size of the object's SQLite database in bytes. */
  databaseBytes: number;
  /**
   * What every step copies: the core's state as JSON (config and archive aside, which are
   * shared, never copied), in bytes, and the calls it holds.
   */
  stateBytes: number;
  callsInState: number;
  /**
   * Audio chunks that passed the open audio gate without a core step, each way, and pieces of
   * the user's transcription noted without one.
   */
  audioPassed: { client: number; model: number; transcripts: number };
  /**
   * This instance of the object falling behind: clients' audio it shed (session/audio-intake.ts)
   * and the most its load probe's timer was ever late, in ms.
   */
  overload?: { shedChunks: number; shedMs: number; worstLateMs: number };
  /** What the protections did: suppressed generations, duplicate calls and results, … */
  counters: Record<string, number>;
  /**
   * Spans this instance of the object sent to the collector, and dropped (the collector down
   * or refusing, a full queue); absent when no collector is configured.
   */
  traces?: ExportCounts;
  /** The subrequests this instance of the object made (session/subrequests.ts). */
  subrequests?: SubrequestStats;
}

/** What a session's object asked of other services: each is one of Cloudflare's subrequests. */
export type SubrequestKind =
  | "model"
  | "call"
  | "mcp"
  | "traces"
  | "usage"
  | "carrier"
  /** A recording's part, manifest or listing (R2). */
  | "recording";
/** What waits when the budget is near: dropped (and counted) rather than sent. */
export type DeferrableWork = "traces" | "progress";

export interface SubrequestStats {
  /** SUBREQUEST_BUDGET. */
  budget: number;
  /** Every subrequest since the object started, and by what it was for. */
  total: number;
  byKind: Record<SubrequestKind, number>;
  /** Attempts waiting for their response headers now, and the most there ever were at once. */
  waiting: number;
  mostWaiting: number;
  /** What waited and was dropped because the budget was near: trace batches, progress reports. */
  shed: Record<DeferrableWork, number>;
}

/** `GET /v1/sessions/:id`: the session's state, for operators (billing, alerting). */
export interface SessionResource {
  sessionId: string;
  /** ISO 8601. */
  createdAt: string;
  agent: string;
  provider: ProviderName;
  model: string;
  /** The model connection: closed (none yet, or closed while idle), connecting, live, reconnecting, failed, ended. */
  connection: string;
  /** Client sockets connected now. */
  clients: number;
  /** The last durable seq. */
  lastSeq: number;
  /** Token counts summed over the session (`turns`: turns that reported usage). */
  usage: UsageTotals & { turns: number };
  /** The session's cost at its models' prices ("unpriced" for a model with none). */
  cost: Cost;
  /** p50 / p95 of the turns' latencies. */
  latency: LatencySummary;
  /** Each turn's usage, cost and latencies, in order. */
  turns: TurnReport[];
  /**
   * The session's latest closing record (made when it ends or idles; null before), and
   * whether the usage database holds it (`written`), will (`pending`) or is not bound.
   */
  closing: { record: ClosingRecord; copy: ClosingCopy } | null;
}

export interface Timeline {
  sessionId: string;
  /** ISO 8601. */
  startedAt: string;
  rows: TimelineRow[];
  /** The oldest rows dropped by the cap (TIMELINE_MAX_ROWS), when there are any. */
  droppedRows?: number;
  stats?: SessionStats;
  /** A paged read's cursor of the next page, when there is one. */
  next?: string;
}

/**
 * How GET /history and /timeline read the log: `limit` rows after `after` (a cursor the last
 * page gave, 0 for the first), or the whole answer, streamed.
 */
export type LogRead = { page: { limit: number; after: number } } | { whole: "stream" };

/** Rows a paged read answers at most (`limit`), and when it names none. */
export const PAGE_MAX = 1_000;
export const PAGE_DEFAULT = 500;

/**
 * Headers by which the Worker hands a validated WebSocket upgrade to the session's object.
 * The Worker strips any client-sent copies, so the object can trust them.
 */
export const SESSION_HEADER = "x-liveline-session";
export const RESUME_FROM_HEADER = "x-liveline-resume-from";
/** Present ("batch") when the client asked for its replay in batches (`&replay=batch`). */
export const REPLAY_HEADER = "x-liveline-replay";
/** Present ("twilio") on a carrier's media stream: a phone call, bound by its `start`. */
export const CARRIER_HEADER = "x-liveline-carrier";

/**
 * A direct call placed for a device (`POST …/webrtc`): the service's answer to its offer, or
 * why no call was made — `ended`: the session has ended; `agent_unavailable`: its agent
 * cannot run; `unsupported`: its model takes no direct calls; `model_failed`: its model
 * connection failed (a client's input tries again first); `offer_refused`: the service
 * refused the device's offer; `service_failed`: the service refused or failed otherwise.
 * `message` says it in words, never with a credential.
 */
export type DirectCallAnswer =
  | { answer: { serviceSessionId: string; sdp: string } }
  | { refused: DirectCallRefusal; message: string };

export type DirectCallRefusal =
  | "ended"
  | "agent_unavailable"
  | "unsupported"
  | "model_failed"
  | "offer_refused"
  | "service_failed";

/** A SIP call accepted as the session's (its sideband attached), or why not. */
export type SipAcceptAnswer =
  | { accepted: true }
  | {
      refused:
        | "ended"
        | "agent_unavailable"
        | "model_unavailable"
        | "unsupported"
        | "service_failed";
      message: string;
    };

/** A call stream's token, or why none is given. */
export type CallTokenAnswer = { token: string } | { refused: "ended" | "in_progress" };

/**
 * What a call token is for: `answer`, the voice webhook's (the call's first stream);
 * `reconnect`, the carrier's reconnect webhook's (the same call again after its stream
 * closed: no second greeting; a storm of them ends the call). An object of an earlier release
 * takes no second argument and answers both as `answer` (it ended the call with its stream).
 */
export type CallTokenPurpose = "answer" | "reconnect";

/**
 * The RPC surface of a session's Durable Object (SessionObject), as the Worker calls it.
 * `fetch` takes the WebSocket upgrade, already authenticated by the Worker, with the
 * session id in `x-liveline-session` and, when the client asked for a replay, the
 * validated `resumeFrom` in `x-liveline-resume-from`.
 * history, timeline and end throw for a session that was never initialised: check
 * `exists()` first.
 */
export interface SessionApi {
  init(opts: SessionInit): Promise<void>;
  exists(): Promise<boolean>;
  /** Whether the session was never created, is open, or was ended (`DELETE`): one call. */
  lifecycle(): Promise<SessionLifecycle>;
  describe(): Promise<SessionResource>;
  /**
   * GET /history's JSON (session/history-reads.ts): a page (`read.page`), or the whole log,
   * streamed a page of rows at a time. An object on older code ignores `read` and answers the
   * whole log as one string: the route takes every one of these.
   */
  history(read?: LogRead): Promise<ReadableStream<Uint8Array> | string>;
  /**
   * GET /timeline: without `read`, the whole answer as an object (what a Worker on older code
   * asks for); `read.page` a page of it, `read.whole` the whole answer as a stream of JSON.
   */
  timeline(read?: LogRead): Promise<Timeline | ReadableStream<Uint8Array>>;
  /**
   * Hands the session to another of its agents once the current turn has ended; why it cannot
   * (an agent the session cannot reach, an ended session), or null.
   */
  handoff(agent: string, reason: string): Promise<HandoffAnswer>;
  /**
   * Ends the session: closes every socket with 1000; history stays readable. Idempotent (the
   * first end's `reason` stands; `deleted` when none is given).
   */
  end(reason?: EndReason): Promise<void>;
  /**
   * A single-use token a phone call's media stream binds to this session with (valid for
   * `ttlMs`; it cancels the call's earlier ones); refused when the session has ended or the
   * call's stream is already up (a replayed webhook must not get a way in), or (`reconnect`)
   * when the call's stream was connected again too often (the session ends). Compatible both
   * ways during a deploy: `purpose` is optional.
   */
  callToken(ttlMs: number, purpose?: CallTokenPurpose): Promise<CallTokenAnswer>;
  /**
   * Creates a direct call with the service for a device's WebRTC `offer` (with the server's
   * key) and makes the session's model connection that call's sideband; the service's answer
   * for the device. Throws for a session that was never initialised.
   */
  placeDirectCall(offer: string): Promise<DirectCallAnswer>;
  /** Accepts a SIP call that reached the model service (OpenAI's webhook named it). */
  acceptSipCall(callId: string): Promise<SipAcceptAnswer>;
  /** Fault injection for soak runs: the object dies as in a crash (FAULT_INJECTION=on). */
  crash(): Promise<void>;
  fetch(request: Request): Promise<Response>;
}
