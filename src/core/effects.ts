import type { DurableFrame, EphemeralFrame } from "../vocabulary/frames.js";
import type { HistoryEvent, ToolPayload } from "../vocabulary/log-events.js";
import type { ModelCommand, TokenUsage } from "../vocabulary/model.js";

/** Timers the core sets; the shell fires them back as `timer_fired` inputs. */
export type TimerId =
  | `tool:${string}`
  | `grace:${string}`
  | "idle"
  | "reconnect"
  | "go_away"
  | "watchdog"
  | "connect"
  /** A line typed while speech waits for its answer is held until then (bounded). */
  | "speech"
  /** The follow-up to results the model got as its turn ended: awaited until then. */
  | `follow_up:${string}`
  /** The session's maximum duration is up. */
  | "limit";

/** Timeline rows (docs/PROTOCOL-REFERENCE.md, `/timeline`); the shell adds milliseconds since start. */
export type TraceKind =
  | "USER"
  | "TEXT_DUPLICATE"
  | "MODEL_TEXT"
  /** The first of the model's audio for a turn: with MODEL_TEXT, the turn's first model byte. */
  | "MODEL_AUDIO"
  /** A cap was reached: the session closes once nothing is in flight. */
  | "LIMIT_REACHED"
  /** The model is asked to say goodbye, in a turn of its own. */
  | "LIMIT_GOODBYE"
  /** A tool call past a cap is answered with an error, never run. */
  | "LIMIT_REFUSED_CALL"
  /** A long call's progress: the model was asked to say, once, that it is still working. */
  | "TOOL_PROGRESS_SAID"
  /** An agent's MCP server listed its tools (how many, and `cached` when from an earlier listing). */
  | "MCP_TOOLS"
  /** An MCP server could not list its tools: the session goes on without them (`reason`). */
  | "MCP_UNAVAILABLE"
  /** A tool of an MCP server was left out (`reason`: a name no provider takes, a clash). */
  | "MCP_TOOL_SKIPPED"
  /** An MCP server said its tools changed: listed again, for the next connection. */
  | "MCP_LIST_CHANGED"
  | "TOOL_CALL"
  | "TOOL_RESPONSE"
  | "TOOL_RESULT_WITHHELD"
  | "TOOL_CANCELLED"
  | "TURN_COMPLETE"
  | "MODEL_TURN_COMPLETE"
  | "INTERRUPTED"
  | "SUPPRESSED"
  | "DUPLICATE_CALL"
  | "DUPLICATE_RESULT"
  /** A client's result to a cancelled call, which takes none: the client gets call_cancelled. */
  | "RESULT_AFTER_CANCEL"
  | "UNKNOWN_CALL"
  | "RETRY_EMPTY"
  | "EMPTY_GENERATION"
  | "EMPTY_RESPONSE"
  | "REPEATED_REPLY"
  /** No other answer followed a repeated reply: it was the turn's answer after all. */
  | "REPEAT_KEPT"
  | "WATCHDOG_NUDGE"
  /** The model is slow, not silent: the watchdog waits another period instead of ending the turn. */
  | "WATCHDOG_WAIT"
  | "UTTERANCE_QUIET"
  /** A reply liveline asked a turnless model for begins: the answer owed to a turn starts here. */
  | "REPLY_READY"
  /** The same delegation announced again (GPT-Live): recorded once. */
  | "DUPLICATE_DELEGATION"
  /** Nothing came within the grace after results: the follow-up is awaited (emptyReplyWaitMs). */
  | "AWAIT_FOLLOW_UP"
  /** The model answered a turn after it had timed out: named to clients, not shown. */
  | "LATE_ANSWER"
  /** Lines that never reached the model went to it with the line typed after them. */
  | "LINES_JOINED"
  | "TURN_CARRIED"
  /** Speech the model heard and has not answered is kept across a restart (its words so far). */
  | "SPEECH_KEPT"
  /** A call running when the session's object restarted runs again, with the same key. */
  | "TOOL_RERUN"
  /** A client's call open when the session's object restarted is left open for an answer. */
  | "TOOL_REOFFERED"
  /** A phone call's stream started again: the call goes on, not greeted again. */
  | "CALL_RECONNECTED"
  /** A phone call's stream went without a hang-up (its grace starts), or did not come back. */
  | "CALL_STREAM_LOST"
  /** The model connection waits for calls carried over a restart to settle. */
  | "UPSTREAM_WAITS"
  | "LINE_HELD"
  /** A direct call's service session took a handoff's agent: its tools and instructions. */
  | "CALL_AGENT"
  /** The user spoke on before the answer to their speech began: it opens no turn. */
  | "SPEECH_CONTINUED"
  | "RESUME_TURN"
  | "MODEL_TIMEOUT"
  | "UPSTREAM_CONNECT"
  | "UPSTREAM_LIVE"
  | "UPSTREAM_RECONNECT"
  | "UPSTREAM_CLOSED"
  | "UPSTREAM_REFUSED"
  /** An error the service reported on a connection that stays open. */
  | "SERVICE_ERROR"
  | "HANDOFF"
  | "HANDOFF_ANNOUNCE"
  | "UPSTREAM_IDLE_CLOSE"
  /** The service ended its session for its age: idle now, or replaced at once (`replaced`). */
  | "UPSTREAM_EXPIRED"
  /** An idle close with answers still owed to ended turns: dropped, as a lost connection drops them. */
  | "IDLE_OWED_DROPPED"
  | "UPSTREAM_GAVE_UP"
  | "HELD_AUDIO_DROPPED"
  /** Speech the model had heard and not answered goes again, whole, to the next connection. */
  | "SPEECH_CARRIED"
  | "CONTEXT_INVALID"
  /** A recording (`recording`: audio or wire) began, or began again after an object restart. */
  | "RECORDING_STARTED"
  /** A recording stopped (`reason`: its budget, no bucket): the session goes on. */
  | "RECORDING_STOPPED"
  /** The session's subrequests near SUBREQUEST_BUDGET (what can wait is shed), or past it. */
  | "SUBREQUESTS_NEAR"
  | "SUBREQUESTS_OVER"
  /** A client socket that kept sending frames over MAX_FRAME_BYTES was closed (1009). */
  | "OVERSIZED_CLOSE"
  | "USAGE"
  | "GO_AWAY"
  | "CLIENT_CONNECT"
  | "CLIENT_RESUME"
  | "CLIENT_DISCONNECT"
  | "BAD_FRAME"
  /** The shell fell behind and dropped a client's oldest audio (session/audio-intake.ts). */
  | "AUDIO_SHED";

