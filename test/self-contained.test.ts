/**
 * The repository stands alone: a clone with nothing beside it must build, test and read
 * (issue 13). No file may reach for the sibling folder the project once kept its fixtures and
 * protocol in, and every relative Markdown link must land on a file inside the repository
 * (README, PROTOCOL.md, docs/ and the READMEs under src/, test/ and scripts/); a link with an
 * anchor into a Markdown file (`#frames`, `FIGURES.md#npm-run-bench--…`) must name one of that
 * file's headings as GitHub anchors them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = process.cwd();
const TREES = ["src", "test", "scripts", ".ci", "docs"];
const TOP_FILES = [
  "vitest.config.ts",
  "package.json",
  "tsconfig.json",
  "biome.json",
  "wrangler.toml",
  "README.md",
  "PROTOCOL.md",
];
const TEXT = /\.(ts|mts|mjs|js|cjs|json|md|toml)$|^run$/;

/** A path into the sibling folder, written as a relative path or as `shared/<its contents>`. */
const OUTSIDE = [/\.\.\/shared\b/, /(^|[\s`(["'])shared\/(fixtures|PROTOCOL\.md|DESIGN\.md)/];

/** The lines of `text` that reach outside the repository, as "line: text". */
function outsideReferences(text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, i) =>
      OUTSIDE.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : [],
    );
}

/** Relative Markdown link targets in `text` (no scheme, no pure #anchor), anchors cut off. */
function relativeLinks(text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => (m[1] ?? "").split("#")[0] ?? "")
    .filter((target) => target !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Relative Markdown links that carry an anchor: [file ("" for the same file), anchor]. */
function anchorLinks(text: string): [string, string][] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].flatMap((m) => {
    const target = m[1] ?? "";
    const hash = target.indexOf("#");
    if (hash === -1 || /^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
    return [[target.slice(0, hash), decodeURIComponent(target.slice(hash + 1))]];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a Markdown file offers: its headings (outside code fences) and explicit ids. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const heading = /^#{1,6}\s+(.*?)(\s+#+)?\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1] ?? "");
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const id of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(id[1] ?? "");
  }
  return out;
}

function files(): string[] {
  const found = TOP_FILES.filter((f) => existsSync(join(ROOT, f)));
  for (const tree of TREES) {
    if (!existsSync(join(ROOT, tree))) continue;
    for (const entry of readdirSync(join(ROOT, tree), { recursive: true }) as string[]) {
      const path = join(tree, entry);
      const name = path.split(sep).pop() ?? "";
      if (TEXT.test(name) && statSync(join(ROOT, path)).isFile()) found.push(path);
    }
  }
  return found.sort();
}

const read = (path: string) => new TextDecoder().decode(readFileSync(join(ROOT, path)));

describe("a clone of the repository alone", () => {
  const all = files();

  it("finds the files it checks (src, tests, scripts, docs, configs)", () => {
    expect(all).toContain("vitest.config.ts");
    expect(all).toContain(join("src", "index.ts"));
    expect(all).toContain(join("test", "fixtures", "README.md"));
    expect(all).toContain(join("scripts", "check-imports.mjs"));
    expect(all).toContain(join("docs", "FIGURES.md"));
    expect(all.length).toBeGreaterThan(100);
  });

  it("no file refers to the sibling shared folder", () => {
    const found = all.flatMap((path) => outsideReferences(read(path)).map((l) => `${path}:${l}`));
    expect(found).toEqual([]);
  });

  it("every relative Markdown link points at a file inside the repository", () => {
    const broken = all
      .filter((path) => path.endsWith(".md"))
      .flatMap((path) =>
        relativeLinks(read(path)).flatMap((target) => {
          const to = resolve(ROOT, dirname(path), target);
          const inside = !relative(ROOT, to).startsWith("..");
          return inside && existsSync(to) ? [] : [`${path} -> ${target}`];
        }),
      );
    expect(broken).toEqual([]);
  });

  it("every anchor a Markdown link names is a heading of the file it points at", () => {
    const broken = all
      .filter((path) => path.endsWith(".md"))
      .flatMap((path) =>
        anchorLinks(read(path)).flatMap(([file, anchor]) => {
          const to = file === "" ? path : relative(ROOT, resolve(ROOT, dirname(path), file));
          if (!to.endsWith(".md") || to.startsWith("..") || !existsSync(join(ROOT, to))) return [];
          return anchors(read(to)).has(anchor) ? [] : [`${path} -> ${file}#${anchor}`];
        }),
      );
    expect(broken).toEqual([]);
  });

  // Controls: the checks see what they are meant to catch.
  it("control: the references the project used to make are caught", () => {
    const up = ["..", "shared"].join("/");
    expect(outsideReferences(`const F = resolve(process.cwd(), "${up}/fixtures");`)).toHaveLength(
      1,
    );
    expect(outsideReferences(`[PROTOCOL.md](${up}/PROTOCOL.md)`)).toHaveLength(1);
    expect(outsideReferences(` * Sources: ${"shared"}/fixtures/PROTOCOL_NOTES.md`)).toHaveLength(1);
    // Ordinary uses of the word stay allowed.
    expect(outsideReferences("Small helpers shared by the core's scenario tests.")).toEqual([]);
    expect(outsideReferences("read from test/fixtures/gemini")).toEqual([]);
  });

  it("control: links are taken apart as the link check needs", () => {
    expect(
      relativeLinks("[a](./PROTOCOL.md#frames) [b](https://x.dev) [c](#here) [d](../x.md)"),
    ).toEqual(["./PROTOCOL.md", "../x.md"]);
    expect(
      anchorLinks("[a](./PROTOCOL.md#frames) [b](https://x.dev#y) [c](#here) [d](../x.md)"),
    ).toEqual([
      ["./PROTOCOL.md", "frames"],
      ["", "here"],
    ]);
  });

  it("control: anchors are made as GitHub makes them", () => {
    const doc = [
      "# Figures",
      "## npm run bench — what the gateway costs",
      "## When it gives up (several clients, React Native)",
      "## `seq`, durability and replay",
      "## Turns",
      "## Turns",
      "```sh",
      "# not a heading",
      "```",
      '<a id="kept"></a>',
    ].join("\n");
    expect([...anchors(doc)]).toEqual([
      "figures",
      "npm-run-bench--what-the-gateway-costs",
      "when-it-gives-up-several-clients-react-native",
      "seq-durability-and-replay",
      "turns",
      "turns-1",
      "kept",
    ]);
  });
});
