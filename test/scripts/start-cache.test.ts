import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheable, cached, entryKey } from "../../scripts/lib/start-cache.mjs";

/**
 * The gateways' start cache (scripts/lib/start-cache.mjs): an entry is reused only for the
 * sources it was made from, made once, and never left half made.
 */
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A repository of its own: a source, a dependency's file, wrangler's version. */
function repository(source: string): string {
  const root = mkdtempSync(join(tmpdir(), "liveline-cache-test-"));
  made.push(root);
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src/index.ts"), source);
  mkdirSync(join(root, "node_modules/wrangler"), { recursive: true });
  writeFileSync(join(root, "node_modules/wrangler/package.json"), '{"version":"4.0.0"}');
  writeFileSync(join(root, "node_modules/other.js"), "1");
  writeFileSync(join(root, "wrangler.toml"), 'main = "src/index.ts"');
  return root;
}

describe("the start cache", () => {
  it("names an entry by the sources' contents: a changed source is a new entry, a dependency's file is not read", () => {
    const a = repository("export default 1;");
    const same = repository("export default 1;");
    const changed = repository("export default 2;");
    writeFileSync(join(same, "node_modules/other.js"), "2");
    expect(entryKey(same, "main")).toBe(entryKey(a, "main"));
    expect(entryKey(changed, "main")).not.toBe(entryKey(a, "main"));
    // What else it is made from counts too.
    expect(entryKey(a, "other main")).not.toBe(entryKey(a, "main"));
    // wrangler's version is part of it.
    const newer = repository("export default 1;");
    writeFileSync(join(newer, "node_modules/wrangler/package.json"), '{"version":"4.1.0"}');
    expect(entryKey(newer, "main")).not.toBe(entryKey(a, "main"));
  });

  it("makes an entry once, and two makers at once end with one whole entry", async () => {
    const key = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
    let makes = 0;
    const make = async (dir: string) => {
      makes++;
      await new Promise((ok) => setTimeout(ok, 50));
      writeFileSync(join(dir, "worker.js"), "bundle");
    };
    const [one, two] = await Promise.all([cached("test", key, make), cached("test", key, make)]);
    made.push(one);
    expect(two).toBe(one);
    expect(readFileSync(join(one, "worker.js"), "utf8")).toBe("bundle");
    const again = await cached("test", key, make);
    expect(again).toBe(one);
    expect(makes).toBe(2);
  });

  it("keeps nothing of a make that failed: the next start makes it afresh", async () => {
    const key = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
    await expect(
      cached("test", key, async (dir: string) => {
        writeFileSync(join(dir, "worker.js"), "half");
        throw new Error("bundling failed");
      }),
    ).rejects.toThrow("bundling failed");
    const entry = await cached("test", key, async (dir: string) => {
      writeFileSync(join(dir, "worker.js"), "whole");
    });
    made.push(entry);
    expect(readFileSync(join(entry, "worker.js"), "utf8")).toBe("whole");
  });

  it("caches only the repository's own Worker, and nothing with LIVELINE_START_CACHE=off", () => {
    const root = repository("export default 1;");
    const app = mkdtempSync(join(tmpdir(), "liveline-cache-app-"));
    made.push(app);
    cpSync(join(root, "wrangler.toml"), join(app, "wrangler.toml"));
    expect(cacheable(root, join(root, "wrangler.toml"), undefined)).toBe(true);
    expect(cacheable(root, join(app, "wrangler.toml"), app)).toBe(false);
    expect(cacheable(root, join(root, "wrangler.toml"), app)).toBe(false);
    process.env.LIVELINE_START_CACHE = "off";
    try {
      expect(cacheable(root, join(root, "wrangler.toml"), undefined)).toBe(false);
    } finally {
      delete process.env.LIVELINE_START_CACHE;
    }
  });
});
