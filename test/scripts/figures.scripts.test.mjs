import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FIGURES,
  figuresTarget,
  markers,
  replaceSection,
  writeFigures,
} from "../../scripts/lib/figures.mjs";
import { flags } from "../../scripts/lib/harness.mjs";
import { sharedGateway } from "../support/shared-gateway.mjs";

/**
 * docs/FIGURES.md is written by npm run repro / bench / soak through scripts/lib/figures.mjs:
 * each replaces only its own section between its markers. Every write here goes to a
 * temporary file; the real document is only read.
 */
const dir = mkdtempSync(join(tmpdir(), "liveline-figures-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { begin, end } = markers("repro");
const other = markers("bench");
const DOC = [
  "# Figures",
  "",
  "## repro",
  "",
  "What the table means.",
  "",
  begin,
  "old repro figures",
  end,
  "",
  "## bench",
  "",
  other.begin,
  "old bench figures",
  other.end,
  "",
  "Trailing text.",
  "",
].join("\n");

describe("replaceSection", () => {
  it("replaces its own section and leaves the rest byte for byte", () => {
    const { text, appended } = replaceSection(DOC, "repro", "new repro figures\n");
    expect(appended).toBe(false);
    expect(text).toBe(DOC.replace("old repro figures", "new repro figures"));
    // Replacing again gives the same document: the markers stay, nothing accumulates.
    expect(replaceSection(text, "repro", "new repro figures").text).toBe(text);
  });

  it("appends the section with its markers when the document has none", () => {
    const doc = "# Figures\n\nNo sections yet.\n";
    const { text, appended } = replaceSection(doc, "soak", "soak figures");
    expect(appended).toBe(true);
    const soak = markers("soak");
    expect(text).toBe(`${doc}\n${soak.begin}\nsoak figures\n${soak.end}\n`);
    expect(replaceSection("", "soak", "x").text).toBe(`${soak.begin}\nx\n${soak.end}\n`);
  });

  it("refuses broken markers with an error naming the file and the markers", () => {
    const cases = [
      DOC.replace(end, ""), // begin without end
      DOC.replace(begin, ""), // end without begin
      `${DOC}\n${begin}\n${end}\n`, // the pair twice
      DOC.replace(begin, "@@").replace(end, begin).replace("@@", end), // end before begin
    ];
    for (const doc of cases) {
      expect(() => replaceSection(doc, "repro", "x", "docs/X.md")).toThrow(
        /docs\/X\.md: the markers of npm run repro are broken .*nothing was written/,
      );
    }
  });

  it("the real docs/FIGURES.md has one well-formed section for each script", () => {
    const doc = readFileSync(FIGURES, "utf8");
    for (const command of ["repro", "bench", "soak"]) {
      expect(replaceSection(doc, command, "x").appended, command).toBe(false);
    }
  });
});

describe("figuresTarget and writeFigures", () => {
  it("a full run writes docs/FIGURES.md; a partial one only when asked", () => {
    const t = (argv, full) => figuresTarget(flags(argv), { full });
    expect(t([], true)).toBe(FIGURES);
    expect(t(["--quick"], false)).toBe(null);
    expect(t(["--quick", "--figures"], false)).toBe(FIGURES);
    expect(t(["--figures", "--quick"], false)).toBe(FIGURES);
    expect(t(["--figures", join(dir, "a.md")], false)).toBe(join(dir, "a.md"));
    expect(t([`--figures=${join(dir, "a.md")}`], true)).toBe(join(dir, "a.md"));
    expect(t(["--no-figures"], true)).toBe(null);
  });

  it("writes the section with the command, date, commit and machine; leaves its own flags out", () => {
    const path = join(dir, "write.md");
    writeFileSync(path, DOC);
    const machine = { cpus: 2, cpuModel: "Test CPU", memGiB: 4, node: "v22", platform: "linux" };
    const line = writeFigures(path, {
      command: "repro",
      machine,
      report: "\n| a | b |\n",
      argv: ["--trials", "5", "--figures", path, "--no-figures"],
    });
    expect(line).toContain("npm run repro's section replaced");
    const text = readFileSync(path, "utf8");
    const inner = text.slice(text.indexOf(begin), text.indexOf(end));
    expect(inner).toContain("`npm run repro -- --trials 5`,");
    expect(inner).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC, commit /);
    expect(inner).toContain("machine: 2 × Test CPU, 4 GiB, linux, node v22");
    expect(inner).toContain("```text\n| a | b |\n```");
    expect(text.slice(0, text.indexOf(begin))).toBe(DOC.slice(0, DOC.indexOf(begin)));
    expect(text.slice(text.indexOf(end))).toBe(DOC.slice(DOC.indexOf(end)));
  });
});

/** The scripts project's shared wrangler dev (test/support/scripts-gateway-setup.mjs). */
let gateway;

function repro(args) {
  const res = spawnSync(
    process.execPath,
    [
      "--import",
      "./scripts/lib/ts-resolve.mjs",
      "--experimental-strip-types",
      "--no-warnings",
      "scripts/repro.mjs",
      "--quick",
      "--trials",
      "1",
      "--only",
      "greeting_race",
      // The scripts project's shared wrangler dev (test/support/scripts-gateway-setup.mjs).
      "--base",
      gateway.base,
      ...args,
    ],
    { encoding: "utf8", timeout: 90_000, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  return { code: res.status, out: `${res.stdout}\n${res.stderr}` };
}

describe("npm run repro -- --quick", () => {
  beforeAll(async () => {
    gateway = await sharedGateway();
  }, 160_000);

  it("with --figures <tmp> writes its section there, the rest of the copy untouched", () => {
    const path = join(dir, "FIGURES.md");
    const before = readFileSync(FIGURES, "utf8");
    writeFileSync(path, before);
    const { code, out } = repro(["--figures", path]);
    expect(code, out).toBe(0);
    expect(out).toContain(`figures: ${path} (npm run repro's section replaced)`);
    const after = readFileSync(path, "utf8");
    expect(after.slice(0, after.indexOf(begin))).toBe(before.slice(0, before.indexOf(begin)));
    expect(after.slice(after.indexOf(end))).toBe(before.slice(before.indexOf(end)));
    const inner = after.slice(after.indexOf(begin), after.indexOf(end));
    expect(inner).toContain("npm run repro -- --quick --trials 1 --only greeting_race`");
    expect(inner).toContain("liveline repro — 1 trials per cell");
    expect(inner).toMatch(
      /\| greeting with fire-and-forget tool calls: duplicate replies \| gemini/,
    );
    expect(inner).not.toContain(path);
  });

  it("without --figures writes nothing (docs/FIGURES.md unchanged)", () => {
    const before = readFileSync(FIGURES, "utf8");
    const { code, out } = repro([]);
    expect(code, out).toBe(0);
    expect(out).not.toContain("figures:");
    expect(readFileSync(FIGURES, "utf8")).toBe(before);
  });
});
