/**
 * The append-only event log of a session. Every durable frame a client receives is one
 * event of this log with the same `seq`, so replaying the log replays the frames exactly.
 */

/** `idle`: the model connection was closed for want of use; the next input opens it again. */
export type UpstreamStatus = "connecting" | "live" | "reconnecting" | "idle" | "ended";
export type InterruptReason = "barge_in" | "upstream_lost";
export type RunOn = "server" | "client";
export type ToolPayload = Record<string, unknown>;
/** A session's caps (an agent's `limits`, narrowed per session): what ends it gracefully. */
export type LimitName = "duration" | "cost" | "turns" | "tool_calls";

/**
 * A tool call's one outcome: its result, or an error the model can read (never both). A
 * server tool's run, a client's `tool_result` and the core's inputs carry it as such.
 */
export type ToolOutcome =
  | { result: ToolPayload; error?: undefined }
  | { error: string; result?: undefined };

export type HistoryEventBody =
  | {
      kind: "user";
      turnId: string;
      text: string;
      /**
       * `model`: a turnless model spoke on its own, with no input; `limit`: the session
       * reached a cap and the model was asked to say goodbye (the text is empty in both).
       */
      source: "text" | "audio" | "model" | "limit";
      /** The client's id for a typed line (`text.textId`): the log holds one line per id. */
      textId?: string;
    }
  | { kind: "model_text"; turnId: string; text: string }
  | { kind: "transcript"; turnId: string; text: string }
  | {
      kind: "tool_call";
      turnId: string;
      callId: string;
      name: string;
      args: ToolPayload;
      runOn: RunOn;
    }
  | {
      kind: "tool_result";
      turnId: string;
      callId: string;
      name: string;
      result?: ToolPayload | undefined;
      error?: string | undefined;
    }
  | { kind: "tool_cancelled"; turnId: string; callId: string; name: string; reason: string }
  | { kind: "turn_complete"; turnId: string }
  | {
      kind: "interrupted";
      turnId: string;
      reason: InterruptReason;
      /** Its line never reached the model alone: it went with the next line (one answer to both). */
      joined?: true | undefined;
    }
  | { kind: "status"; state: UpstreamStatus }
  /**
   * The session reached a cap (`value`: the measure then — seconds, USD, turns or tool
   * calls); the model's goodbye was delivered, and the session ends next.
   */
  | { kind: "session_limit"; limit: LimitName; value: number }
  /**
   * The session's agent changed: from here on `to` speaks, with its instructions and tools.
   * `callId`: the transfer call that asked for it (none when the app's backend did).
   */
  | {
      kind: "handoff";
      turnId?: string | undefined;
      from: string;
      to: string;
      reason: string;
      callId?: string | undefined;
    }
  | {
      kind: "error";
      code: string;
      message: string;
      fatal: boolean;
      turnId?: string | undefined;
    }
  /**
   * The model handed work to its backend (GPT-Live's delegation): once per id, however often
   * or on whichever connection the service announces it, before any call of it runs.
   */
  | { kind: "delegation"; turnId?: string | undefined; delegationId: string; target: string };

/** `at` is milliseconds since the epoch, taken from the input that caused the event. */
export type HistoryEvent = HistoryEventBody & { seq: number; at: number };