/** How to (re)open the model connection: resume with a handle, or seed from the log. */
export type UpstreamOpen =
  | { mode: "fresh" }
  | { mode: "resume"; handle: string }
  | { mode: "rebuild" };

/** Commands the shell carries out, in order. */
export type Effect =
  | { type: "send_model"; command: ModelCommand }
  /** The client audio the shell kept (sent since it was last told to forget it) is not needed. */
  | { type: "forget_sent_audio" }
  /** The client audio the shell kept goes, in order, to the connection that just went live. */
  | { type: "resend_sent_audio" }
  /** Written in one transaction before any frame that follows it is sent. */
  | { type: "append_history"; events: HistoryEvent[] }
  /** To every connected client. */
  | { type: "send_durable"; frame: DurableFrame }
  | { type: "send_ephemeral"; clientId: string; frame: EphemeralFrame }
  /** Model audio, to every connected client; never stored. */
  | { type: "send_audio"; pcm: Uint8Array }
  /** Send `clientId` every logged frame with seq > afterSeq, before anything else reaches it. */
  | { type: "replay"; clientId: string; afterSeq: number }
  | { type: "run_tool"; callId: string; name: string; args: ToolPayload }
  | { type: "abort_tool"; callId: string; reason: string }
  /** `jitterMs`: the shell may fire it up to this much later, at random (the core draws none). */
  | { type: "set_timer"; timer: TimerId; at: number; jitterMs?: number | undefined }
  | { type: "clear_timer"; timer: TimerId }
  /** `agent`: whose setup (instructions, tools, voice) the connection opens with. */
  | { type: "open_upstream"; open: UpstreamOpen; agent: string }
  /** The live connection takes `agent`'s setup in place (a handoff within one provider link). */
  | { type: "update_upstream"; agent: string }
  | { type: "close_upstream"; reason: string }
  | { type: "close_clients"; code: number; reason: string }
  /** Token counts of one model response, added to its turn's (null: no turn) durable sums. */
  | { type: "record_usage"; turnId: string | null; usage: TokenUsage }
  | { type: "trace"; kind: TraceKind; detail?: Record<string, unknown> };

export type EffectType = Effect["type"];
