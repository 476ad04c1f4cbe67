import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * A measuring run stopped by Ctrl-C (or an exception) leaves none of its `wrangler dev`
 * state behind: the bench keeps it on tmpfs, where every leftover holds memory. The control
 * keeps the state (KEEP_WRANGLER_STATE), so the check sees a leftover when there is one.
 */
const roots = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

const CHILD = `
import { startServer } from "./scripts/lib/harness.mjs";
await startServer({ stateRoot: process.env.STATE_ROOT });
process.stdout.write("up\\n");
process.kill(process.pid, "SIGINT");
`;

/** Starts a server in a child that interrupts itself once it is up; resolves with the root. */
async function interruptedRun(extraEnv = {}) {
  const root = mkdtempSync(join(tmpdir(), "liveline-interrupted-"));
  roots.push(root);
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD], {
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", STATE_ROOT: root, ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const code = await new Promise((ok) => child.once("exit", ok));
  expect(out, out).toContain("up");
  expect(code, out).toBe(130);
  return root;
}

/** The root's entries once they stop changing, or after `ms`. */
async function leftAfter(root, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const entries = readdirSync(root);
    if (entries.length === 0 || Date.now() > deadline) return entries;
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

// The two runs are independent (each its own state root and child): side by side, each waits
// on its own wrangler dev's start, in the time of one.
describe.concurrent("an interrupted run", () => {
  it("leaves no wrangler state behind", async () => {
    const root = await interruptedRun();
    expect(await leftAfter(root, 15_000)).toEqual([]);
  }, 120_000);

  it("control: with KEEP_WRANGLER_STATE the state stays, and the check sees it", async () => {
    const root = await interruptedRun({ KEEP_WRANGLER_STATE: "1" });
    expect((await leftAfter(root, 3_000)).length).toBe(1);
  }, 120_000);
});
