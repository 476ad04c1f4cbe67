import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that run longest, slowest first (a whole run on a 2-core machine, 2026-12-02: 115 s
 * down to 20 s). Vitest orders a fresh clone's files by size, so these small files with long
 * real-time scenarios started last and held the run's end: with them first, the short files
 * fill the slots around them. A hint only: a file missing here runs in vitest's order, and
 * test/test-tree.test.ts fails on a name here that no longer exists.
 */
export const LONG_FILES = [
  // The Node projects' group.
  "test/scripts/quick-repro.scripts.test.mjs",
  "test/scripts/quick-bench.scripts.test.mjs",
  "test/end-to-end/demo-page.browser.test.mjs",
  "test/client/socket-drops.client.test.mjs",
  "test/end-to-end/recordings.browser.test.mjs",
  "test/scripts/try-phone.scripts.test.mjs",
  "test/end-to-end/phone-call.scripts.test.mjs",
  "test/end-to-end/restart-without-key.scripts.test.mjs",
  "test/scripts/quick-soak.scripts.test.mjs",
  "test/scripts/package.scripts.test.mjs",
  "test/core/properties.test.ts",
  "test/scripts/interrupted-run.scripts.test.mjs",
  // workerd's group.
  "test/providers/gpt-live/contract.workers.test.ts",
  "test/telephony/carrier-contract.workers.test.ts",
  "test/providers/gpt-live/session.workers.test.ts",
  "test/session/socket-fuzz.workers.test.ts",
  "test/session/greeting.workers.test.ts",
  "test/mcp/mcp-tools.workers.test.ts",
  "test/providers/xai/contract.workers.test.ts",
  "test/providers/gemini/contract.workers.test.ts",
  "test/providers/openai/contract.workers.test.ts",
  "test/providers/azure/contract.workers.test.ts",
  "test/simulator/gemini-face.workers.test.ts",
  "test/session/quick-lines.workers.test.ts",
  "test/providers/openai/tool-results.workers.test.ts",
  "test/session/broken-upstream.workers.test.ts",
];

/** vitest's order (a group's projects together, its cached durations when it has them), the long files first. */
export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = LONG_FILES.findIndex((name) => file.moduleId.endsWith(name));
      return at === -1 ? LONG_FILES.length : at;
    };
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    return sorted
      .map((file, at) => ({ file, at }))
      .sort((a, b) => group(a.file) - group(b.file) || rank(a.file) - rank(b.file) || a.at - b.at)
      .map(({ file }) => file);
  }
}
