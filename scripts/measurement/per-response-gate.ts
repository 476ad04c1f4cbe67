/**
 * The per-response gate the field ran on GPT-Live before it learned the backend is one chain
 * (livekit/agents before PR #7266), and liveline before issue 52: a response is continued once
 * every call *of that response* has its output, whatever other calls of the session are still
 * open; each request is paired with the next response no announced delegation explains, in
 * the order sent, and one the service refuses is dropped. Measurement only: the naive relay's
 * GPT-Live wire, and the control of the one-chain tests (src/providers/gpt-live/response-chain.ts
 * is liveline's).
 */
import type {
  Refusal,
  ReplyGate,
  ReplyRequest,
  ResponseOwner,
} from "../../src/providers/gpt-live/reply-gate.js";
import type { ToolResponse } from "../../src/vocabulary/model.js";

export class PerResponseGate implements ReplyGate {
  /** Delegations the voice started whose response has not begun: not a reply asked for. */
  private readonly voiceDelegations = new Set<string>();
  /** Requests asked for and not sent yet. */
  private readonly toSend: Array<string | undefined> = [];
  /** Requests sent and not started, oldest first. */
  private readonly requested: ReplyRequest[] = [];
  private count = 0;
  /** Calls of each response still streaming, by delegation key. */
  private readonly streaming = new Map<string, string[]>();
  /** Each handed-on call's response: the ids of its calls still without an output. */
  private readonly awaiting = new Map<string, Set<string>>();

  delegation(id: string): void {
    this.voiceDelegations.add(id);
  }

  started(key: string): ResponseOwner {
    if (this.voiceDelegations.delete(key)) return { asked: false };
    return { asked: true, turnId: this.requested.shift()?.turnId };
  }

  delivered(key: string, callId: string): void {
    this.streaming.set(key, [...(this.streaming.get(key) ?? []), callId]);
  }

  ended(key: string): { dropped: string[]; duplicate: boolean } {
    const calls = this.streaming.get(key) ?? [];
    this.streaming.delete(key);
    const outstanding = new Set(calls);
    for (const id of calls) this.awaiting.set(id, outstanding);
    return { dropped: [], duplicate: false };
  }

  /**
   * The outputs that complete a response's calls decide whether it goes on (one that
   * speaks, or lets the reply go on); an output this connection's responses did not make
   * goes on if it speaks.
   */
  outputs(responses: readonly ToolResponse[], turnId: string | undefined) {
    const asked = new Set<Set<string>>();
    const completed: Set<string>[] = [];
    let go = false;
    for (const r of responses) {
      const speaks = r.scheduling !== "silent";
      const outstanding = this.awaiting.get(r.callId);
      this.awaiting.delete(r.callId);
      if (outstanding === undefined) {
        go ||= speaks;
        continue;
      }
      outstanding.delete(r.callId);
      if (speaks) asked.add(outstanding);
      if (outstanding.size === 0) completed.push(outstanding);
    }
    const goOn = go || completed.some((set) => asked.has(set));
    if (goOn) this.ask(turnId);
    return { send: [...responses], goOn };
  }

  ask(turnId: string | undefined): void {
    this.toSend.push(turnId);
  }

  next(): ReplyRequest | null {
    if (this.toSend.length === 0) return null;
    const request = { eventId: `liveline_reply_${++this.count}`, turnId: this.toSend.shift() };
    this.requested.push(request);
    return request;
  }

  /** A refused request starts nothing: it is forgotten (and its turn waits). */
  refused(clientEventId: string | undefined): Refusal | null {
    const at = this.requested.findIndex((r) => r.eventId === clientEventId);
    if (at !== -1) this.requested.splice(at, 1);
    return null;
  }
}
