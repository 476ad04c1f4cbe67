// The keys a caller types become entries (ended by # or a pause), and the line the model gets
// for one says its keys, or under `tools` only that it was typed.
import { describe, expect, it } from "vitest";
import { entryLine, Keypad } from "../../src/telephony/keypad.js";

describe("the keypad gathers keys into entries", () => {
  it("# ends an entry at once and is not part of it", () => {
    const keypad = new Keypad();
    expect(["1", "2", "3", "4"].map((k) => keypad.press(k))).toEqual([null, null, null, null]);
    expect(keypad.press("#")).toBe("1234");
    // The next entry starts empty.
    expect(keypad.press("9")).toBeNull();
    expect(keypad.pause()).toBe("9");
  });

  it("a pause ends an entry; a pause with nothing typed is no entry", () => {
    const keypad = new Keypad();
    expect(keypad.pause()).toBeNull();
    keypad.press("5");
    expect(keypad.pause()).toBe("5");
    expect(keypad.pause()).toBeNull();
    // * is a key like the digits.
    keypad.press("*");
    keypad.press("0");
    expect(keypad.pause()).toBe("*0");
  });
});

describe("the line an entry becomes", () => {
  it("said: the model hears the keys", () => {
    expect(entryLine("5", "said")).toBe("(key 5 pressed on the phone)");
    expect(entryLine("1234", "said")).toBe("(keys 1234 pressed on the phone)");
    expect(entryLine("", "said")).toBe("(key # pressed on the phone)");
  });

  it("tools: the model hears only that an entry was typed, never its keys", () => {
    const line = entryLine("4921", "tools");
    expect(line).toBe("(the caller typed 4 keys on the phone; a tool can read them)");
    expect(line).not.toMatch(/[0-9]{2}/);
    expect(entryLine("7", "tools")).toContain("1 key on");
  });
});
