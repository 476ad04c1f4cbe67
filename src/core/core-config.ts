import type { ModelCapabilities, ToolPolicy } from "../vocabulary/model.js";

/** The core's configuration: its protections (guards), policies and timings. */

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
  /**
   * Client audio the model had not shown it heard (no turn, no generation, no speech
   * signalled) goes again to the connection that replaces the one it went to.
   */
  carryUnheardAudio: boolean;
  /**
   * Issue 28: the repeat judgement runs only where the model responds on its own (never on
   * OpenAI's wire, where liveline causes every response), never on an answer to an input said
   * again, and a kept repeat ends its turn with no `repeated_reply` error.
   */
  narrowRepeatJudgement: boolean;
  /**
   * Issue 31: on a turnless model, results sent while it speaks are answered in the reply they
   * ask for, not taken as answered by the words it goes on saying (its turn waits for it).
   */
  resultsAwaitTheirReply: boolean;
  /**
   * Issue 31: on a turnless model, a line typed while the open turn's answer is owed or being
   * said waits for it; it never cuts that turn (nothing cuts the answer on such a wire).
   */
  answersKeepTheirTurn: boolean;
  /**
   * Issue 31: on a turnless model, the quiet does not end an utterance while the reply
   * liveline asked for is still on the wire (its calls, or the rest of it, still to come).
   */
  openRepliesOutlastQuiet: boolean;
  /**
   * Issue 33: results sent while the model says a call is still working are not taken as
   * answered by those words (its turn goes on to their answer).
   */
  stillWorkingTakesNoResults: boolean;
  /**
   * Issue 52: on a turnless model, an utterance the quiet already ended is not ended again by
   * the user's speech (no empty turn of the model's own opens, no `empty_response`).
   */
  utteranceEndsOnce: boolean;
  /**
   * Issue 52: on GPT-Live's one response chain, new input does not wait for a client's call of
   * an earlier turn (the greeting's chips): that call is cancelled, `superseded`.
   */
  staleClientCallsSuperseded: boolean;
  /**
   * The attack of 2026-12-02: a cap reached mid-turn refuses the calls of later turns only;
   * the open turn's calls run, and their answer is said, before the goodbye.
   */
  capSparesOpenTurn: boolean;
  /**
   * Issue 50: a turn that spoke and since sent only silent results is owed no more words: a
   * blocking-only model that said all it had is not nudged to say its reply again (the
   * greeting was said five times).
   */
  silentResultsOweNoWords: boolean;
  /**
   * The attack of 2026-12-02 (round 3): a phone line's silence (quiet client audio) is no sign
   * that the caller is still speaking, so a keypad entry is taken at once, not held 4 s.
   */
  quietLineIsNoSpeech: boolean;
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
  carryUnheardAudio: true,
  narrowRepeatJudgement: true,
  resultsAwaitTheirReply: true,
  answersKeepTheirTurn: true,
  openRepliesOutlastQuiet: true,
  stillWorkingTakesNoResults: true,
  utteranceEndsOnce: true,
  staleClientCallsSuperseded: true,
  capSparesOpenTurn: true,
  silentResultsOweNoWords: true,
  quietLineIsNoSpeech: true,
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
  carryUnheardAudio: false,
  narrowRepeatJudgement: false,
  resultsAwaitTheirReply: false,
  answersKeepTheirTurn: false,
  openRepliesOutlastQuiet: false,
  stillWorkingTakesNoResults: false,
  utteranceEndsOnce: false,
  staleClientCallsSuperseded: false,
  capSparesOpenTurn: false,
  silentResultsOweNoWords: false,
  quietLineIsNoSpeech: false,
};

