/**
 * A tiny seeded PRNG (mulberry32). Its whole state is one 32-bit integer, so it lives inside
 * the simulator's plain-data state and a step stays a pure function of (state, input, now).
 */
export function seedState(seed: number): number {
  // Mix the seed so that neighbouring seeds do not start with neighbouring streams.
  let h = (seed ^ 0x9e3779b9) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** One draw in [0, 1) and the next state. */
export function nextRandom(state: number): { value: number; state: number } {
  const next = (state + 0x6d2b79f5) >>> 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { value: ((t ^ (t >>> 14)) >>> 0) / 4294967296, state: next };
}

/** One draw from the PRNG state kept in `holder.rng` (advanced in place). */
export function draw(holder: { rng: number }): number {
  const { value, state } = nextRandom(holder.rng);
  holder.rng = state;
  return value;
}
