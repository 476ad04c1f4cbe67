/**
 * .dev.vars.example says it lists every setting and secret: each name the configuration's
 * schemas know (the Worker's own, every provider's, every carrier's) has a line there,
 * `NAME=` or commented out `# NAME=`, and it lists no name they do not know.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { settingNames } from "../src/worker-config.js";

// The providers' registry reaches the simulator's Durable Object class (never built here).
vi.mock("cloudflare:workers", () => ({ DurableObject: class {} }));

// (The tests run from the repository's root.)
const EXAMPLE = join(process.cwd(), ".dev.vars.example");

/** The names a .dev.vars text gives a line to (set or commented out). */
function listed(text: string): Set<string> {
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
}

/** What the example lacks and what it has that no schema knows. */
function mismatch(text: string, names: readonly string[]) {
  const has = listed(text);
  return {
    missing: names.filter((n) => !has.has(n)).sort(),
    unknown: [...has].filter((n) => !names.includes(n)).sort(),
  };
}

describe(".dev.vars.example", () => {
  it("lists every setting the configuration knows, and nothing else", () => {
    const text = readFileSync(EXAMPLE, "utf8");
    expect(mismatch(text, settingNames())).toEqual({ missing: [], unknown: [] });
  });

  it("control: a setting's line taken out, or a stray one put in, is found", () => {
    const text = readFileSync(EXAMPLE, "utf8");
    const without = text.replace(/^#?\s*TIMELINE_MAX_ROWS=.*$/m, "");
    expect(mismatch(without, settingNames()).missing).toEqual(["TIMELINE_MAX_ROWS"]);
    expect(mismatch(`${text}\nNOT_A_SETTING=1\n`, settingNames()).unknown).toEqual([
      "NOT_A_SETTING",
    ]);
  });
});
