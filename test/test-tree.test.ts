import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LONG_FILES } from "./support/sequencer.js";

/**
 * The test tree mirrors src/ and a file's name says where it runs (docs/TESTING.md, "Where the
 * tests are"). A test file no project's glob takes never runs, and nothing says so: one added in
 * a retired runner folder, or named for the wrong runner, would pass `npm test` unseen. So this
 * file reads the tree and fails on each.
 */
const ROOT = process.cwd();

/** The folders tests were grouped in by runner; a file there now runs in no project. */
const RETIRED = ["test/unit/", "test/workers/", "test/contract/", "test/browser/"];

/**
 * The folders of test/ that are not a room of src/: scripts/ (the repository's commands, and
 * scripts/measurement's arm), the docs' checks, a frame's path, the user's runs, the shared
 * helpers, recorded material and the package test's scratch app.
 */
const BESIDE_ROOMS = ["scripts", "docs", "path", "end-to-end", "support", "fixtures", "package"];

/** A folder of test/ that mirrors nothing: neither a room of src/ nor one named above. */
function strayFolders(folders: readonly string[], rooms: readonly string[]): string[] {
  return folders.filter((f) => !rooms.includes(f) && !BESIDE_ROOMS.includes(f));
}

function foldersOf(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

/** Each project's file names, as vitest.config.ts's include globs say them. */
const PROJECTS = [
  { name: "workers", suffix: /\.workers\.test\.ts$/, glob: '"test/**/*.workers.test.ts"' },
  { name: "path", suffix: /\.path\.test\.ts$/, glob: '"test/**/*.path.test.ts"' },
  { name: "client", suffix: /\.client\.test\.(mjs|ts)$/, glob: '"test/**/*.client.test.{mjs,ts}"' },
  { name: "scripts", suffix: /\.scripts\.test\.mjs$/, glob: '"test/**/*.scripts.test.mjs"' },
  { name: "browser", suffix: /\.browser\.test\.mjs$/, glob: '"test/**/*.browser.test.mjs"' },
] as const;

/** The project a test file runs in, or undefined when none takes it. */
function projectOf(path: string): string | undefined {
  const named = PROJECTS.find((p) => p.suffix.test(path));
  if (named) return named.name;
  // unit: any other `.test.ts` (its exclude is the three .ts suffixes above).
  if (/\.test\.ts$/.test(path)) return "unit";
  return undefined;
}

/** What is wrong with one test file of the tree (its path from the root, and its text). */
function faultsOf(path: string, text: string): string[] {
  const faults: string[] = [];
  if (RETIRED.some((dir) => path.startsWith(dir))) faults.push(`${path}: in a retired folder`);
  const project = projectOf(path);
  if (!project) faults.push(`${path}: no project runs it (docs/TESTING.md names the suffixes)`);
  // Named for a project whose files are .mjs, it would run in Node as a unit test.
  if (/\.(browser|scripts)\.test\.ts$/.test(path)) faults.push(`${path}: that project takes .mjs`);
  // A Node test cannot load the workerd runtime's modules, nor the helpers built on them.
  if (
    project === "unit" &&
    /^import[^;]*from\s+["'](cloudflare:|[./]+\/support\/(gateway|session-flow)\.js)/m.test(text)
  ) {
    faults.push(`${path}: runs in Node but imports workerd's runtime: name it .workers.test.ts`);
  }
  return faults;
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    // Recorded material and the package test's scratch app hold no test of this project.
    if (path === "test/fixtures" || path === "test/package") continue;
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (/\.test\.[a-z]+$/.test(entry.name)) out.push(path);
  }
  return out;
}

describe("the test tree", () => {
  it("every test file runs in exactly the project its name says, none in a retired folder", () => {
    const files = testFiles("test");
    expect(files.length).toBeGreaterThan(150);
    const faults = files.flatMap((f) => faultsOf(f, readFileSync(join(ROOT, f), "utf8")));
    expect(faults).toEqual([]);
  });

  it("each folder of test/ is a room of src/ or one of the few beside them", () => {
    expect(strayFolders(foldersOf("test"), foldersOf("src"))).toEqual([]);
    // Control: the arm's tests where they were, in a room src/ no longer has.
    expect(strayFolders([...foldersOf("test"), "measurement"], foldersOf("src"))).toEqual([
      "measurement",
    ]);
  });

  it("vitest.config.ts's projects take the files by these names", () => {
    const config = readFileSync(join(ROOT, "vitest.config.ts"), "utf8");
    for (const p of PROJECTS) expect(config, p.name).toContain(p.glob);
    expect(config).toContain('include: ["test/**/*.test.ts"]');
    expect(config).toContain('"test/**/*.{workers,path,client}.test.ts"');
  });

  it("the sequencer's long files are files of the tree (a renamed one would lose its place)", () => {
    const missing = LONG_FILES.filter((name) => {
      try {
        readFileSync(join(ROOT, name));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  // The control: the same check on files laid out as before, or misnamed, finds each.
  it("finds a file in the old layout, one no project runs, and a Node test of workerd", () => {
    expect(faultsOf("test/workers/ws.test.ts", "")).toHaveLength(1);
    expect(faultsOf("test/contract/providers.test.ts", "")).toHaveLength(1);
    expect(faultsOf("test/session/held-sockets.test.mjs", "")).toHaveLength(1);
    expect(faultsOf("test/session/held-sockets.browser.test.ts", "")).toHaveLength(1);
    expect(
      faultsOf("test/http/health.test.ts", 'import { exports } from "cloudflare:workers";'),
    ).toHaveLength(1);
    expect(
      faultsOf("test/http/ws.test.ts", 'import { connect } from "../support/gateway.js";'),
    ).toHaveLength(1);
    expect(
      faultsOf("test/http/health.workers.test.ts", 'import { exports } from "cloudflare:workers";'),
    ).toEqual([]);
  });
});
