/**
 * The provider-neutral vocabulary between the session core and a provider adapter.
 * Adapters decode wire frames into `ModelEvent`s and encode `ModelCommand`s into wire
 * frames; they hold no session logic.
 */

/** One function call as the model issued it (ids are made stable by the adapter). */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** Events a model connection produces, normalised from any provider. */
export type ModelEvent =
  | { type: "setup_complete" }
  | { type: "text_delta"; text: string }
  /**
   * `span`: where the piece sits on the model's own timeline, in ms (end exclusive), where
   * the wire says (GPT-Live): how long its speech goes on after the piece came.
   */
  | {
      type: "transcript_delta";
      text: string;
      span?: { startMs: number; endMs: number } | undefined;
    }
  | { type: "input_transcript"; text: string; finished: boolean }
  | { type: "audio_delta"; pcm: Uint8Array }
  /**
   * `dropped`: the service dropped these calls before they could run (GPT-Live: a failed
   * response's), with the reason: recorded, closed with it, never run, and no output sent.
   */
  | { type: "tool_call"; calls: ToolCallRequest[]; dropped?: string | undefined }
  | { type: "tool_call_cancellation"; ids: string[] }
  | { type: "generation_complete" }
  | { type: "turn_complete"; reason?: string | undefined }
  | { type: "interrupted" }
  | { type: "speech_started" }
  /**
   * The model shows it is working on an answer before saying any of it (OpenAI's
   * `response.created`, a Gemini thought): a slow model, not a silent one.
   */
  | { type: "working" }
  /**
   * A reply the gateway asked for is ready (GPT-Live: the backend's response to a
   * `response.create` liveline sent shows its first output): what the model says from here
   * answers that request, not the words it was saying when it came (turnless models only).
   * `turnId`: the turn of the command that asked for it (its `turnId`), as the adapter pairs
   * each reply with its request: whose answer it is is known, never guessed from the order.
   * `words`: it begins with words (not calls alone), which the voice says after: until it
   * does, the answer is still to be heard.
   */
  | { type: "reply_ready"; turnId?: string | undefined; words?: boolean | undefined }
  /**
   * That reply is over on the wire (its response ended, at its calls or in full): until then
   * more of it is on its way, however long the voice stays quiet (turnless models only).
   */
  | { type: "reply_done" }
  /**
   * The model handed work to its backend (GPT-Live: `session.delegation.created`), which
   * starts on it: a sign of work, and a durable record once per id.
   */
  | { type: "delegation"; id: string; target: string }
  | { type: "go_away"; timeLeftMs: number }
  | { type: "resumption_update"; handle?: string | undefined; resumable: boolean }
  /** Token counts the provider reported (a frame may carry only these). */
  | { type: "usage"; usage: TokenUsage }
  /**
   * An error the service reported on a connection that stays open (OpenAI Realtime: "most
   * errors are recoverable and the session will stay open"): logged, not a reason to leave.
   */
  | { type: "service_error"; code: string; message: string }
  /**
   * `fatal`: the provider adapter's reading of the close code (retrying cannot help).
   * `expired`: the service ended its session for its age (GPT-Live's two hours): nothing was
   * lost, and a new one is needed only when someone speaks (the adapter says it itself).
   */
  | {
      type: "upstream_closed";
      code: number;
      reason: string;
      fatal: boolean;
      expired?: true | undefined;
    };

/** Token counts for one model response, normalised from any provider. */
export interface TokenUsage {
  promptTokens: number;
  responseTokens: number;
  totalTokens: number;
  cachedTokens?: number | undefined;
  thoughtsTokens?: number | undefined;
  toolUsePromptTokens?: number | undefined;
  /** Per modality where the provider gives it, e.g. `{ TEXT: 120, AUDIO: 900 }`. */
  promptByModality?: Record<string, number> | undefined;
  responseByModality?: Record<string, number> | undefined;
  /** The share of the input tokens served from cache, per modality where the provider gives it. */
  cachedByModality?: Record<string, number> | undefined;
  /**
   * A model billed by time (GPT-Live: per active minute): the seconds it metered since its
   * last report on this connection. Such a report is no response of its own (its token
   * counts are 0 and it does not count as one).
   */
  seconds?: number | undefined;
}

/** Sums of token counts (a turn's, or the session's). */
export interface UsageTotals {
  /** Model responses that reported usage. */
  responses: number;
  promptTokens: number;
  responseTokens: number;
  totalTokens: number;
  cachedTokens: number;
  thoughtsTokens: number;
  toolUsePromptTokens: number;
  promptByModality: Record<string, number>;
  responseByModality: Record<string, number>;
  /** The cached input tokens by modality, where the service says (OpenAI Realtime). */
  cachedByModality: Record<string, number>;
  /** Seconds metered by a model billed by time (GPT-Live's active seconds); 0 for the others. */
  seconds: number;
}

/**
 * How a tool result should be scheduled by a provider that supports scheduling of
 * non-blocking calls: SILENT adds it to context quietly; WHEN_IDLE prompts one generation.
 */
export type ResultScheduling = "silent" | "when_idle" | "interrupt";

export interface ToolResponse {
  callId: string;
  name: string;
  /** Exactly one of result / error is set. */
  result?: Record<string, unknown> | undefined;
  error?: string | undefined;
  /** Absent: send no scheduling field (blocking calls, or providers without it). */
  scheduling?: ResultScheduling | undefined;
}

/** The one way an outcome becomes a response: an error wins, else the result (or `{}`). */
export function toolResponse(
  callId: string,
  name: string,
  outcome: { result?: Record<string, unknown> | undefined; error?: string | undefined },
): ToolResponse {
  return outcome.error !== undefined
    ? { callId, name, error: outcome.error }
    : { callId, name, result: outcome.result ?? {} };
}

