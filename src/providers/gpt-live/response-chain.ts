/**
 * GPT-Live's backend is one response chain for the whole session, as the field measured it
 * (livekit/agents PR #7266, livekit/agents-js PR #2495; habemus-papadum/pdum_aiui's probe of
 * 2026-10-10): `response.create` is refused with `function_call_outputs_required` while any
 * function call of the session has no output, across delegations; the service runs one task
 * at a time (it holds new speech while a call is open, and answers it once the continuation
 * completes); a failed response drops its calls and refuses their outputs.
 *
 * So one gate for the session: a `response.create` goes out only when nothing runs (no backend
 * response streaming, no delegation announced and not started), nothing is open (every call
 * has its output) and something asked for it since the last one (an output went, or a line),
 * and at most one is in flight. Every finished response is continued, oldest first: outputs
 * always ask (a held question is answered only after the continuation). A refused request is
 * asked again once the calls it names are answered (unknown ones as cancelled): never a
 * silent stall.
 *
 * Whose a response is, is known, never guessed: the response that starts while liveline's
 * request is in flight is its reply (the service echoes the request's `event_id` where it
 * does; else the chain's order says it: the backend took that request, and runs one task at a
 * time), whether or not the service announces it as a delegation first.
 */
import type { ToolResponse } from "../../vocabulary/model.js";
import type { Refusal, ReplyGate, ReplyRequest, ResponseOwner } from "./reply-gate.js";

/** What the service says when it refuses a request for missing outputs (livekit PR #7266). */
export const OUTPUTS_REQUIRED = "function_call_outputs_required";

export class ResponseChain implements ReplyGate {
  /** Calls delivered on this connection whose output has not been sent. */
  private readonly open = new Set<string>();
  /** Every call delivered on this connection (a second delivery opens nothing). */
  private readonly known = new Set<string>();
  /** Calls of failed responses: the service dropped them and refuses their outputs. */
  private readonly dropped = new Set<string>();
  /** Backend responses streaming (by response id, else by delegation key). */
  private readonly running = new Set<string>();
  /** Responses that ended: a second delivery of one starts nothing. */
  private readonly finished = new Set<string>();
  /** The response streaming under each delegation key, and the calls each delivered. */
  private readonly current = new Map<string, string>();
  private readonly callsOf = new Map<string, string[]>();
  /** Delegations the voice announced whose response has not started. */
  private readonly voicePending = new Set<string>();
  /** Delegations seen (an announcement delivered twice is one). */
  private readonly delegations = new Set<string>();
  /** The delegation that announced the reply to the request in flight. */
  private replyDelegation: string | null = null;
  /**
   * A reply is owed (an output or a line went since the last request), for this turn: a
   * line's (the newest input), else the latest output's.
   */
  private owed: { turnId: string | undefined; line: boolean } | null = null;
  private inFlight: ReplyRequest | null = null;
  private requests = 0;

  delegation(id: string, target: string, clientEventId: string | undefined): void {
    // Only a delegation to the Responses backend starts a response there.
    if (target !== "responses" || this.delegations.has(id)) return;
    this.delegations.add(id);
    // The request in flight made the backend busy: the voice holds new speech meanwhile, so a
    // delegation announced now is that request's reply (or the service says so itself).
    const inFlight = this.inFlight;
    if (inFlight !== null && (clientEventId === undefined || clientEventId === inFlight.eventId))
      this.replyDelegation = id;
    else this.voicePending.add(id);
  }

  started(
    key: string,
    responseId: string | undefined,
    clientEventId: string | undefined,
  ): ResponseOwner {
    if (responseId !== undefined && (this.running.has(responseId) || this.finished.has(responseId)))
      return { duplicate: true };
    const id = responseId ?? key;
    this.running.add(id);
    this.current.set(key, id);
    const inFlight = this.inFlight;
    const ours =
      inFlight !== null &&
      (clientEventId === inFlight.eventId ||
        key === this.replyDelegation ||
        (clientEventId === undefined && !this.voicePending.has(key)));
    if (ours) {
      this.inFlight = null;
      this.replyDelegation = null;
      return { asked: true, turnId: inFlight.turnId };
    }
    this.voicePending.delete(key);
    return { asked: false };
  }

  delivered(key: string, callId: string): void {
    if (this.known.has(callId)) return;
    this.known.add(callId);
    this.open.add(callId);
    const response = this.current.get(key) ?? key;
    this.callsOf.set(response, [...(this.callsOf.get(response) ?? []), callId]);
  }

  ended(key: string, responseId: string | undefined, failed: boolean) {
    if (responseId !== undefined && !this.running.has(responseId) && this.finished.has(responseId))
      return { dropped: [], duplicate: true };
    // Known by its id where its start said it, else by the delegation it streams under.
    const id =
      responseId !== undefined && this.running.has(responseId)
        ? responseId
        : (this.current.get(key) ?? responseId ?? key);
    this.running.delete(id);
    if (responseId !== undefined) this.finished.add(responseId);
    if (this.current.get(key) === id) this.current.delete(key);
    const calls = this.callsOf.get(id) ?? [];
    this.callsOf.delete(id);
    if (!failed) return { dropped: [], duplicate: false };
    const dropped = calls.filter((c) => this.open.has(c));
    for (const c of dropped) {
      this.open.delete(c);
      this.dropped.add(c);
    }
    return { dropped, duplicate: false };
  }

  outputs(responses: readonly ToolResponse[], turnId: string | undefined) {
    const send = responses.filter((r) => !this.dropped.has(r.callId));
    for (const r of send) this.open.delete(r.callId);
    // Every output asks: the backend goes on only when asked, and the service answers speech
    // it held only after the continuation completes. A line asked since is newer input: its
    // turn is the one the reply answers.
    if (send.length > 0 && this.owed?.line !== true) this.owed = { turnId, line: false };
    return { send, goOn: send.length > 0 };
  }

  ask(turnId: string | undefined): void {
    this.owed = { turnId, line: true };
  }

  next(): ReplyRequest | null {
    if (this.owed === null || this.inFlight !== null) return null;
    if (this.open.size > 0 || this.running.size > 0 || this.voicePending.size > 0) return null;
    this.inFlight = { eventId: `liveline_reply_${++this.requests}`, turnId: this.owed.turnId };
    this.owed = null;
    return this.inFlight;
  }

  refused(clientEventId: string | undefined, code: string, message: string): Refusal | null {
    const inFlight = this.inFlight;
    if (inFlight === null) return null;
    const named = clientEventId === inFlight.eventId;
    if (!named && !(clientEventId === undefined && code === OUTPUTS_REQUIRED)) return null;
    this.inFlight = null;
    this.replyDelegation = null;
    if (code !== OUTPUTS_REQUIRED) return { unknownCalls: [], gaveUp: { turnId: inFlight.turnId } };
    // Asked again once the calls it names have their outputs (a newer ask keeps its turn).
    this.owed ??= { turnId: inFlight.turnId, line: true };
    // Calls the service waits for that this connection has no output coming for: answered
    // here, as cancelled, so that the chain goes on.
    const unknownCalls = callIdsIn(message).filter((id) => !this.open.has(id));
    for (const id of unknownCalls) {
      this.known.add(id);
      this.dropped.delete(id);
    }
    return { unknownCalls, gaveUp: null };
  }
}

/** The call ids a refusal's message names (`call_…`). */
export function callIdsIn(message: string): string[] {
  return [...new Set(message.match(/\bcall_[A-Za-z0-9_-]+/g) ?? [])];
}
