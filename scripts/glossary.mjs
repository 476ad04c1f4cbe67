#!/usr/bin/env node
/**
 * Where src/ still uses a name docs/glossary.json retires: one row per retired pattern with the
 * files and lines it matches (a path pattern: the files it names). `--check` exits 1 while any
 * match remains — the lint the renames to the glossary end with.
 *
 *   node scripts/glossary.mjs [--check]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Every .ts file under src/, as a path from the repository's root with forward slashes. */
export function sourceFiles(root = ROOT) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) out.push(relative(root, path).split("\\").join("/"));
    }
  };
  walk(join(root, "src"));
  return out.sort();
}

/** Whether a retired pattern applies to `file` (its `in` and `except` path prefixes). */
function applies(retired, file) {
  if (retired.in !== undefined && !retired.in.some((p) => file.startsWith(p))) return false;
  return !(retired.except ?? []).some((p) => file.startsWith(p));
}

/** Each retired pattern with the places in src/ that still use it. */
export function retiredUses(glossary, files, read) {
  const rows = [];
  for (const term of glossary.terms) {
    for (const retired of term.retired) {
      const re = new RegExp(retired.pattern, "g");
      const hits = [];
      for (const file of files) {
        if (!applies(retired, file)) continue;
        if (retired.kind === "path") {
          re.lastIndex = 0;
          if (re.test(file)) hits.push({ file, line: 0 });
          continue;
        }
        read(file)
          .split("\n")
          .forEach((text, i) => {
            re.lastIndex = 0;
            if (re.test(text)) hits.push({ file, line: i + 1 });
          });
      }
      rows.push({ word: term.word, retired, hits });
    }
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const glossary = JSON.parse(readFileSync(join(ROOT, "docs/glossary.json"), "utf8"));
  const read = (file) => readFileSync(join(ROOT, file), "utf8");
  const rows = retiredUses(glossary, sourceFiles(), read);
  let total = 0;
  console.log("word              files  lines  retired → instead");
  for (const { word, retired, hits } of rows) {
    const files = new Set(hits.map((h) => h.file)).size;
    total += hits.length;
    console.log(
      `${word.padEnd(17)} ${String(files).padStart(5)}  ${String(hits.length).padStart(5)}  ${retired.pattern} → ${retired.instead}`,
    );
  }
  console.log(`\n${total} uses of retired names in src/`);
  if (process.argv.includes("--check") && total > 0) process.exit(1);
}
