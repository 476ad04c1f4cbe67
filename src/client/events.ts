/**
 * What a liveline client receives, typed from the server's own frame types (type-only
 * imports: nothing of the server runs in the client, and the two cannot drift).
 */
import type { DurableFrame, EphemeralFrame } from "../vocabulary/frames.js";

export type { DurableFrame, EphemeralFrame };

/** A durable frame of the session's log: carries `seq`, delivered once and in order. */
export type SessionEvent = DurableFrame;

/** The `ready` frame that opens every connection. */
export type ReadyFrame = Extract<EphemeralFrame, { type: "ready" }>;

/** An error about something this connection sent (no `seq`, never replayed). */
export type ConnectionError = Extract<EphemeralFrame, { type: "error" }>;

/** How far a long server tool call has got (never its result; never replayed). */
export type ToolProgressFrame = Extract<EphemeralFrame, { type: "tool_progress" }>;

/** The client's own connection state. */
export type ClientStatus =
  | { state: "connecting"; attempt: number }
  | { state: "live"; lastSeq: number }
  | { state: "reconnecting"; attempt: number; inMs: number; why: string }
  | { state: "closed"; reason: string };

/** A client tool: its result is sent once per call id, also across reconnects. */
export type ClientTool = (
  args: Record<string, unknown>,
  call: { callId: string; name: string; turnId: string; signal: AbortSignal },
) => Promise<Record<string, unknown>> | Record<string, unknown>;
