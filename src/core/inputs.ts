import type { LimitName, ToolOutcome, ToolPayload } from "../vocabulary/log-events.js";
import type { ModelEvent, ToolPolicy } from "../vocabulary/model.js";
import type { TimerId } from "./effects.js";

/** A server call run again after a restart, with the same call id and idempotency key. */
export interface RerunCall {
  callId: string;
  name: string;
  args: ToolPayload;
  timeoutMs: number;
}

/** When the latest chunk each way passed the open audio gate (null: none since the last step). */
export interface AudioPassed {
  clientAt: number | null;
  /** The latest of those chunks that was not quiet (see `client_audio`'s `quiet`). */
  speechAt: number | null;
  /** The client audio's bytes that passed (0: none). */
  clientBytes: number;
  modelAt: number | null;
}

/** Everything that can happen to a session, as the shell hands it to the core. */
export type CoreInput =
  | { type: "client_connected"; clientId: string; resumeFrom?: number | undefined }
  | { type: "client_disconnected"; clientId: string }
  | {
      type: "client_text";
      clientId: string;
      text: string;
      /** The client's id for the line, so that a line sent again is taken once. */
      textId?: string | undefined;
      /** Set by the interpreter from the log: a line with this `textId` is already in it. */
      recorded?: boolean | undefined;
    }
  | {
      type: "client_audio";
      clientId: string;
      pcm: Uint8Array;
      /**
       * Measured below speech by the shell: a phone line streams its silence between words (every
       * 20 ms), which the model hears but which is no sign that the caller is still speaking.
       */
      quiet?: boolean | undefined;
    }
  | { type: "client_audio_end"; clientId: string }
  /** The client played this many ms of the current (or just interrupted) reply's audio. */
  | { type: "client_played"; clientId: string; ms: number }
  | ({ type: "client_tool_result"; clientId: string; callId: string } & ToolOutcome)
  | { type: "client_ping"; clientId: string }
  /**
   * The shell fell behind and shed a client's oldest audio, chunks and ms of it since it last
   * said so (at most once a second): the client is told, the timeline notes it.
   */
  | { type: "audio_shed"; clientId: string; chunks: number; ms: number }
  /** A frame the boundary could not accept (parsed and rejected by the shell). */
  | { type: "client_bad_frame"; clientId: string; code: string; message: string }
  /** The model socket is open and setup was sent; `setup_complete` follows as a model event. */
  | { type: "upstream_opened" }
  /**
   * Opening the model socket failed before it was open. `refused`: the service said no in a
   * way retrying cannot fix (a bad key, model).
   */
  | { type: "upstream_failed"; message: string; refused?: boolean | undefined }
  /** The app (its backend, or a server tool) hands the session to another agent. */
  | { type: "handoff_requested"; to: string; reason: string }
  /**
   * A model event. `upstream_closed` is reported only for the current connection, never for
   * one the core asked the shell to close.
   */
  | { type: "model"; event: ModelEvent }
  /**
   * A server tool's run says how far it has got (an MCP server's progress notification):
   * never its outcome.
   */
  | {
      type: "tool_progress";
      callId: string;
      progress: number;
      total?: number | undefined;
      message?: string | undefined;
    }
  /**
   * More tools of an agent are known (its MCP servers listed theirs): their policies, by the
   * names the model calls them by.
   */
  | { type: "tools_listed"; agent: string; tools: Readonly<Record<string, ToolPolicy>> }
  /** A server tool's run ended (one aborted, its call already settled, is not reported). */
  | ({ type: "tool_outcome"; callId: string } & ToolOutcome)
  | { type: "timer_fired"; timer: TimerId }
  /**
   * Audio passed the open audio gate (src/core/audio-gate.ts) since the last step, and no
   * other input follows yet: sets what the chunks' own steps would have set. (Normally the
   * next input's step does this first: `step`'s `passed`.)
   */
  | ({ type: "audio_passed" } & AudioPassed)
  | { type: "end_session" }
  /**
   * The session's object restarted and its state was rebuilt from the log (restore.ts): what
   * the restart carried over goes on — calls run again with their key (`rerun`).
   */
  | { type: "session_restored"; rerun: readonly RerunCall[] }
  /** A cap the shell measures (the session's cost) was reached: the session closes gracefully. */
  | { type: "limit_reached"; limit: LimitName; value: number };

export type CoreInputType = CoreInput["type"];
