import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64 } from "../../../src/providers/base64.js";

describe("base64 without Buffer", () => {
  it("round-trips a 64 KiB buffer holding every byte value", () => {
    const bytes = new Uint8Array(64 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
    const b64 = bytesToBase64(bytes);
    expect(b64.length).toBe(87384); // ceil(65536 / 3) * 4
    expect(b64.endsWith("=")).toBe(true); // 65536 % 3 == 1 → "=="
    expect(b64.slice(0, -2)).not.toContain("=");
    expect(base64ToBytes(b64)).toEqual(bytes);
  });

  it("matches known vectors, across the chunk boundary", () => {
    expect(bytesToBase64(new Uint8Array([]))).toBe("");
    expect(bytesToBase64(new TextEncoder().encode("000000"))).toBe("MDAwMDAw");
    expect(bytesToBase64(new Uint8Array([0, 1, 2, 3]))).toBe("AAECAw==");
    // 24576 is the chunk length; one byte more must not put padding in the middle.
    const long = new Uint8Array(24577).fill(0xff);
    const b64 = bytesToBase64(long);
    expect(b64).toBe(`${"/".repeat(32768)}/w==`);
  });

  it("round-trips arbitrary buffers (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70000 }), (bytes) => {
        expect(base64ToBytes(bytesToBase64(bytes))).toEqual(bytes);
      }),
      { numRuns: 50 },
    );
  });

  it("encodes a view into a larger buffer as just the view", () => {
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    expect(bytesToBase64(backing.subarray(2, 5))).toBe("AQID");
  });
});
