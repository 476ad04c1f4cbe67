/**
 * A GPT-Live seed (`session.start`'s `input`) never parts a call from its result, whatever the
 * trim to the service's 128 messages and 8,192 tokens keeps (PROTOCOL promises they "travel
 * together as one note"). A property over random conversations and every trim position;
 * control: the encoding before issue 52 (a note for the calls, another for the results), which
 * the same trim splits.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitSeed, seedItems } from "../../../src/providers/gpt-live/adapter.js";
import type { InitialItem } from "../../../src/providers/gpt-live/schemas.js";
import type { ContextItem } from "../../../src/vocabulary/model.js";

const RUNS = Number(process.env.FC_RUNS ?? 200);

/** A conversation as a rebuilt context has it: lines, words, and calls answered later. */
const conversation = fc
  .array(
    fc.record({
      line: fc.string({ maxLength: 40 }),
      words: fc.string({ maxLength: 120 }),
      calls: fc.integer({ min: 0, max: 3 }),
      // Where the results stand: right after the calls, or after the model's words (owed).
      resultsAfterWords: fc.boolean(),
      outcome: fc.constantFrom("ok", "cancelled", "error"),
    }),
    { maxLength: 40 },
  )
  .map((turns) => {
    const items: ContextItem[] = [];
    let n = 0;
    for (const turn of turns) {
      items.push({ role: "user", text: turn.line });
      const calls = Array.from({ length: turn.calls }, () => ({
        id: `call_${++n}`,
        name: `tool_${n % 3}`,
        args: { q: turn.line.slice(0, 10) },
      }));
      const results = calls.map((c) =>
        turn.outcome === "ok"
          ? { callId: c.id, name: c.name, result: { value: turn.words.slice(0, 30) } }
          : {
              callId: c.id,
              name: c.name,
              error: turn.outcome === "cancelled" ? "cancelled: barge_in" : "timed out",
            },
      );
      if (calls.length > 0) items.push({ role: "model_calls", calls });
      if (calls.length > 0 && !turn.resultsAfterWords)
        items.push({ role: "tool_results", results });
      items.push({ role: "model", text: turn.words });
      if (calls.length > 0 && turn.resultsAfterWords) items.push({ role: "tool_results", results });
    }
    return items;
  });

const textOf = (item: InitialItem) => item.content.map((p) => p.text).join("");

/** Call ids whose result a kept message tells without the call in the same message. */
function parted(kept: readonly InitialItem[]): string[] {
  const out: string[] = [];
  for (const item of kept) {
    const text = textOf(item);
    for (const [, id] of text.matchAll(/\((call_\d+)\) (?:returned|was cancelled)/g)) {
      const name = text.match(new RegExp(`(tool_\\d)\\s*\\(${id}\\)`))?.[1];
      if (name === undefined || !text.includes(`You called ${name}(`)) out.push(id!);
    }
  }
  return out;
}

/**
 * Every trim the limits can make: a trim keeps the newest items, so each is a suffix. Each
 * message count, and each token budget at the edge of a suffix (its cost, and one less).
 */
function everyTrim(items: readonly InitialItem[]): InitialItem[][] {
  const trims: InitialItem[][] = [];
  let cost = 0;
  for (let k = 0; k <= items.length; k++) {
    trims.push(fitSeed(items, { messages: k, tokens: Number.POSITIVE_INFINITY }));
    for (const tokens of [cost, cost - 1])
      if (tokens >= 0) trims.push(fitSeed(items, { messages: Number.POSITIVE_INFINITY, tokens }));
    const next = items[items.length - 1 - k];
    if (next !== undefined) cost += Math.ceil(textOf(next).length / 4);
  }
  return trims;
}

/** The seed before issue 52: a note for a turn's calls, another for its results. */
function pairsApart(context: readonly ContextItem[]): InitialItem[] {
  const note = (text: string): InitialItem => ({
    role: "developer",
    content: [{ type: "input_text", text }],
  });
  return context.map((item): InitialItem => {
    switch (item.role) {
      case "user":
        return { role: "user", content: [{ type: "input_text", text: item.text }] };
      case "model":
        return { role: "assistant", content: [{ type: "output_text", text: item.text }] };
      case "model_calls":
        return note(
          item.calls.map((c) => `You called ${c.name}(${JSON.stringify(c.args)}).`).join(" "),
        );
      case "tool_results":
        return note(item.results.map((r) => `${r.name} (${r.callId}) returned {}.`).join(" "));
      default:
        return item satisfies never;
    }
  });
}

describe("a GPT-Live seed, trimmed to the service's limits", () => {
  it("never keeps a result without its call, at any trim position (property)", () => {
    fc.assert(
      fc.property(conversation, (context) =>
        everyTrim(seedItems(context)).every((kept) => parted(kept).length === 0),
      ),
      { numRuns: RUNS, seed: 52 },
    );
  });

  it("control: with a call and its result as two notes, some trim keeps the result alone", () => {
    const found = fc.check(
      fc.property(conversation, (context) =>
        everyTrim(pairsApart(context)).every((kept) => parted(kept).length === 0),
      ),
      { numRuns: RUNS, seed: 52 },
    );
    expect(found.failed).toBe(true);
  });

  it("a result after the model's words stays there (owed), its call told with it", () => {
    const items = seedItems([
      { role: "user", text: "order 7?" },
      { role: "model_calls", calls: [{ id: "call_1", name: "lookup", args: { id: "7" } }] },
      { role: "model", text: "Let me check." },
      { role: "tool_results", results: [{ callId: "call_1", name: "lookup", result: { ok: 1 } }] },
    ]);
    expect(items.map((i) => [i.role, textOf(i)])).toEqual([
      ["user", "order 7?"],
      ["assistant", "Let me check."],
      ["developer", 'You called lookup({"id":"7"}): lookup (call_1) returned {"ok":1}.'],
    ]);
  });
});
