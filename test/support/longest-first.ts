import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The suite's order: the longest test files first, across every project, by the seconds a
 * whole run took for each (test/support/test-durations.json, written by
 * scripts/test-durations.mjs). Vitest's own order in a fresh clone (no cache) is project by
 * project, larger files first: a long file that is small (a quick bench run is a few lines)
 * could start last and run alone at the end while the other workers wait. Longest first, the
 * run ends on short files. A file the table does not know starts after those it does.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const table = join(root, "test/support/test-durations.json");
    const seconds = JSON.parse(readFileSync(table, "utf8")) as Record<string, number>;
    const known = (f: TestSpecification) =>
      seconds[`${f.project.name}:${relative(root, f.moduleId)}`] ?? -1;
    return [...files].sort((a, b) => known(b) - known(a));
  }
}
