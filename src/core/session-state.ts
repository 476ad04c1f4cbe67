import type { LimitName, RunOn } from "../vocabulary/log-events.js";
import type {
  ModelCapabilities,
  ModelCommand,
  ToolPolicy,
  ToolResponse,
} from "../vocabulary/model.js";
import type { CoreConfig } from "./core-config.js";
import { initialSpeechClock, type SpeechClock } from "./speech-clock.js";

// The configuration lives in core-config.ts; importers of the state find it here too.
export * from "./core-config.js";

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

export interface PendingHandoff {
  to: string;
  reason: string;
  callId?: string | undefined;
  turnId?: string | undefined;
}

export interface CallState {
  id: string;
  name: string;
  turnId: string;
  runOn: RunOn;
  followUp: "silent" | "speak";
  status: CallStatus;
  delivery: Delivery;
  /**
   * Calls the model issued together; their speak results go back together, as one input.
   * `restored`: a call of the log that a restart closed or carried (RESTORED_BATCH).
   */
  batch: string;
  /** A speak result waiting for the rest of its batch. */
  held?: ToolResponse | undefined;
  /** The model was asked to say the call is still under way (its policy's `progress: "say"`). */
  progressSaid?: true | undefined;
}

/** The batch of every call a restore knows from the log (restore.ts). */
export const RESTORED_BATCH = "restored";

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
  source: "text" | "audio" | "model" | "limit";
  /** The model ended its latest generation for this turn. */
  modelEnded: boolean;
  hasContent: boolean;
  /** Tool results delivered to the model since its last content, expecting a reply. */
  resultsSinceContent: number;
  speakSinceContent: boolean;
  emptyRetries: number;
  /** Nudges sent for the turn in all (the retries in a row reset; these never do). */
  nudges: number;
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
  /** What the user said to open the turn (a line, or the speech's transcription). */
  said: string;
  /**
   * What the turn last asked the model after its own words (lines joined with it, results),
   * as inputs are compared (regeneration.ts `inputKey`); undefined: its words alone.
   */
  inputKey: string | undefined;
  /**
   * Nothing came within the grace for results the model got as its turn ended: its follow-up
   * is awaited until emptyReplyWaitMs after them (the `follow_up:` timer), then taken for an
   * empty reply unless the model shows it is working (turns.ts awaitFollowUp).
   */
  awaitingFollowUp: boolean;
  /** Watchdog periods waited, past the first, for a model that is slow rather than silent. */
  slowWaits: number;
  /** When the latest of those periods began (0: none). */
  waitedAt: number;
  /**
   * Carried over a lost model connection (see closeTurnOnUpstreamLoss): `pending` until the
   * next connection is live, `asked` once it was asked to go on.
   */
  carried?: "pending" | "asked" | undefined;
  /**
   * Carried over a restart as speech whose words were lost with the old instance: the next
   * connection asks the user, once, to say it again (restore.ts planRestart).
   */
  askAgain?: true | undefined;
  /**
   * Held open for the agent it is handed to, which speaks one line in it (its arrival is
   * `announce`): set when the old agent has finished, never changed after.
   */
  announce?: Readonly<{ from: string; to: string; reason: string }> | undefined;
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

export interface RecentAnswer {
  readonly input: string;
  readonly reply: string;
}

