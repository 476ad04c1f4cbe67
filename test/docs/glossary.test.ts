/**
 * docs/glossary.json is the glossary's machine-readable form (the renames to it and their lint
 * read it); ARCHITECTURE.md's Glossary table is the same list in prose. These checks keep the
 * two equal and the retired patterns precise: each compiles, and none catches a name its
 * glossary keeps (the control: an over-broad pattern such as `\bcall\b` fails the last test).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
// @ts-expect-error: a plain .mjs script without types
import { retiredUses, sourceFiles } from "../../scripts/glossary.mjs";

const ROOT = process.cwd();
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

const Retired = z.strictObject({
  kind: z.enum(["identifier", "path"]),
  pattern: z.string().min(1),
  instead: z.string().min(1),
  in: z.array(z.string()).optional(),
  except: z.array(z.string()).optional(),
  note: z.string().optional(),
});
const Term = z.strictObject({
  word: z.string().min(1),
  meaning: z.string().min(1),
  retired: z.array(Retired),
  keep: z.array(z.string()),
});
const Glossary = z.strictObject({ $comment: z.string(), terms: z.array(Term).min(1) });
type Glossary = z.infer<typeof Glossary>;

const glossary: Glossary = Glossary.parse(JSON.parse(read("docs/glossary.json")));

/** The words of ARCHITECTURE.md's Glossary table, in order (its rows' bold first cells). */
function tableWords(doc: string): string[] {
  const section = /\n## Glossary\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? "";
  return [...section.matchAll(/^\| \*\*(.+?)\*\* \|/gm)].map((m) => m[1] ?? "");
}

/**
 * Names a retired pattern would wrongly catch: any term's kept names. A pattern scoped to a
 * few files (`in`) may retire a kept name there (a SIP call's `callId` beside tool calls').
 */
function overreach(g: Glossary): string[] {
  const kept = g.terms.flatMap((t) => t.keep);
  return g.terms.flatMap((t) =>
    t.retired
      .filter((r) => r.kind === "identifier" && r.in === undefined)
      .flatMap((r) =>
        kept.filter((name) => new RegExp(r.pattern).test(name)).map((n) => `${r.pattern} ⊃ ${n}`),
      ),
  );
}

describe("the glossary", () => {
  it("has one entry per word, and ARCHITECTURE.md's table lists the same words in order", () => {
    const words = glossary.terms.map((t) => t.word);
    expect(new Set(words).size).toBe(words.length);
    expect(tableWords(read("docs/ARCHITECTURE.md"))).toEqual(words);
  });

  it("retires with patterns that compile, each naming what it becomes", () => {
    for (const t of glossary.terms)
      for (const r of t.retired) expect(() => new RegExp(r.pattern, "g")).not.toThrow();
  });

  it("never retires a name it keeps (a pattern as broad as the word itself is refused)", () => {
    expect(overreach(glossary)).toEqual([]);
    // The control: `call` itself is a kept name, so retiring bare `call` is caught.
    const broad = structuredClone(glossary);
    broad.terms[0]?.retired.push({ kind: "identifier", pattern: "\\bcall\\b", instead: "x" });
    expect(overreach(broad)).toContain("\\bcall\\b ⊃ call");
  });

  it("finds retired names where they are (the lint's reader works)", () => {
    const files = sourceFiles(ROOT) as string[];
    expect(files).toContain("src/core/session-core.ts");
    const uses = retiredUses(
      { terms: [{ retired: [{ kind: "identifier", pattern: "\\bstep\\b", instead: "x" }] }] },
      ["src/core/session-core.ts"],
      read,
    ) as { hits: unknown[] }[];
    expect(uses[0]?.hits.length).toBeGreaterThan(0);
  });

  it("src/ uses none of the names it retires (the glossary's words are the code's)", () => {
    const uses = retiredUses(glossary, sourceFiles(ROOT), read) as {
      retired: { pattern: string };
      hits: { file: string; line: number }[];
    }[];
    const found = uses.flatMap((u) =>
      u.hits.map((h) => `${h.file}:${h.line} ${u.retired.pattern}`),
    );
    expect(found).toEqual([]);
    // The control: a file that still says `UpstreamLink` is caught, by file and line.
    const stale = retiredUses(
      glossary,
      ["src/session/stale.ts"],
      () => "\nclass UpstreamLink {}",
    ) as {
      hits: { file: string; line: number }[];
    }[];
    expect(stale.flatMap((u) => u.hits)).toEqual([{ file: "src/session/stale.ts", line: 2 }]);
  });
});
