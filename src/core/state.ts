import type { RunOn } from "../vocabulary/events.js";
import type {
  ModelCapabilities,
  ModelCommand,
  ToolPolicy,
  ToolResponse,
} from "../vocabulary/model.js";

/**
 * Each protection can be switched off, so that tests can show the failure it prevents
 * (the control arm) and so that `naive` mode reproduces what frameworks do in the field.
 */
export interface Guards {
  /** One turn_complete per user turn: held while a `speak` result is outstanding. */
  oneTurnComplete: boolean;
  /** Generations nobody asked for are not forwarded. */
  suppressUnsolicited: boolean;
  /** Late results: silent ones never prompt a generation; speak ones prompt exactly one. */
  resultScheduling: boolean;
  /** Empty replies after tool results are retried with a nudge. */
  emptyRetry: boolean;
  /** A call delivered twice runs once. */
  dedupeCalls: boolean;
  /** A second result for a call is refused. */
  dedupeResults: boolean;
  /**
   * A reply that repeats a recent one word for word, where a regeneration was possible, gives
   * its slot back, so the answer that follows still belongs to the turn.
   */
  detectRepeats: boolean;
  /**
   * A turn that waits only for the model to speak results it already has is carried over a
   * lost connection: the next connection is asked, once, to go on.
   */
  carryTurns: boolean;
}

export const ALL_GUARDS: Guards = {
  oneTurnComplete: true,
  suppressUnsolicited: true,
  resultScheduling: true,
  emptyRetry: true,
  dedupeCalls: true,
  dedupeResults: true,
  detectRepeats: true,
  carryTurns: true,
};

export const NO_GUARDS: Guards = {
  oneTurnComplete: false,
  suppressUnsolicited: false,
  resultScheduling: false,
  emptyRetry: false,
  dedupeCalls: false,
  dedupeResults: false,
  detectRepeats: false,
  carryTurns: false,
};

export interface CoreConfig {
  sessionId: string;
  tools: Readonly<Record<string, ToolPolicy>>;
  capabilities: ModelCapabilities;
  guards: Guards;
  /** After a model turn ends with a `speak` result unanswered, how long a follow-up may take to start. */
  followUpGraceMs: number;
  maxEmptyRetries: number;
  nudgeText: string;
  /** Close the model connection after this long without activity (0: never). */
  idleTimeoutMs: number;
  /**
   * Reconnect policy, the same for every kind of failure (refused, accepted then closed,
   * silent): backoff base * 2^attempt, capped, with jitter; after maxReconnectAttempts
   * failures in a row, or reconnectBudget opens within reconnectWindowMs, liveline gives up
   * (a visible upstream_unavailable error) and opens again only when a client sends input.
   */
  reconnectBaseMs: number;
  reconnectMaxMs: number;
  maxReconnectAttempts: number;
  reconnectBudget: number;
  reconnectWindowMs: number;
  /** A connection that stays up this long counts as healthy: the failure count starts over. */
  healthyAfterMs: number;
  /** A connection with no setup_complete this long after it was opened has failed (silent). */
  connectTimeoutMs: number;
  /** Reconnect this long before a `goAway` deadline at the latest. */
  goAwayMarginMs: number;
  /**
   * The turn watchdog: a turn that waits on a model silent this long (since its last sign of
   * life, or the input it owes an answer to) is nudged within the empty-reply budget, then
   * ended with a `model_timeout` error. 0: off (only to show what it prevents).
   */
  modelTimeoutMs: number;
  /** The opening-words judgement that issue 8 removed; only for the liveness control. */
  legacyOpeningCheck?: boolean | undefined;
  audio: { inputRate: number; outputRate: number };
  /** Client audio held while the model connection is not set up, at most (oldest dropped). */
  heldAudioMaxBytes: number;
}

export const DEFAULT_NUDGE =
  "Please continue: answer the user now, using the tool results you have received.";

export function defaultConfig(
  overrides: Partial<CoreConfig> & Pick<CoreConfig, "sessionId" | "tools">,
): CoreConfig {
  return {
    capabilities: {
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
      silentHonoured: true,
    },
    guards: ALL_GUARDS,
    followUpGraceMs: 1500,
    maxEmptyRetries: 2,
    nudgeText: DEFAULT_NUDGE,
    idleTimeoutMs: 0,
    reconnectBaseMs: 250,
    reconnectMaxMs: 8000,
    maxReconnectAttempts: 6,
    reconnectBudget: 10,
    reconnectWindowMs: 60_000,
    healthyAfterMs: 10_000,
    connectTimeoutMs: 15_000,
    goAwayMarginMs: 5000,
    modelTimeoutMs: 15_000,
    audio: { inputRate: 16000, outputRate: 24000 },
    // 5 s of 16 kHz PCM16: the first words of a session, or a short reconnect.
    heldAudioMaxBytes: 5 * 16000 * 2,
    ...overrides,
  };
}

export type CallStatus = "running" | "answered" | "cancelled";
/** How a result reached the model: inside the generation that called it, after it, or not at all. */
export type Delivery = "pending" | "in_generation" | "late" | "late_silent" | "withheld";

