/**
 * The shell stays small, by job (issue 54): no file in src/session over 400 lines. A file
 * that grows past it takes a job too many: give that job a file of its own. (Control: at
 * ad9f4b7, before the shell was split, live-session.ts had 1,017 lines and session-object.ts
 * 675, and this test named both.)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SHELL = join(process.cwd(), "src/session");
const MAX_LINES = 400;

/** Lines as `wc -l` counts them (a file ends with a newline). */
const linesOf = (path: string) => readFileSync(path, "utf8").split("\n").length - 1;

describe("the session shell by job", () => {
  it(`has no file over ${MAX_LINES} lines`, () => {
    const files = readdirSync(SHELL).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(0);
    const over = files
      .map((f) => ({ file: f, lines: linesOf(join(SHELL, f)) }))
      .filter((f) => f.lines > MAX_LINES);
    expect(over, "split the file by job (docs/ARCHITECTURE.md, the shell)").toEqual([]);
  });
});
