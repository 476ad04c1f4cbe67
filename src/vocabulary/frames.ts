import type {
  HistoryEvent,
  InterruptReason,
  LimitName,
  RunOn,
  ToolPayload,
  UpstreamStatus,
} from "./log-events.js";

/** Server-to-client frames that carry a `seq` and are replayed (PROTOCOL.md). */
export type DurableFrame =
  | {
      type: "user";
      seq: number;
      turnId: string;
      text: string;
      textId?: string;
      /** `model`: a turn the model opened on its own (a turnless model); `limit`: the goodbye a cap asked for. No input, no text. */
      source?: "model" | "limit";
    }
  | { type: "text"; seq: number; turnId: string; text: string }
  | { type: "transcript"; seq: number; turnId: string; text: string }
  | {
      type: "tool_call";
      seq: number;
      turnId: string;
      callId: string;
      name: string;
      args: ToolPayload;
      runOn: RunOn;
    }
  | {
      type: "tool_result";
      seq: number;
      turnId: string;
      callId: string;
      name: string;
      result?: ToolPayload;
      error?: string;
    }
  /** An extension of protocol v1: the call was cancelled and will get no result. */
  | {
      type: "tool_cancelled";
      seq: number;
      turnId: string;
      callId: string;
      name: string;
      reason: string;
    }
  | { type: "turn_complete"; seq: number; turnId: string }
  | {
      type: "interrupted";
      seq: number;
      turnId: string;
      reason: InterruptReason;
      joined?: true | undefined;
    }
  | { type: "status"; seq: number; state: UpstreamStatus }
  | {
      type: "handoff";
      seq: number;
      turnId?: string;
      from: string;
      to: string;
      reason: string;
    }
  /** An extension of protocol v1: the model handed work to its backend (GPT-Live), once per id. */
  | { type: "delegation"; seq: number; turnId?: string; delegationId: string; target: string }
  /** The session reached a cap; its goodbye was delivered, and it ends next. */
  | { type: "session_limit"; seq: number; limit: LimitName; value: number }
  /** `turnId` (an extension): the turn a durable error belongs to, when it belongs to one. */
  | {
      type: "error";
      seq: number;
      code: string;
      message: string;
      fatal: boolean;
      turnId?: string | undefined;
    };

/** Frames sent to one connection only, never replayed. */
export type EphemeralFrame =
  | {
      type: "ready";
      sessionId: string;
      lastSeq: number;
      resumed: boolean;
      audio: { inputRate: number; outputRate: number };
    }
  | { type: "pong" }
  | { type: "error"; code: string; message: string; fatal: boolean }
  /**
   * How far a long server tool call has got (its tool's word, or an MCP server's progress
   * notification): never its result, never stored.
   */
  | {
      type: "tool_progress";
      callId: string;
      name: string;
      progress: number;
      total?: number | undefined;
      message?: string | undefined;
    };

export type ServerFrame = DurableFrame | EphemeralFrame;

/** The one mapping from a log event to the frame clients see, live and in replay. */
export function frameOf(event: HistoryEvent): DurableFrame {
  const seq = event.seq;
  switch (event.kind) {
    case "user":
      if (event.source === "model" || event.source === "limit")
        return { type: "user", seq, turnId: event.turnId, text: "", source: event.source };
      return event.textId === undefined
        ? { type: "user", seq, turnId: event.turnId, text: event.text }
        : { type: "user", seq, turnId: event.turnId, text: event.text, textId: event.textId };
    case "model_text":
      return { type: "text", seq, turnId: event.turnId, text: event.text };
    case "transcript":
      return { type: "transcript", seq, turnId: event.turnId, text: event.text };
    case "tool_call":
      return {
        type: "tool_call",
        seq,
        turnId: event.turnId,
        callId: event.callId,
        name: event.name,
        args: event.args,
        runOn: event.runOn,
      };
    case "tool_result": {
      const frame: DurableFrame = {
        type: "tool_result",
        seq,
        turnId: event.turnId,
        callId: event.callId,
        name: event.name,
      };
      if (event.result !== undefined) frame.result = event.result;
      if (event.error !== undefined) frame.error = event.error;
      return frame;
    }
    case "tool_cancelled":
      return {
        type: "tool_cancelled",
        seq,
        turnId: event.turnId,
        callId: event.callId,
        name: event.name,
        reason: event.reason,
      };
    case "turn_complete":
      return { type: "turn_complete", seq, turnId: event.turnId };
    case "interrupted":
      return event.joined === true
        ? { type: "interrupted", seq, turnId: event.turnId, reason: event.reason, joined: true }
        : { type: "interrupted", seq, turnId: event.turnId, reason: event.reason };
    case "status":
      return { type: "status", seq, state: event.state };
    case "handoff": {
      const frame: DurableFrame = {
        type: "handoff",
        seq,
        from: event.from,
        to: event.to,
        reason: event.reason,
      };
      if (event.turnId !== undefined) frame.turnId = event.turnId;
      return frame;
    }
    case "error": {
      const frame: DurableFrame = {
        type: "error",
        seq,
        code: event.code,
        message: event.message,
        fatal: event.fatal,
      };
      if (event.turnId !== undefined) frame.turnId = event.turnId;
      return frame;
    }
    case "delegation": {
      const frame: DurableFrame = {
        type: "delegation",
        seq,
        delegationId: event.delegationId,
        target: event.target,
      };
      if (event.turnId !== undefined) frame.turnId = event.turnId;
      return frame;
    }
    case "session_limit":
      return { type: "session_limit", seq, limit: event.limit, value: event.value };
    default: {
      const unreachable: never = event;
      throw new Error(`unknown history event ${JSON.stringify(unreachable)}`);
    }
  }
}
