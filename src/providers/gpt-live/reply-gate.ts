/**
 * When the GPT-Live adapter may ask the backend for a response (`response.create`), and which
 * backend response answers which request: the adapter's one policy for both, as an interface
 * so that the measurement arm (scripts/measurement) can run the per-response gate the field ran
 * before it learned the service is one chain.
 */
import type { ToolResponse } from "../../vocabulary/model.js";

/** A `response.create` to send: its `event_id` and the turn its reply answers. */
export interface ReplyRequest {
  eventId: string;
  turnId: string | undefined;
}

/** Whose a backend response is: the reply to a request liveline sent, or not asked for. */
export type ResponseOwner =
  | { asked: true; turnId: string | undefined }
  | { asked: false }
  /** The same response delivered again: nothing of it is new. */
  | { duplicate: true };

/** What a refused request leaves to do. */
export interface Refusal {
  /** Call ids the service waits for that liveline never heard of: answered as cancelled. */
  unknownCalls: string[];
  /** The request will not be retried: its turn gets no reply (the adapter says so). */
  gaveUp: { turnId: string | undefined } | null;
}

export interface ReplyGate {
  /** `session.delegation.created` (`clientEventId`: the command it names, when given). */
  delegation(id: string, target: string, clientEventId: string | undefined): void;
  /** A backend response started: whose it is. */
  started(
    key: string,
    responseId: string | undefined,
    clientEventId: string | undefined,
  ): ResponseOwner;
  /** A function call of the response under `key` was delivered (again, perhaps). */
  delivered(key: string, callId: string): void;
  /**
   * The response under `key` ended: the calls a failure dropped (none when it completed), or
   * `duplicate` when that response had ended already (delivered again).
   */
  ended(
    key: string,
    responseId: string | undefined,
    failed: boolean,
  ): { dropped: string[]; duplicate: boolean };
  /**
   * Outputs are about to be sent: those the service still takes (a dropped call's it
   * refuses), and whether they ask the backend to go on.
   */
  outputs(
    responses: readonly ToolResponse[],
    turnId: string | undefined,
  ): {
    send: ToolResponse[];
    goOn: boolean;
  };
  /** Input that asks for a reply (a typed line, a nudge) was sent for `turnId`. */
  ask(turnId: string | undefined): void;
  /** The request to send now, if any (at most one). */
  next(): ReplyRequest | null;
  /** An `error` event: a refusal of the request in flight, or null (not about it). */
  refused(clientEventId: string | undefined, code: string, message: string): Refusal | null;
}
