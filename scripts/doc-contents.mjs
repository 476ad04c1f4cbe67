#!/usr/bin/env node
/**
 * Every long document opens with a contents list that names each of its `##` sections, in
 * order: one paragraph that starts `Contents:`, its items `[heading](#anchor)` joined by ` · `.
 * `node scripts/doc-contents.mjs` lists the documents whose list is missing or incomplete;
 * `--write` writes each list from the headings (after the first paragraph when a document has
 * none). test/docs/contents.test.ts runs the check.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** A document with this many `##` sections or more has a contents list. */
export const MIN_SECTIONS = 3;

/** The documents a newcomer reads: README, the protocol, docs/. */
export function documents(root = ROOT) {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", "PROTOCOL.md", ...docs.sort()];
}

/** GitHub's anchor for a heading (as test/self-contained.test.ts reads them). */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The `##` headings of a Markdown text, outside code fences, in order. */
export function sections(text) {
  const out = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = /^## (.+?)\s*$/.exec(line);
    if (!fenced && m) out.push(m[1] ?? "");
  }
  return out;
}

/** The contents paragraph (its lines) and where it starts, or null. */
function contentsParagraph(lines) {
  const start = lines.findIndex((l) => l.startsWith("Contents:"));
  if (start === -1) return null;
  let end = start;
  while (end + 1 < lines.length && lines[end + 1]?.trim() !== "") end++;
  return { start, end, text: lines.slice(start, end + 1).join(" ") };
}

/** The anchors a contents paragraph links to, in order. */
export function listed(text) {
  const para = contentsParagraph(text.split("\n"));
  if (para === null) return null;
  return [...para.text.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1] ?? "");
}

/** What is wrong with a document's contents list (empty: nothing). */
export function problems(text) {
  const wanted = sections(text).map(slug);
  if (wanted.length < MIN_SECTIONS) return [];
  const got = listed(text);
  if (got === null) return [`no contents list (${wanted.length} sections)`];
  const out = [];
  for (const a of wanted) if (!got.includes(a)) out.push(`lists no #${a}`);
  for (const a of got) if (!wanted.includes(a)) out.push(`lists #${a}, no section of it`);
  if (out.length === 0 && got.join() !== wanted.join()) out.push("lists the sections out of order");
  return out;
}

/** The contents paragraph for the headings, wrapped at 96 columns. */
export function contentsFor(headings) {
  const items = headings.map((h, i) => `[${h}](#${slug(h)})${i < headings.length - 1 ? " ·" : ""}`);
  const lines = [];
  let line = "Contents:";
  for (const item of items) {
    if (line.length + 1 + item.length > 96) {
      lines.push(line);
      line = item;
    } else line = `${line} ${item}`;
  }
  lines.push(line);
  return lines.join("\n");
}

/** The text with its contents list written from its headings. */
export function withContents(text) {
  const headings = sections(text);
  const lines = text.split("\n");
  const para = contentsParagraph(lines);
  const list = contentsFor(headings).split("\n");
  if (para !== null) {
    lines.splice(para.start, para.end - para.start + 1, ...list);
    return lines.join("\n");
  }
  // After the title and the first paragraph, before anything else.
  let at = lines.findIndex((l, i) => i > 0 && l.trim() !== "" && !l.startsWith("#"));
  while (at !== -1 && at < lines.length && lines[at]?.trim() !== "") at++;
  if (at === -1) at = 1;
  lines.splice(at, 0, "", ...list);
  return lines.join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let bad = 0;
  for (const doc of documents()) {
    const path = join(ROOT, doc);
    const text = readFileSync(path, "utf8");
    const found = problems(text);
    if (found.length === 0) continue;
    if (process.argv.includes("--write")) writeFileSync(path, withContents(text));
    else bad++;
    console.log(`${doc}: ${found.join("; ")}`);
  }
  if (bad > 0) process.exit(1);
}
