/**
 * The seed of a property test file's run. `npm test` draws a fresh one each run, so CI
 * explores new interleavings every time, and prints it: `FC_SEED=<seed>` replays that run
 * (fast-check's failure message names the seed and path too). A counterexample found anywhere
 * is committed as a replay case (`examples`) before its fix.
 */
export function propertySeed(file: string): number {
  const given = process.env.FC_SEED;
  const seed =
    given !== undefined ? Number(given) : Math.floor(Math.random() * 0x7fffffff) ^ Date.now();
  console.log(`${file}: property seed ${seed} (replay with FC_SEED=${seed})`);
  return seed;
}
