/**
 * node scripts/test-durations.mjs < npm-test.log
 *
 * Writes test/support/test-durations.json from a whole `npm test` run's output: each test
 * file's seconds, as vitest printed them (`✓ <project> <file> (N tests) <ms>ms`). The suite's
 * sequencer (test/support/longest-first.ts) starts the longest files first with it, so that
 * no long file starts last and runs alone at the end. Refresh it when files come or go
 * (a file not in it starts after the known ones; one no longer there is ignored).
 */
import { readFileSync, writeFileSync } from "node:fs";

// vitest's colours: ESC [ … m.
const text = readFileSync(0, "utf8").replace(
  new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"),
  "",
);
const durations = {};
for (const m of text.matchAll(/^ [✓❯×] +(\w+) +(test\/\S+) \(\d+ tests?[^)]*\) (\d+)ms/gm)) {
  durations[`${m[1]}:${m[2]}`] = Math.round(Number(m[3]) / 100) / 10;
}
const files = Object.keys(durations).length;
if (files < 100) {
  console.error(`only ${files} test files in the log: not a whole run`);
  process.exit(1);
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
writeFileSync("test/support/test-durations.json", `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/support/test-durations.json: ${files} files`);
