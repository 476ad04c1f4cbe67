/**
 * Every document a newcomer reads (README, PROTOCOL.md, docs/*.md) with three sections or more
 * opens with a contents list naming each `##` section, in order (scripts/doc-contents.mjs;
 * `--write` rewrites the lists). The protocol's two halves link to each other. The links
 * themselves resolving is test/self-contained.test.ts's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import * as contents from "../../scripts/doc-contents.mjs";

const { documents, problems, withContents } = contents as {
  documents(root: string): string[];
  problems(text: string): string[];
  withContents(text: string): string;
};

const ROOT = process.cwd();
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe("every document's contents list", () => {
  it("reads README, the protocol, its reference and every doc", () => {
    const docs = documents(ROOT);
    expect(docs).toEqual(
      expect.arrayContaining([
        "README.md",
        "PROTOCOL.md",
        "docs/PROTOCOL-REFERENCE.md",
        "docs/ARCHITECTURE.md",
      ]),
    );
    expect(docs.length).toBeGreaterThan(12);
  });

  it("names every ## section, in order, and nothing else", () => {
    const found = documents(ROOT).flatMap((doc) => problems(read(doc)).map((p) => `${doc}: ${p}`));
    expect(found).toEqual([]);
  });

  it("control: a section left out, one that went, one out of order, and none at all", () => {
    const doc = "# T\n\nIntro.\n\n## One\n\nx\n\n## Two\n\ny\n\n## Three\n\nz\n";
    expect(problems(doc)).toEqual(["no contents list (3 sections)"]);
    const good = withContents(doc);
    expect(good).toContain("Contents: [One](#one) · [Two](#two) · [Three](#three)");
    expect(problems(good)).toEqual([]);
    expect(problems(good.replace("## Two", "## Second"))).toEqual([
      "lists no #second",
      "lists #two, no section of it",
    ]);
    expect(problems(good.replace(" · [Three](#three)", ""))).toEqual(["lists no #three"]);
    expect(
      problems(good.replace("[One](#one) · [Two](#two)", "[Two](#two) · [One](#one)")),
    ).toEqual(["lists the sections out of order"]);
  });

  it("the protocol's contract and reference link to each other", () => {
    expect(read("PROTOCOL.md")).toContain("](docs/PROTOCOL-REFERENCE.md)");
    expect(read("docs/PROTOCOL-REFERENCE.md")).toContain("](../PROTOCOL.md)");
  });
});
