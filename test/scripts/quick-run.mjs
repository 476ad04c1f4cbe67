import { spawn } from "node:child_process";

/**
 * The quick mode of a measuring command (test/scripts/quick-*.scripts.test.mjs, one file each so they
 * run beside each other), so they cannot rot: it must start its own
 * `wrangler dev` (repro: the servers of the scenarios with their own vars; the rest on the
 * scripts project's shared one, `--base`), print its table and exit 0. Figures are printed, never
 * asserted on, but for repro's GPT-Live rows, whose faults are injected on every trial.
 * Resolves with the exit code and output; a run past `timeout` ms is ended (SIGTERM: the script
 * stops its own servers). Asynchronous, so two runs of one file can go side by side.
 */
export function run(script, args, timeout = 170_000) {
  return new Promise((resolve) => {
    const child = spawn(
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
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGTERM"), timeout);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out: `${stdout}\n${stderr}` });
    });
  });
}