/**
 * What a model is told of a call that was cancelled: in a context rebuilt from the log, and
 * live where its wire needs an output for every call (`answersCancelledCalls`).
 */
export function cancelledOutcome(reason: string): { error: string } {
  // A call the session's object restarted under ran on the old instance: it may have done its
  // work. The model hears that it does not know, never that it failed (it must not assume the
  // effect did not happen and do it again), nor that it was cancelled.
  if (reason === RESTART_REASON) return { error: OUTCOME_UNKNOWN };
  return { error: `${CANCELLED}${reason}` };
}

const CANCELLED = "cancelled: ";

/** The reason of a response that tells of a cancelled call (cancelledOutcome), else null. */
export function cancelledReasonOf(response: { error?: string | undefined }): string | null {
  const error = response.error;
  return error?.startsWith(CANCELLED) === true ? error.slice(CANCELLED.length) : null;
}

/** The `tool_cancelled` reason of a call that was running when the session's object restarted. */
export const RESTART_REASON = "restart";

/** What the model hears of such a call (it is not run again: its tool did not say it may be). */
export const OUTCOME_UNKNOWN =
  "outcome unknown: the service restarted while this call was running, so it may or may not have taken effect; do not assume it failed, and check before doing it again";

/** Commands the core asks an adapter to send to the model. */
export type ModelCommand =
  /**
   * `turnId` (on the commands that can ask for a reply): the turn a reply it prompts answers.
   * A model that marks its replies (`reply_ready`) hands it back with the reply.
   */
  | { type: "user_text"; text: string; turnId?: string | undefined }
  | { type: "user_audio"; pcm: Uint8Array }
  /**
   * `held`: the speech it ends was held while the connection was set up (or carried from a
   * lost one), and reaches the model in one burst with it: the model's voice detection has
   * heard none of it yet.
   */
  | { type: "audio_end"; held?: true | undefined }
  /**
   * What of the model's latest audio the user heard (ms): the provider cuts the model's
   * context there where it can (OpenAI), else nothing is sent.
   */
  | { type: "audio_played"; ms: number }
  | { type: "tool_responses"; responses: ToolResponse[]; turnId?: string | undefined }
  /**
   * The empty-reply retry: a short instruction to resume, seen by the model only. For
   * providers where a function output does not start a reply (OpenAI), it also asks for one.
   */
  | { type: "nudge"; text: string; turnId?: string | undefined }
  /**
   * The session is over. A service session that outlives the socket (GPT-Live: a direct
   * call's browser keeps it going) is asked to end; elsewhere closing the socket is enough.
   */
  | { type: "end_session" };

/** What a model (family + endpoint) can do; decides how the tool policy degrades. */
export interface ModelCapabilities {
  /** Functions may be declared NON_BLOCKING (the model goes on while a call runs). */
  nonBlockingCalls: boolean;
  /** A function response can carry `scheduling` (SILENT / WHEN_IDLE / INTERRUPT). */
  resultScheduling: boolean;
  /** The model sends no turn_complete until every call of the turn is answered (3.1). */
  turnCompleteWaitsForResults: boolean;
  /**
   * A SILENT result really adds to context without a generation. False where the model was
   * seen to speak again anyway: silent results are then withheld instead.
   */
  silentHonoured: boolean;
  /**
   * The model never responds on its own: every response answers a request liveline sent
   * (OpenAI's `response.create`) or input liveline saw (server VAD on its audio). Which input
   * a response answers is then known, not guessed: no judgement on its words exists.
   */
  responsesOnRequest: boolean;
  /**
   * The model has no turns (GPT-Live): nothing on the wire ends what it says, and it yields
   * by itself. Its utterances end where the user's speech begins on the session timeline (its
   * adapter says so), else after it stays quiet (core/watchdog.ts). Absent: false.
   */
  turnless?: boolean | undefined;
  /**
   * Every call needs an output, a cancelled one too (GPT-Live: its backend's conversation
   * takes no new response while a function call in it has none, and the guides ask for a
   * "cancelled" output for declined calls). A call liveline cancels is then told so, as
   * context (it prompts nothing). Absent: false (nothing is sent for a cancelled call).
   */
  answersCancelledCalls?: boolean | undefined;
}

/** Where a tool runs and what should follow its result (DESIGN.md, Turn and tool policy). */
export interface ToolPolicy {
  name: string;
  runOn: "server" | "client";
  followUp: "silent" | "speak";
  /** A call with no outcome after this long gets an error result, never silence. */
  timeoutMs: number;
  /**
   * Still running when the session is handed to another agent: `cancel` (default) it with
   * the old agent, or `finish` it first (the handoff waits for its outcome, which goes to the
   * old agent's model as usual).
   */
  onHandoff?: "cancel" | "finish" | undefined;
  /** Its progress reports: to clients only (`tell`, default), or also said once by the model. */
  progress?: "tell" | "say" | undefined;
  /**
   * Safe to run again with the same idempotency key (the tool applies its effect once per
   * key): a call still running when the session's object restarted is run again, under the
   * same call id and key, and its one result is recorded. Otherwise such a call is not run
   * again, and the model hears that its outcome is unknown.
   */
  idempotent?: boolean | undefined;
}

/** A provider-neutral conversation, rebuilt from the log for a fresh upstream connection. */
export type ContextItem =
  | { role: "user"; text: string }
  | { role: "model"; text: string }
  | { role: "model_calls"; calls: ToolCallRequest[] }
  | { role: "tool_results"; results: ToolResponse[] };

export interface RebuiltContext {
  items: ContextItem[];
}
