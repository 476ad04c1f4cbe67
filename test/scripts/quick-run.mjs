import { spawnSync } from "node:child_process";

/**
 * The quick mode of a measuring command (test/scripts/quick-*.scripts.test.mjs, one file each so they
 * run beside each other), so they cannot rot: it must start its own
 * `wrangler dev` (repro: the servers of the scenarios with their own vars; the rest on the
 * scripts project's shared one, `--base`), print its table and exit 0. Figures are printed, never asserted on, but for
 * repro's GPT-Live rows, whose faults are injected on every trial.
 */
export function run(script, args, timeout = 170_000) {
  const res = spawnSync(
    process.execPath,
    [
      "--import",
      "./scripts/lib/ts-resolve.mjs",
      "--experimental-strip-types",
      "--no-warnings",
      `scripts/${script}.mjs`,
      "--quick",
      ...args,
    ],
    { encoding: "utf8", timeout, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  return { code: res.status, out: `${res.stdout}\n${res.stderr}` };
}
