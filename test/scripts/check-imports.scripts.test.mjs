import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** The import check passes on the project, and fails on a cycle and on an upward import. */
function check(root) {
  const res = spawnSync(process.execPath, ["scripts/check-imports.mjs", ...(root ? [root] : [])], {
    encoding: "utf8",
  });
  return { code: res.status, out: `${res.stdout}${res.stderr}` };
}

function project(files) {
  const root = mkdtempSync(join(tmpdir(), "imports-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, "src", path, ".."), { recursive: true });
    writeFileSync(join(root, "src", path), text);
  }
  return root;
}

describe("npm run check:imports", () => {
  it("passes on src/", () => {
    const { code, out } = check();
    expect(out).toContain("no cycle, no upward import");
    expect(code).toBe(0);
  });

  it("fails on a cycle inside a layer", () => {
    const root = project({
      "core/a.ts": 'import { b } from "./b.js";\nexport const a = b;\n',
      "core/b.ts": 'import { a } from "./a.js";\nexport const b = 1;\nvoid a;\n',
    });
    const { code, out } = check(root);
    expect(out).toContain("cycle: src/core/a.ts <-> src/core/b.ts");
    expect(code).toBe(1);
  });

  it("fails on an upward import (the vocabulary importing the core)", () => {
    const root = project({
      "core/state.ts": "export const s = 1;\n",
      "vocabulary/model.ts":
        'import type { s } from "../core/state.js";\nexport type M = typeof s;\n',
    });
    const { code, out } = check(root);
    expect(out).toContain("upward import: src/vocabulary/model.ts -> src/core/state.ts");
    expect(code).toBe(1);
  });

  it("fails on a base name two roles share, and passes on siblings of one kind", () => {
    const clash = project({
      "core/config.ts": "export const c = 1;\n",
      "session/config.ts": "export const d = 2;\n",
    });
    const clashed = check(clash);
    expect(clashed.out).toContain("base name config.ts is shared by");
    expect(clashed.code).toBe(1);
    const siblings = project({
      "providers/a/adapter.ts": "export const a = 1;\n",
      "providers/b/adapter.ts": "export const b = 2;\n",
      "core/index.ts": "export const i = 1;\n",
      "session/index.ts": "export const j = 2;\n",
    });
    const fine = check(siblings);
    expect(fine.out).toContain("no cycle, no upward import");
    expect(fine.code).toBe(0);
  });

  it("fails when a module of src/ imports a measurement arm", () => {
    const root = project({
      "measurement/naive.ts": "export const naive = 1;\n",
      "session/live.ts":
        'import { naive } from "../measurement/naive.js";\nexport const l = naive;\n',
    });
    const { code, out } = check(root);
    expect(out).toContain("imports a measurement arm: src/measurement/naive.ts");
    expect(code).toBe(1);
  });
});
