import type { CallState, CoreState } from "./state.js";

/**
 * The copy a step works on, so that `step` never changes the state it was given. Cheaper
 * than a deep clone where it matters (live audio is 50 steps a second): the config is shared
 * (never written), commands and held results are never written once made, and a settled
 * call (answered or cancelled, nothing held) is never written again — except by the naive
 * relay, which takes a second result for it, so then every call is copied. Tests freeze
 * the input state to prove nothing shared is written.
 */
export function copyState(s: CoreState): CoreState {
  const copyAll = !s.config.guards.dedupeResults;
  const calls: Record<string, CallState> = {};
  for (const [id, call] of Object.entries(s.calls)) {
    const settled = call.status !== "running" && call.held === undefined;
    calls[id] = settled && !copyAll ? call : { ...call };
  }
  return {
    ...s,
    clients: [...s.clients],
    upstream: { ...s.upstream, recentOpens: [...s.upstream.recentOpens] },
    outbox: [...s.outbox],
    outboxAudio: { ...s.outboxAudio },
    expected: [...s.expected],
    followUpWindow: s.followUpWindow === null ? null : { ...s.followUpWindow },
    held: [...s.held],
    turn: s.turn === null ? null : { ...s.turn },
    generation: s.generation === null ? null : { ...s.generation },
    calls,
    recentReplies: [...s.recentReplies],
    counters: { ...s.counters },
  };
}