/**
 * Settled calls moved out of `calls` so that a step's cost does not grow with the session's
 * age: chunks, newest first, each never written after it is made (steps share them).
 */
export interface ArchivedCall {
  readonly status: Exclude<CallStatus, "running">;
  readonly runOn: CallState["runOn"];
}

export interface CallArchive {
  readonly chunk: ReadonlyMap<string, ArchivedCall>;
  readonly older: CallArchive | null;
}

export interface CallState {
  id: string;
  name: string;
  turnId: string;
  runOn: RunOn;
  followUp: "silent" | "speak";
  status: CallStatus;
  delivery: Delivery;
  /** Calls the model issued together; their speak results go back together, as one input. */
  batch: string;
  /** A speak result waiting for the rest of its batch. */
  held?: ToolResponse | undefined;
}

/** How far the model has answered a turn (what a generation's content changes). */
export type TurnProgress = Pick<
  TurnState,
  "hasContent" | "resultsSinceContent" | "speakSinceContent" | "emptyRetries" | "contentSinceAsk"
>;

/** The logical user turn: open from the user's input until its one turn end. */
export interface TurnState {
  id: string;
  /** The seq of the turn's `user` event. */
  userSeq: number;
  source: "text" | "audio";
  /** The model ended its latest generation for this turn. */
  modelEnded: boolean;
  hasContent: boolean;
  /** Tool results delivered to the model since its last content, expecting a reply. */
  resultsSinceContent: number;
  speakSinceContent: boolean;
  emptyRetries: number;
  /** When the turn last sent the model something it owes an answer to (input, results, nudge). */
  askedAt: number;
  /** The model said something for this turn since then. */
  contentSinceAsk: boolean;
  /**
   * Slots of this turn in `expected` that may never be filled: what a watchdog nudge
   * replaced. The turn does not wait for them; if the model was slow rather than silent, the
   * generation it still sends fills one (while the turn is open) or is absorbed (after).
   */
  optionalSlots: number;
  /**
   * Carried over a lost model connection (see closeTurnOnUpstreamLoss): `pending` until the
   * next connection is live, `asked` once it was asked to go on.
   */
  carried?: "pending" | "asked" | undefined;
}

/**
 * A speak result went to the model while its generation ran, and the model ended that
 * generation without answering it: either the model got the result only after it had ended
 * its turn (the race) and a follow-up generation is on its way, or the reply is empty.
 * Until one of the two shows (a generation starts, or the grace time passes), new input is
 * held back, so that the follow-up cannot be taken for the answer to that input.
 */
export interface FollowUpWindow {
  turnId: string;
  /** Generations the window takes before it closes (a regeneration per late message). */
  absorb?: number | undefined;
  /**
   * Opened because the generation that took the turn's slot was not taken for its answer: it
   * repeated an earlier reply word for word, or it was empty.
   */
  gaveBack?: "repeat" | "empty" | undefined;
  /** The user spoke while it waited: the next generation answers the speech. */
  spokenOver?: boolean | undefined;
}

/** The model's current generation and whom it answers (null: nobody asked for it). */
export interface GenerationState {
  owner: string | null;
  /**
   * How it got its owner, so a regeneration can give the slot back. `absorbed`: it took the
   * slot of a turn that was interrupted before (its output is dropped).
   */
  claim: "expected" | "absorbed" | "grace" | "speech" | "naive" | "none";
  hasContent: boolean;
  /**
   * What the turn it was taken to answer had heard before it (content and results owed), so
   * that a generation found not to be the answer can be undone.
   */
  turnBefore?: TurnProgress | undefined;
  /** The model said it was interrupted (a barge-in): it was an answer, cut short. */
  interrupted: boolean;
  /** Input that can interrupt a generation (text, a nudge, audio) went out since it began. */
  inputSinceStart: boolean;
  /** Its text so far (bounded), to compare the whole reply with recent ones at its end. */
  text: string;
  /** Only with legacyOpeningCheck: its opening has been judged. */
  judged: boolean;
  /**
   * Speak results went to the model during this generation and it has said nothing since:
   * it may have ended its turn before they arrived, and then a follow-up is on its way.
   */
  unansweredSpeak: boolean;
  /**
   * Side-effect results went to a model that cannot take them quietly (blocking calls only)
   * during this generation, in this many messages, and it has said nothing since: had it
   * already ended its turn, it takes each message as new input and says its reply again. New
   * input waits until that shows.
   */
  unansweredSilent: number;
  /**
   * SILENT results sent during this generation since it last said something: a model true to
   * its record takes them quietly, one that ignores SILENT answers each with a regeneration.
   * They never hold input by themselves, but a window held for other reasons absorbs them.
   */
  unansweredQuiet: number;
}

/**
 * `failed`: liveline gave up on the model connection (a client's next input opens it again);
 * a session whose model refused it for good (1007/1008) has ended instead.
 */
export type UpstreamPhase = "closed" | "connecting" | "live" | "reconnecting" | "failed";

