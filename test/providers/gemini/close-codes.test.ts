import { describe, expect, it } from "vitest";
import { classifyClose } from "../../../src/providers/gemini/close-codes.js";

describe("classifyClose", () => {
  it.each([
    [1000, "normal"],
    [1007, "fatal"],
    [1008, "fatal"],
    [1002, "fatal"],
    [1009, "fatal"],
    [1006, "retry"],
    [1011, "retry"],
    [1001, "retry"],
    [1012, "retry"],
    [1013, "retry"],
    [1014, "retry"],
    [1005, "retry"],
    [4000, "retry"],
  ] as const)("%i → %s", (code, expected) => {
    expect(classifyClose(code)).toBe(expected);
  });
});
