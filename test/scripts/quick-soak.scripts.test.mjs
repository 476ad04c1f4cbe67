import { describe, expect, it } from "vitest";
import { run } from "./quick-run.mjs";

describe("npm run soak, quick", () => {
  it("soak prints its counts with 0 violations", async () => {
    const { code, out } = await run("soak", ["--sessions", "8"]);
    expect(out).toMatch(/\| violations\s+\| 0\s+\|/);
    expect(code, out).toBe(0);
  });
});
