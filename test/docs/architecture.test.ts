/**
 * docs/ARCHITECTURE.md is true to the tree: the rooms table's figures are the tree's
 * (scripts/architecture-figures.mjs writes them) and its order is check:imports' layers; every
 * file and folder it names exists; the carriers and providers it lists are the registries' and
 * the folders'; and the path section's figures and diagrams are test/path's ratchets. Each
 * check has a control: the same check on a doctored text reports the drift.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import * as figures from "../../scripts/architecture-figures.mjs";

type Figures = Map<string, { files: number; lines: number }>;
const { problems, tree, TOP, TOTAL } = figures as {
  problems(doc: string, actual: Figures): string[];
  tree(root: string): Figures;
  TOP: string;
  TOTAL: string;
};

const ROOT = process.cwd();
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const DOC = "docs/ARCHITECTURE.md";
/** Where the path ratchets live (test/path's trace of a text frame and of a reply). */
const PATH_TEST = "test/path/text-path.path.test.ts";

/** The rooms table's keys, in order. */
function tableRooms(doc: string): string[] {
  return [...doc.matchAll(/^\| `(src\/[^`]*)` \|/gm)].map((m) => m[1] ?? "");
}

/** check:imports' layers that are folders, in order (`core/` → `src/core/`). */
function layerFolders(): string[] {
  const block =
    /const LAYERS = \[([\s\S]*?)\n\];/.exec(read("scripts/check-imports.mjs"))?.[1] ?? "";
  return [...block.matchAll(/\["([\w-]+\/)"\]/g)].map((m) => `src/${m[1]}`);
}

/** Every file under src/, test/, scripts/ and docs/, and the root's, by base name. */
function baseNames(): Set<string> {
  const out = new Set<string>(readdirSync(ROOT));
  for (const tree of ["src", "test", "scripts", "docs"])
    for (const entry of readdirSync(join(ROOT, tree), { recursive: true }) as string[])
      out.add(basename(entry));
  return out;
}

/**
 * The files and folders the text names that are not in the tree: a path with a folder is
 * looked for from the root and from src/ (the document writes `session/live-session.ts` for
 * src/session/…); a bare file name anywhere under src/, test/, scripts/, docs/ or the root.
 * The glossary is left out: it names what retired names become.
 */
function missingPaths(doc: string): string[] {
  const names = baseNames();
  const paths = new Set<string>();
  const text = doc.replace(/\n## Glossary\n[\s\S]*?\n(?=## )/, "\n");
  for (const m of text.matchAll(/(?<![\w<>/.-])((?:[\w-]+\/)*[\w.-]+\.(?:ts|mjs|md|json))\b/g))
    paths.add(m[1] ?? "");
  for (const m of text.matchAll(/`((?:src|test|scripts)\/[\w/-]*)`/g)) paths.add(m[1] ?? "");
  return [...paths].filter((p) => {
    if (!p.includes("/")) return !names.has(p);
    return !existsSync(join(ROOT, p)) && !existsSync(join(ROOT, "src", p));
  });
}

/** The names backticked in the rooms table's row for `room`. */
function rowNames(doc: string, room: string): string[] {
  const row = doc.split("\n").find((l) => l.startsWith(`| \`${room}\` |`)) ?? "";
  const cell = row.split(" | ")[1] ?? "";
  const inParens = /\(([^)]*)\)/.exec(cell)?.[1] ?? "";
  return [...inParens.matchAll(/`([\w-]+)`/g)].map((m) => m[1] ?? "");
}

const folders = (dir: string) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

/** A string array constant of the path test (`const SHELL = [...]`). */
function pathList(source: string, name: string): string[] {
  const block = new RegExp(`const ${name} = \\[([\\s\\S]*?)\\];`).exec(source)?.[1] ?? "";
  return [...block.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "");
}
const pathNumber = (source: string, name: string) =>
  Number(new RegExp(`const ${name} = (\\d+);`).exec(source)?.[1]);