/** The model's current generation and whom it answers (null: nobody asked for it). */
export interface GenerationState {
  owner: string | null;
  /**
   * It answers the hidden line asking the model to say a call is still working: results
   * sent while it runs go as late ones, owed a generation of their own.
   */
  stillWorking?: true | undefined;
  /**
   * How it got its owner, so a regeneration can give the slot back. `absorbed`: it took the
   * slot of a turn that was interrupted before (its output is dropped).
   */
  claim: "expected" | "absorbed" | "grace" | "speech" | "initiative" | "naive" | "none";
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
  /**
   * The inputs it answers, as inputKey gives them: its turn's latest when it began, and results
   * sent into it while it ran.
   */
  answers: string[];
  /** Results sent into it that it has said nothing after yet (it may have ended without them). */
  resultsUnanswered?: string | undefined;
  /** It answers this turn, which the watchdog ended before it began: named when it speaks. */
  lateFor?: string | undefined;
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
  /**
   * A turnless model's reply began with words its voice has not said yet (`reply_ready`
   * `words`): the answer is still to be heard (cleared by the first of them, or the line wait).
   */
  wordsOwed?: boolean | undefined;
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

/** What a restarted session waits for before its next model connection opens. */
export interface AfterRestart {
  /** The calls carried over the restart (each settles once: a result, a timeout, a cancel). */
  readonly calls: readonly string[];
  /** A connection was asked for meanwhile: it opens once those calls have settled. */
  readonly openWanted: boolean;
}

/** A call carried over a restart is still running: the next model connection waits for it. */
export function restoredCallsRunning(s: CoreState): boolean {
  return s.afterRestart?.calls.some((id) => s.calls[id]?.status === "running") === true;
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
  lateAnswers: number;
  /** Model audio chunks not forwarded: their generation was cut or suppressed. */
  droppedModelAudio: number;
}

export interface CoreState {
  config: CoreConfig;
  nextSeq: number;
  turnCount: number;
  /** Tool calls the model made in the session (each id once). */
  toolCallCount: number;
  /**
   * A cap reached: `pending` until no turn is open and no call runs, then `goodbye` (the
   * model asked to close, in turn `turnId`), then the session ends.
   */
  limit: LimitState | null;
  /** The duration cap's timer is set (it is set once the model connection is live). */
  limitTimerSet: boolean;
  /**
   * The call the model was just asked to say is still working: the generation that takes the
   * next slot in line (`expected`) is that line. It names a slot, so it goes with the line:
   * cleared whenever the line is (a lost connection takes the ask with it).
   */
  stillWorkingAsked: string | null;
  /** Goodbye turns a cap opened (they are not counted against the turns cap). */
  limitTurns: number;
  batchCount: number;
  lastTurnId: string | null;
  clients: string[];
  upstream: UpstreamState;
  /**
   * The session's object restarted with calls still running (run again with their key, or a
   * client's left open): the next model connection waits for their outcomes, so that its
   * context holds each call with its one result (restart.ts). null: nothing waits.
   */
  afterRestart: AfterRestart | null;
  /** Commands waiting for the model connection to be live. */
  outbox: ModelCommand[];
  /**
   * The seq of the user event whose text waits in the outbox (the earliest): a context
   * rebuilt for the new connection stops before it, or the model would get it twice.
   */
  outboxSince: number | null;
  /**
   * Client audio sent to the live connection that the model has not shown it heard (the shell
   * keeps it, bounded by sentAudioMaxBytes: sent-audio.ts). `carried`: its connection went
   * before it was heard, and it goes again to the next one.
   */
  sentAudio: "none" | "unheard" | "carried";
  /** Bytes of it sent since it was last forgotten (the shell keeps sentAudioMaxBytes of them). */
  sentAudioBytes: number;
  /** An `audio_end` went after it: it goes again after it. */
  sentAudioEnded: boolean;
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
  /** The agent that speaks now (the config's first one until a handoff). */
  agent: string;
  /**
   * A transfer answered and waiting to take effect: once nothing is in flight (the old agent
   * finished speaking, the turn ended), the agent changes and the connection is replaced.
   */
  pendingHandoff: PendingHandoff | null;
  /** The running calls, and the most recently settled ones (a bounded number). */
  calls: Record<string, CallState>;
  /** How older settled calls ended, for a late duplicate: never copied, never written. */
  archive: CallArchive | null;
  /**
   * Lines typed while the user's speech waited for its answer, in order: held until that
   * answer opens its voice turn (or speechAnswerWaitMs passes), so the speech's answer is not
   * taken for a line's.
   */
  heldLines: { text: string; textId: string | undefined }[];
  /** The user spoke since the last turn opened (transcription, VAD, audio_end). */
  speechDetected: boolean;
  /**
   * That speech was signalled while a turn was open or a generation ran (a barge-in, speech
   * over a turn waiting on its calls): it began while the audio sent was the turn's, which is
   * not kept (sent-audio.ts), so it can never go again whole.
   */
  speechOverTurn: boolean;
  inputTranscript: string;
  /** Recent whole replies (normalised), to recognise a regenerated one. */
  recentReplies: string[];
  /**
   * Recent answers with the input each answered: a reply that says again what was said to
   * the same input is the same answer to the same question, never a regeneration.
   */
  recentAnswers: RecentAnswer[];
  /**
   * The turn the model timed out on, while what it owed that turn may still come: a late
   * answer is then named to clients (a durable `late_answer`), not dropped without a word.
   */
  timedOutTurn: string | null;
  /**
   * SILENT messages sent after their generation ended while a regeneration was possible, and
   * — once one regeneration showed that the model ignores SILENT (a repeated reply) — how many
   * more of them may still come. Kept across follow-up windows: a window held for a turn cut
   * short absorbs them too, so none is taken for the next turn's answer.
   */
  regenerations: { sent: number; owed: number };
  /**
   * A regeneration was recognised (a repeated reply): the model ignores SILENT whatever its
   * record says, so from here on silent results are withheld from it, as for a model whose
   * record says so (the next line of defence, taken on evidence).
   */
  silentIgnored: boolean;
  /** Until when a model that ignores SILENT could still answer a silent result by regenerating. */
  regenUntil: number;
  /** When the model last showed life (any event on the connection). */
  lastModelSignAt: number;
  /** Delegations recorded lately (GPT-Live), newest last: each is recorded once (tools.ts). */
  delegations: readonly string[];
  /** Where a turnless model's speech ends (speech-clock.ts). */
  speechClock: SpeechClock;
  /**
   * A reply liveline asked a turnless model for has begun (`reply_ready`) and not ended on the
   * wire (`reply_done`): more of it is on its way, however long the voice stays quiet.
   */
  replyOpen: boolean;
  /**
   * A turnless model was asked to go on with a reply (a side effect's result that completes
   * its response), which has not begun (`reply_ready`): it is on its way.
   */
  replyAsked: boolean;
  /**
   * When the model last showed it is working on an answer (OpenAI's `response.created`, a
   * thought, usage): a generation has begun, and no nudge may cut it.
   */
  lastWorkAt: number;
  /** When a client last streamed audio (a voice barge-in needs some). */
  lastClientAudioAt: number;
  /** The latest client audio that was not quiet (a phone line's silence is not speech). */
  lastClientSpeechAt: number;
  /** Client audio came since the last `audio_end` (an end with none before it ends no speech). */
  audioSinceEnd: boolean;
  /** The turn watchdog's timer is set (it re-arms itself lazily). */
  watchdogSet: boolean;
  counters: Counters;
  ended: boolean;
  /** When anything last happened, for the idle timer. */
  lastActivityAt: number;
  idleSet: boolean;
}

export interface LimitState {
  limit: LimitName;
  value: number;
  phase: "pending" | "goodbye";
  turnId: string | null;
  /** The turn open when the cap was reached: it ends as it would, its own calls run. */
  openTurnId: string | null;
}

export function initialState(config: CoreConfig, lastSeq = 0, turnCount = 0): CoreState {
  return {
    config,
    nextSeq: lastSeq + 1,
    turnCount,
    toolCallCount: 0,
    limit: null,
    limitTimerSet: false,
    stillWorkingAsked: null,
    limitTurns: 0,
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
    afterRestart: null,
    outbox: [],
    outboxSince: null,
    outboxAudio: { bytes: 0, droppedChunks: 0, droppedBytes: 0 },
    sentAudio: "none",
    sentAudioBytes: 0,
    sentAudioEnded: false,
    expected: [],
    followUpWindow: null,
    held: [],
    turn: null,
    generation: null,
    agent: config.agent ?? "agent",
    pendingHandoff: null,
    calls: {},
    archive: null,
    heldLines: [],
    speechDetected: false,
    speechOverTurn: false,
    inputTranscript: "",
    recentReplies: [],
    recentAnswers: [],
    timedOutTurn: null,
    regenerations: { sent: 0, owed: 0 },
    silentIgnored: false,
    regenUntil: 0,
    lastModelSignAt: 0,
    delegations: [],
    speechClock: initialSpeechClock(),
    replyOpen: false,
    replyAsked: false,
    lastWorkAt: 0,
    lastClientAudioAt: 0,
    lastClientSpeechAt: 0,
    audioSinceEnd: false,
    watchdogSet: false,
    counters: {
      suppressedGenerations: 0,
      duplicateCalls: 0,
      duplicateResults: 0,
      unknownCallResults: 0,
      emptyRetries: 0,
      withheldResults: 0,
      repeatedReplies: 0,
      modelTimeouts: 0,
      lateAnswers: 0,
      droppedModelAudio: 0,
    },
    ended: false,
    lastActivityAt: 0,
    idleSet: false,
  };
}

/** Client audio just went to the live connection, a step's or through the open gate (sent-audio.ts). */
export function noteAudioSent(s: CoreState, bytes: number): void {
  if (s.sentAudio === "none") s.sentAudio = "unheard";
  s.sentAudioBytes += bytes;
}

/** The user spoke (a transcription, the model's VAD, the client's audio_end, a barge-in). */
export function noteSpeech(s: CoreState): void {
  const overTurn = s.turn !== null || s.generation !== null;
  s.speechOverTurn = (s.speechDetected && s.speechOverTurn) || overTurn;
  s.speechDetected = true;
}

/**
 * The model owes nothing and is being told nothing: no generation, no answer expected, no
 * follow-up window, no speech it has heard and not answered (what a move or a handoff waits for).
 */
export function modelSettled(s: CoreState): boolean {
  return (
    s.generation === null &&
    s.expected.length === 0 &&
    s.followUpWindow === null &&
    !s.speechDetected
  );
}

/** A call of the session (of turn `turnId`, if given) is still running (a tool, or a client answering one). */
export function callsRunning(s: CoreState, turnId?: string): boolean {
  return Object.values(s.calls).some(
    (c) => c.status === "running" && (turnId === undefined || c.turnId === turnId),
  );
}

/**
 * The turn the model's work at hand belongs to (a response's usage, a delegation): the
 * running generation's, else the open or the last turn; null before any turn.
 */
export function turnOfModelWork(s: CoreState): string | null {
  return s.generation?.owner ?? s.turn?.id ?? s.lastTurnId;
}

/** Nothing in flight: no generation, no running call, no turn waiting for the model. */
export function upstreamQuiet(s: CoreState): boolean {
  // Speech the model has not answered yet is in flight too: a move would lose it.
  return !callsRunning(s) && modelSettled(s);
}

/** What the model of the agent that speaks now can do (agents may run different models). */
export function capabilitiesOf(s: CoreState): ModelCapabilities {
  const caps = s.config.agentCapabilities?.[s.agent] ?? s.config.capabilities;
  // The model was seen to regenerate: its record's SILENT is not to be trusted any more.
  return s.silentIgnored && caps.silentHonoured ? { ...caps, silentHonoured: false } : caps;
}

/**
 * A model without turns marks each reply liveline asked for (`reply_ready`, with its turn):
 * only that claims a place in line, and an ended turn's places hold nothing (its reply, should
 * it come, names its turn); words without it are the running reply's, or the model's own
 * (answering speech, or of its own accord).
 */
export function repliesMarked(s: CoreState): boolean {
  return capabilitiesOf(s).turnless === true && s.config.guards.suppressUnsolicited;
}

/** The policy of a tool of the agent that speaks now. */
export function policyOf(s: CoreState, name: string): ToolPolicy | undefined {
  return s.config.agentTools?.[s.agent]?.[name] ?? s.config.tools[name];
}
