/**
 * Clients' audio on its way in, bounded when the object falls behind. While the load probe
 * says the loop is on time, each chunk goes straight on. Once it is behind, a socket's chunks
 * wait for the end of the loop's turn (a timer of 0 ms fires after the messages already
 * queued), and of what came meanwhile only the newest BUDGET_MS go on: the oldest are shed.
 * Shedding costs next to nothing (no encoding, no send, no model reply to carry), so the
 * loop catches up and every session keeps flowing, the newest audio first, instead of all of
 * them waiting behind a backlog that only grows.
 *
 * Only a client's audio is ever shed: control frames, tool results and everything durable go
 * through in order (a socket's queued audio goes first), and the model's audio never waits
 * here (the answer is heard whole; a client plays it from its own buffer). A client is told
 * (`overloaded`, at most once a second) and the timeline notes it.
 */
import type { ClientInput } from "./client-frames.js";
import type { LoadProbe } from "./load-probe.js";

/** Of a socket's audio queued while behind, at most this much goes on at once (ms). */
const BUDGET_MS = 200;
/**
 * A queue longer than this is cut at once, not at its flush: memory stays bounded however
 * long the flush waits (64 chunks: over a second of 20 ms chunks).
 */
const TRIM_AT_CHUNKS = 64;
/** A client is told of its shed audio at most this often. */
const SAY_EVERY_MS = 1000;

type ClientAudio = Extract<ClientInput, { type: "client_audio" }>;

export interface AudioIntakeHost {
  /** Hands a chunk to the session (the interpreter). */
  deliver(input: ClientAudio): void;
  /** Tells the session a client's audio was shed (`audio_shed`). */
  shed(clientId: string, chunks: number, ms: number): void;
  /** How long a chunk is, in the session's input encoding. */
  msOf(pcm: Uint8Array): number;
}

/** A socket's shed audio not yet said, and when it was last said. */
interface Owed {
  chunks: number;
  ms: number;
  saidAt: number;
  /** A timer will say it when the second is up. */
  reminder: boolean;
}

export class AudioIntake {
  /** Sockets whose audio waits for a flush (empty unless the object is behind). */
  readonly queued = new Map<WebSocket, ClientAudio[]>();
  private readonly owed = new Map<WebSocket, Owed>();
  private flushSet = false;
  /** Every chunk shed by this instance of the object (stats). */
  readonly shedTotal = { chunks: 0, ms: 0 };

  constructor(
    private readonly host: AudioIntakeHost,
    private readonly probe: LoadProbe,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A client's audio chunk, past the size, form and rate checks. */
  audio(ws: WebSocket, input: ClientAudio): void {
    this.probe.noteAudio();
    const queue = this.queued.get(ws);
    if (queue === undefined && !this.probe.behind) {
      this.sayOwed(ws, input.clientId);
      this.host.deliver(input);
      return;
    }
    if (queue === undefined) this.queued.set(ws, [input]);
    else {
      queue.push(input);
      // The flush's timer may wait behind a flood of messages: the queue is cut as it grows.
      if (queue.length > TRIM_AT_CHUNKS) this.shedOldest(ws, queue);
    }
    if (this.flushSet) return;
    this.flushSet = true;
    setTimeout(() => {
      this.flushSet = false;
      for (const queued of [...this.queued.keys()]) this.flush(queued);
    }, 0);
  }

  /** Before any other input of the socket, or its close: its queued audio goes first. */
  flush(ws: WebSocket): void {
    const queue = this.queued.get(ws);
    if (queue === undefined) return;
    this.queued.delete(ws);
    const clientId = queue[0]!.clientId;
    this.shedOldest(ws, queue);
    this.sayOwed(ws, clientId);
    for (const chunk of queue) this.host.deliver(chunk);
  }

  /** The socket is gone: nothing of it is kept. */
  forget(ws: WebSocket): void {
    this.queued.delete(ws);
    this.owed.delete(ws);
  }

  /** Cuts a queue (in place) to its newest BUDGET_MS; what it sheds is owed to its client. */
  private shedOldest(ws: WebSocket, queue: ClientAudio[]): void {
    const { shed } = newestWithin(queue, BUDGET_MS, (c) => this.host.msOf(c.pcm));
    if (shed.length === 0) return;
    queue.splice(0, shed.length);
    const ms = Math.round(shed.reduce((sum, c) => sum + this.host.msOf(c.pcm), 0));
    this.shedTotal.chunks += shed.length;
    this.shedTotal.ms += ms;
    const owed = this.owed.get(ws) ?? { chunks: 0, ms: 0, saidAt: 0, reminder: false };
    owed.chunks += shed.length;
    owed.ms += ms;
    this.owed.set(ws, owed);
  }

  private sayOwed(ws: WebSocket, clientId: string): void {
    const owed = this.owed.get(ws);
    if (owed === undefined || owed.chunks === 0) return;
    const now = this.clock();
    const wait = owed.saidAt + SAY_EVERY_MS - now;
    if (wait > 0) {
      // Said when the second is up, even if the client sends nothing more (found by the attack).
      if (!owed.reminder) {
        owed.reminder = true;
        setTimeout(() => {
          owed.reminder = false;
          if (this.owed.get(ws) === owed) this.sayOwed(ws, clientId);
        }, wait);
      }
      return;
    }
    this.host.shed(clientId, owed.chunks, owed.ms);
    this.owed.set(ws, { chunks: 0, ms: 0, saidAt: now, reminder: false });
  }
}

/**
 * The newest chunks whose length adds up to at most `budgetMs` (the newest one always), in
 * order, and the older ones before them: what is shed is always the oldest.
 */
export function newestWithin<T>(
  chunks: readonly T[],
  budgetMs: number,
  msOf: (chunk: T) => number,
): { kept: T[]; shed: T[] } {
  let total = 0;
  let first = chunks.length;
  while (first > 0) {
    const ms = msOf(chunks[first - 1]!);
    if (first < chunks.length && total + ms > budgetMs) break;
    total += ms;
    first--;
  }
  return { kept: chunks.slice(first), shed: chunks.slice(0, first) };
}
