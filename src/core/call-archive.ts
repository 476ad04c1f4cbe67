/**
 * Flat cost over long sessions: settled calls leave `calls` (copied and scanned by every
 * step) for the archive (shared by every step, never written), which only a late duplicate
 * — a second result, the same call delivered again — ever reads.
 */
import type { ArchivedCall, CallArchive, CallState, CoreState } from "./session-state.js";

/** Settled calls kept in `calls`; past twice as many, the oldest go to the archive. */
export const SETTLED_KEPT = 16;

/** An archived call (how it ended, where it ran), or undefined if the archive does not have it. */
export function archivedCall(
  archive: CallArchive | null,
  callId: string,
): ArchivedCall | undefined {
  for (let a = archive; a !== null; a = a.older) {
    const call = a.chunk.get(callId);
    if (call !== undefined) return call;
  }
  return undefined;
}

function archivable(s: CoreState, call: CallState): boolean {
  return call.status !== "running" && call.held === undefined && call.turnId !== s.turn?.id;
}

/**
 * Moves the oldest settled calls to a new archive chunk once more than 2 × SETTLED_KEPT are
 * kept (so a chunk is made once per SETTLED_KEPT settled calls, not at every step). Only
 * where a second result is refused: the naive relay takes one for any call, as it always did.
 */
export function archiveSettledCalls(s: CoreState): void {
  if (!s.config.guards.dedupeResults) return;
  const settled = Object.values(s.calls).filter((c) => archivable(s, c));
  if (settled.length <= 2 * SETTLED_KEPT) return;
  const moving = settled.slice(0, settled.length - SETTLED_KEPT);
  const chunk = new Map<string, ArchivedCall>();
  const calls = { ...s.calls };
  for (const call of moving) {
    chunk.set(call.id, {
      status: call.status === "cancelled" ? "cancelled" : "answered",
      runOn: call.runOn,
    });
    delete calls[call.id];
  }
  s.calls = calls;
  s.archive = { chunk, older: s.archive };
}
