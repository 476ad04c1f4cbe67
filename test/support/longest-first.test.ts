import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification, Vitest } from "vitest/node";
import { LongestFirst } from "./longest-first.js";

const ROOT = process.cwd();

/** A file of a project, as the sequencer sees it (only what it reads). */
function spec(project: string, file: string): TestSpecification {
  return { project: { name: project }, moduleId: join(ROOT, file) } as unknown as TestSpecification;
}

describe("the suite's order (test/support/longest-first.ts)", () => {
  const sequencer = new LongestFirst({ config: { root: ROOT } } as unknown as Vitest);

  it("starts the longest files first, across projects, and files it does not know last", async () => {
    const files = [
      spec("unit", "test/test-tree.test.ts"),
      spec("unit", "test/not-yet-timed.test.ts"),
      spec("scripts", "test/scripts/quick-bench.scripts.test.mjs"),
      spec("workers", "test/session/greeting.workers.test.ts"),
      spec("client", "test/client/socket-drops.client.test.mjs"),
    ];
    const order = (await sequencer.sort(files)).map((f) => f.moduleId.slice(ROOT.length + 1));
    expect(order).toEqual([
      "test/scripts/quick-bench.scripts.test.mjs",
      "test/client/socket-drops.client.test.mjs",
      "test/session/greeting.workers.test.ts",
      "test/test-tree.test.ts",
      "test/not-yet-timed.test.ts",
    ]);
  });

  // A file moved without its entry would start last, unknown: the table names files that are.
  it("times only files that exist (a moved one's entry is renamed with it)", () => {
    const table = JSON.parse(
      readFileSync(join(ROOT, "test/support/test-durations.json"), "utf8"),
    ) as Record<string, number>;
    expect(Object.keys(table).length).toBeGreaterThan(150);
    const gone = Object.keys(table).filter((key) => !existsSync(join(ROOT, key.split(":")[1]!)));
    expect(gone).toEqual([]);
  });
});