/** The shell files of a diagram (the code block after `after`), in order. */
function diagramShell(doc: string, after: string): string[] {
  const at = doc.indexOf(after);
  const block = /```\n([\s\S]*?)```/.exec(doc.slice(at))?.[1] ?? "";
  return [...block.matchAll(/^\s*((?:session|providers)\/[\w/.-]+\.ts)/gm)].map((m) => m[1] ?? "");
}

/** What the path section says that test/path does not hold (empty: it is true). */
function pathDrift(doc: string, source: string): string[] {
  const out: string[] = [];
  const said = (re: RegExp) => re.exec(doc)?.slice(1).map(Number) ?? [];
  const [shell] = said(/The shell's part is (\d+) files/);
  if (shell !== pathList(source, "SHELL").length) out.push(`the text path's shell: ${shell} files`);
  const [files, returns] = said(/is (\d+) files with (\d+) returns/);
  if (files !== pathNumber(source, "MAX_FILES") || returns !== pathNumber(source, "MAX_RETURNS"))
    out.push(`the text path: ${files} files, ${returns} returns`);
  const [shellReturns] = said(/those (\d+) returns as a ratchet/);
  if (shellReturns !== pathNumber(source, "MAX_SHELL_REPLY_RETURNS"))
    out.push(`the reply leg's shell: ${shellReturns} returns`);
  const [legFiles, visits] = said(/The whole leg is (\d+) files and (\d+) visits/);
  if (
    legFiles !== pathList(source, "REPLY_FILES").length ||
    visits !== pathNumber(source, "MAX_REPLY_CALLS")
  )
    out.push(`the reply leg: ${legFiles} files, ${visits} visits`);
  if (diagramShell(doc, "A text frame's path").join() !== pathList(source, "SHELL").join())
    out.push("the text path's diagram is not test/path's SHELL");
  if (diagramShell(doc, "The reply leg, traced").join() !== pathList(source, "SHELL_REPLY").join())
    out.push("the reply leg's diagram is not test/path's SHELL_REPLY");
  return out;
}

/**
 * Figures the document states beside the constants that make them: [what, the document's
 * figure (a regex, first group), the file, the constant (a regex, first group), how the
 * constant reads as the figure].
 */
const CONSTANTS: [string, RegExp, string, RegExp, (n: number) => number][] = [
  [
    "property runs",
    /\(([\d,]+) each in `npm test`\)/,
    "test/core/properties.test.ts",
    /FC_RUNS \?\? (\d+)\)/,
    (n) => n,
  ],
  [
    "settled calls kept",
    /settled calls beyond the last (\d+)/,
    "src/core/call-archive.ts",
    /SETTLED_KEPT = (\d+)/,
    (n) => n,
  ],
  [
    "audio kept when behind (ms)",
    /its newest (\d+) ms per socket/,
    "src/session/audio-intake.ts",
    /BUDGET_MS = (\d+)/,
    (n) => n,
  ],
  [
    "model timeout (s)",
    /`MODEL_TIMEOUT_MS` \((\d+) s/,
    "src/worker-config.ts",
    /MODEL_TIMEOUT_MS: positiveInt\(([\d_]+)\)/,
    (n) => n / 1000,
  ],
  [
    "follow-up grace (s)",
    /a grace of ([\d.]+) s passes/,
    "src/core/core-config.ts",
    /followUpGraceMs: (\d+)/,
    (n) => n / 1000,
  ],
  [
    "empty reply wait (s)",
    /has had (\d+) s to begin/,
    "src/core/core-config.ts",
    /emptyReplyWaitMs: (\d+)/,
    (n) => n / 1000,
  ],
];

/** The figures the document states that its constants do not make (empty: all true). */
function constantDrift(text: string): string[] {
  return CONSTANTS.flatMap(([what, said, file, constant, as]) => {
    const stated = Number(said.exec(text)?.[1]?.replace(/,/g, ""));
    const real = as(Number(constant.exec(read(file))?.[1]?.replace(/_/g, "")));
    return stated === real ? [] : [`${what}: says ${stated}, ${file} makes ${real}`];
  });
}

const doc = read(DOC);

describe("ARCHITECTURE.md is true to the tree", () => {
  it("its rooms table has the tree's figures (node scripts/architecture-figures.mjs --write)", () => {
    const actual = tree(ROOT);
    expect(actual.get(TOTAL)?.files ?? 0).toBeGreaterThan(100);
    expect(problems(doc, actual)).toEqual([]);
    // Control: a figure the tree does not have, and a room the table lacks.
    const doctored = doc.replace(/^(\| `src\/core\/` \|.*\| )\d+( \| [\d,]+ \|)$/m, "$1999$2");
    expect(problems(doctored, actual).join()).toMatch(/src\/core\/: says 999 files/);
    const doubled = doc.replace(
      /^(\| `src\/core\/` \|.*\| \d+ \| )[\d,]+( \|)$/m,
      `$1${(actual.get("src/core/")?.lines ?? 0) * 2}$2`,
    );
    expect(problems(doubled, actual).join()).toMatch(
      /src\/core\/: says \d+ files, about \d+ lines/,
    );
    const gone = doc.replace(/^\| `src\/mcp\/` \|.*\n/m, "");
    expect(problems(gone, actual)).toEqual([
      "src/mcp/: no row (add one, with what the room holds)",
    ]);
  });

  it("lists the rooms in check:imports' layer order, from the bottom up", () => {
    const rooms = tableRooms(doc).filter((r) => r !== TOP && r !== TOTAL);
    expect(layerFolders().length).toBeGreaterThan(10);
    expect(rooms).toEqual(layerFolders());
  });

  it("names only files and folders that exist", () => {
    expect(missingPaths(doc)).toEqual([]);
    // Control: a renamed file is caught, in backticks, in a diagram, and by its base name.
    const control = "`src/core/no-such.ts` and\n  session/gone.ts send\nand `vanished.ts`";
    expect(missingPaths(control)).toEqual([
      "src/core/no-such.ts",
      "session/gone.ts",
      "vanished.ts",
    ]);
  });

  it("lists the carriers and providers the registries and folders have", () => {
    const registry = /CARRIERS = \{([\s\S]*?)\}/.exec(read("src/carrier-registry.ts"))?.[1] ?? "";
    const carriers = [...registry.matchAll(/^\s+([\w-]+):/gm)].map((m) => m[1] ?? "");
    expect(carriers.length).toBeGreaterThan(1);
    const stated = /There are (\d+): ((?:`[\w-]+`(?:, )?)+)/.exec(doc);
    expect(Number(stated?.[1])).toBe(carriers.length);
    expect([...(stated?.[2] ?? "").matchAll(/`([\w-]+)`/g)].map((m) => m[1])).toEqual(carriers);
    expect(rowNames(doc, "src/telephony/").sort()).toEqual(carriers.sort());
    expect(folders("src/telephony").filter((f) => f !== "audio")).toEqual(carriers.sort());
    expect(rowNames(doc, "src/providers/").sort()).toEqual(folders("src/providers"));
  });

  it("states test/path's figures and shell files in the path section", () => {
    const source = read(PATH_TEST);
    expect(pathList(source, "SHELL").length).toBeGreaterThan(3);
    expect(pathDrift(doc, source)).toEqual([]);
    // Control: the reply leg's old figures (21 files, 27 visits) are caught.
    const stale = doc.replace(
      /The whole leg is \d+ files and \d+ visits/,
      "The whole leg is 21 files and 27 visits",
    );
    expect(pathDrift(stale, source)).toEqual(["the reply leg: 21 files, 27 visits"]);
  });

  it("states the figures its constants make (watchdog, graces, runs, bounds)", () => {
    expect(constantDrift(doc)).toEqual([]);
    // Control: a figure the code no longer has is reported.
    const drift = constantDrift(
      doc.replace("settled calls beyond the last 16", "settled calls beyond the last 32"),
    );
    expect(drift).toEqual(["settled calls kept: says 32, src/core/call-archive.ts makes 16"]);
  });
});