export interface CoreConfig {
  sessionId: string;
  /** The tool policies of the session's first agent (of the only one, without handoffs). */
  tools: Readonly<Record<string, ToolPolicy>>;
  /** The agent a session starts with (before any handoff). */
  agent?: string | undefined;
  /** Every agent the session may reach by handoff, with its tool policies. */
  agentTools?: Readonly<Record<string, Readonly<Record<string, ToolPolicy>>>> | undefined;
  /** Transfer tools (`transfer_to_billing`) by name: the agent each hands the session to. */
  handoffTools?: Readonly<Record<string, string>> | undefined;
  /**
   * What an agent does when the session is handed to it during a turn: `announce` (the
   * default) speaks one line in that turn, which then ends; `silent` waits for the user.
   */
  agentArrival?: Readonly<Record<string, Arrival>> | undefined;
  /**
   * Agents with the same key can share one live model connection: a handoff between them
   * updates it in place (OpenAI `session.update`). Different keys, or none: the connection is
   * replaced with the new agent's setup (Gemini's setup cannot change on a connection).
   */
  agentLinks?: Readonly<Record<string, string>> | undefined;
  /** The first agent's model's capabilities (of every agent's, without `agentCapabilities`). */
  capabilities: ModelCapabilities;
  /** Each agent's model's capabilities, where agents run different models (capabilitiesOf). */
  agentCapabilities?: Readonly<Record<string, ModelCapabilities>> | undefined;
  guards: Guards;
  /** After a model turn ends with a `speak` result unanswered, how long a follow-up may take to start. */
  followUpGraceMs: number;
  /**
   * How long a line typed right after the user spoke waits for the speech's answer to begin
   * (voice detection and transcription come first: the OpenAI wire's answer begins 1.6–2.1 s
   * after the speech ends), before it goes anyway.
   */
  speechAnswerWaitMs: number;
  /**
   * How long a turn waits for the follow-up to results the model got as its turn ended
   * before it is taken for an empty reply and nudged (unless the model shows it is working):
   * a thinking model takes seconds to its first byte, and a nudge would cut its answer.
   */
  emptyReplyWaitMs: number;
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
  /**
   * A model without turns (capability `turnless`): its utterance is over once it stayed
   * quiet this long after its speech ended (nothing on its wire says so; speech-clock.ts).
   */
  utteranceQuietMs: number;
  audio: { inputRate: number; outputRate: number };
  /**
   * Client audio held while the model connection is not set up, at most (oldest dropped); and
   * the unheard audio the shell keeps for a replacement connection (sent-audio.ts), at most.
   */
  sentAudioMaxBytes: number;
  /** The session's caps (the cost cap is the shell's: it comes as a `limit_reached` input). */
  limits?: SessionLimits | undefined;
}

/** Caps the core measures itself. */
export interface SessionLimits {
  maxTurns?: number | undefined;
  maxToolCalls?: number | undefined;
  /** The moment the session's maximum duration is up (epoch ms). */
  endsAt?: number | undefined;
  /** When the session began (epoch ms): what its duration is measured from. */
  startedAt: number;
}

/**
 * A turnless model (GPT-Live) yields by itself, and nothing on its wire says so: an utterance
 * of it that the user's speech did not end is over once the model has sent nothing for this
 * long past the end of its speech (the default of `utteranceQuietMs`). Over, not failed: the
 * turn ends complete, with no error (a delivered answer never ends its turn with one). More
 * speech after it is a new generation.
 */
export const UTTERANCE_QUIET_MS = 1_500;

/** What an agent does when a session is handed to it (see CoreConfig.agentArrival). */
export type Arrival = "announce" | "silent";

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
      responsesOnRequest: false,
    },
    guards: ALL_GUARDS,
    followUpGraceMs: 1500,
    speechAnswerWaitMs: 4000,
    emptyReplyWaitMs: 4000,
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
    utteranceQuietMs: UTTERANCE_QUIET_MS,
    audio: { inputRate: 16000, outputRate: 24000 },
    // 5 s of 16 kHz PCM16: the first words of a session, or a short reconnect.
    sentAudioMaxBytes: 5 * 16000 * 2,
    ...overrides,
  };
}
