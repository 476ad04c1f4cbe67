#!/usr/bin/env node
/**
 * The figures docs/ARCHITECTURE.md states about the tree, computed from it: each room of src/
 * (a folder, or its top-level files) with its TypeScript files (exact) and lines (to the nearest
 * hundred, and true while within a tenth of the tree's: an edit does not break it, a move
 * does), in the table of the "The rooms" section. `node scripts/architecture-figures.mjs` says which rows are wrong or
 * missing; `--write` rewrites the figures (a new room's row still needs its words by hand).
 * test/docs/architecture.test.ts runs the check.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const DOC = "docs/ARCHITECTURE.md";
/** The key of the row for src/'s own files (the entry points, registries, configuration). */
export const TOP = "src/*.ts";
export const TOTAL = "src/";

/** Files and lines of every .ts file under `dir` (recursively). */
function measure(dir) {
  let files = 0;
  let lines = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    files++;
    lines +=
      readFileSync(join(entry.parentPath ?? entry.path, entry.name), "utf8").split("\n").length - 1;
  }
  return { files, lines };
}

/** Each room's figures, by its key (`src/core/`, `src/*.ts`), and the total (`src/`). */
export function tree(root = ROOT) {
  const src = join(root, "src");
  const out = new Map();
  const top = { files: 0, lines: 0 };
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    if (entry.isDirectory()) out.set(`src/${entry.name}/`, measure(join(src, entry.name)));
    else if (entry.name.endsWith(".ts")) {
      top.files++;
      top.lines += readFileSync(join(src, entry.name), "utf8").split("\n").length - 1;
    }
  }
  out.set(TOP, top);
  out.set(TOTAL, measure(src));
  return out;
}

const ROW = /^\| (?:all of )?`(src\/[^`]*)` \|(.*)\| ([\d,]+) \| ([\d,]+) \|$/;
const figure = (n) => n.toLocaleString("en-US");
/** Lines as the table states them: to the nearest hundred (at least 100). */
export const roundLines = (n) => Math.max(100, Math.round(n / 100) * 100);
/** Whether a stated line count still holds: within a tenth of the tree's (or 100 lines). */
export const linesHold = (stated, real) => Math.abs(stated - real) <= Math.max(100, real / 10);

/** The table's rows: key → { files, lines } as the document states them. */
export function stated(doc) {
  const out = new Map();
  for (const line of doc.split("\n")) {
    const m = ROW.exec(line);
    if (m)
      out.set(m[1], {
        files: Number(m[3]?.replace(/,/g, "")),
        lines: Number(m[4]?.replace(/,/g, "")),
      });
  }
  return out;
}

/** What the table says that the tree does not (empty: it is true). */
export function problems(doc, actual) {
  const said = stated(doc);
  const out = [];
  for (const [key, real] of actual) {
    const s = said.get(key);
    if (s === undefined) out.push(`${key}: no row (add one, with what the room holds)`);
    else if (s.files !== real.files || !linesHold(s.lines, real.lines))
      out.push(
        `${key}: says ${s.files} files, about ${s.lines} lines; the tree has ${real.files}, ${real.lines} (node scripts/architecture-figures.mjs --write)`,
      );
  }
  for (const key of said.keys())
    if (!actual.has(key)) out.push(`${key}: a row for a room that is gone`);
  return out;
}

/** The document with each row's figures taken from the tree. */
export function withFigures(doc, actual) {
  return doc
    .split("\n")
    .map((line) => {
      const m = ROW.exec(line);
      const real = m ? actual.get(m[1] ?? "") : undefined;
      if (!m || real === undefined) return line;
      return line.replace(
        /\| [\d,]+ \| [\d,]+ \|$/,
        `| ${figure(real.files)} | ${figure(roundLines(real.lines))} |`,
      );
    })
    .join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = join(ROOT, DOC);
  const doc = readFileSync(path, "utf8");
  const actual = tree();
  const found = problems(doc, actual);
  if (process.argv.includes("--write")) writeFileSync(path, withFigures(doc, actual));
  for (const p of found) console.log(p);
  if (found.length > 0 && !process.argv.includes("--write")) process.exit(1);
}
