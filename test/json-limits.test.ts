/** utf8Bytes counts as the wire and SQLite do: TextEncoder's length, for any string. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8Bytes } from "../src/json-limits.js";

describe("utf8Bytes", () => {
  it("is TextEncoder's byte length, lone surrogates and all", () => {
    const encoder = new TextEncoder();
    fc.assert(
      // Any UTF-16 code units, lone surrogates included (fast-check's "binary" unit is slow to build).
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 64 }), (units) => {
        const text = String.fromCharCode(...units);
        return utf8Bytes(text) === encoder.encode(text).byteLength;
      }),
      { numRuns: 2_000 },
    );
    for (const text of ["", "a", "é", "語", "💬", "\ud800", "\udc00x", "a\ud83d"])
      expect(utf8Bytes(text), JSON.stringify(text)).toBe(encoder.encode(text).byteLength);
  });
});