export interface UpstreamState {
  phase: UpstreamPhase;
  /** The latest resumable handle, if any. */
  handle: string | null;
  /** We opened the current connection with `handle` (a 1007 then means: rebuild instead). */
  resumingWith: string | null;
  /**
   * Failed connections in a row (a connection that stayed up healthyAfterMs, or that served
   * a turn, resets it).
   */
  attempts: number;
  goingAway: boolean;
  /** When the service said it closes a connection that is going away (goAway's timeLeft). */
  goAwayDeadline: number | null;
  /** When the current connection went live (null: not live). */
  liveSince: number | null;
  /** When connections were opened lately (within reconnectWindowMs), for the budget. */
  recentOpens: number[];
  /**
   * A flapping connection (live again after two or more failures in a row): its `live` is
   * not logged until it has stayed up healthyAfterMs, so a loop is one `reconnecting` entry.
   */
  flapping: boolean;
  /** The current connection has ended a model turn: it works, however soon it drops. */
  served: boolean;
  /**
   * Something was said to or by the model since `handle` was issued: resuming with it would
   * lose that (the service's handle covers the session up to when it was sent), so the next
   * connection is seeded from the log instead.
   */
  handleStale: boolean;
}

export interface Counters {
  suppressedGenerations: number;
  duplicateCalls: number;
  duplicateResults: number;
  unknownCallResults: number;
  emptyRetries: number;
  withheldResults: number;
  repeatedReplies: number;
  modelTimeouts: number;
}

export interface CoreState {
  config: CoreConfig;
  nextSeq: number;
  turnCount: number;
  batchCount: number;
  lastTurnId: string | null;
  clients: string[];
  upstream: UpstreamState;
  /** Commands waiting for the model connection to be live. */
  outbox: ModelCommand[];
  /**
   * The seq of the user event whose text waits in the outbox (the earliest): a context
   * rebuilt for the new connection stops before it, or the model would get it twice.
   */
  outboxSince: number | null;
  /** Audio bytes in the outbox, and what the bound dropped (oldest first) since it last emptied. */
  outboxAudio: { bytes: number; droppedChunks: number; droppedBytes: number };
  /**
   * Generations the model owes, oldest first, each with the turn it answers (a user input,
   * a late `speak` result, a nudge). null: the turn it answered was interrupted, so what
   * that generation says is dropped.
   */
  expected: Array<string | null>;
  followUpWindow: FollowUpWindow | null;
  /** Input held back while the follow-up window is open, with the turn it opens. */
  held: Array<{ command: ModelCommand; owner: string }>;
  turn: TurnState | null;
  generation: GenerationState | null;
  /** The running calls, and the most recently settled ones (a bounded number). */
  calls: Record<string, CallState>;
  /** How older settled calls ended, for a late duplicate: never copied, never written. */
  archive: CallArchive | null;
  /**
   * A line typed while the user's speech waited for its answer: held until that answer opens
   * its voice turn (or a grace passes), so the speech's answer is not taken for the line's.
   */
  heldLine: string | null;
  /** The user spoke since the last turn opened (transcription, VAD, audio_end). */
  speechDetected: boolean;
  inputTranscript: string;
  /** Recent whole replies (normalised), to recognise a regenerated one. */
  recentReplies: string[];
  /** Until when a model that ignores SILENT could still answer a silent result by regenerating. */
  regenUntil: number;
  /** When the model last showed life (any event on the connection). */
  lastModelSignAt: number;
  /** When a client last streamed audio (a voice barge-in needs some). */
  lastClientAudioAt: number;
  /** The turn watchdog's timer is set (it re-arms itself lazily). */
  watchdogArmed: boolean;
  counters: Counters;
  ended: boolean;
  /** When anything last happened, for the idle timer. */
  lastActivityAt: number;
  idleArmed: boolean;
}

export function initialState(config: CoreConfig, lastSeq = 0, turnCount = 0): CoreState {
  return {
    config,
    nextSeq: lastSeq + 1,
    turnCount,
    batchCount: 0,
    lastTurnId: turnCount > 0 ? `t${turnCount}` : null,
    clients: [],
    upstream: {
      phase: "closed",
      handle: null,
      resumingWith: null,
      attempts: 0,
      goingAway: false,
      goAwayDeadline: null,
      liveSince: null,
      recentOpens: [],
      flapping: false,
      served: false,
      handleStale: false,
    },
    outbox: [],
    outboxSince: null,
    outboxAudio: { bytes: 0, droppedChunks: 0, droppedBytes: 0 },
    expected: [],
    followUpWindow: null,
    held: [],
    turn: null,
    generation: null,
    calls: {},
    archive: null,
    heldLine: null,
    speechDetected: false,
    inputTranscript: "",
    recentReplies: [],
    regenUntil: 0,
    lastModelSignAt: 0,
    lastClientAudioAt: 0,
    watchdogArmed: false,
    counters: {
      suppressedGenerations: 0,
      duplicateCalls: 0,
      duplicateResults: 0,
      unknownCallResults: 0,
      emptyRetries: 0,
      withheldResults: 0,
      repeatedReplies: 0,
      modelTimeouts: 0,
    },
    ended: false,
    lastActivityAt: 0,
    idleArmed: false,
  };
}
