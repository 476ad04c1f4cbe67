import { describe, expect, it } from "vitest";
import { costOf, emptyUsage, sumCosts } from "../../src/metering/cost.js";
import { priceFor } from "../../src/metering/prices.js";
import type { UsageTotals } from "../../src/vocabulary/model.js";

function usage(over: Partial<UsageTotals>): UsageTotals {
  return { ...emptyUsage(), ...over };
}

describe("the price table", () => {
  it("prices the shipped models by their bare id, and an app's prices win", () => {
    expect(priceFor("gpt-realtime")?.output?.AUDIO).toBe(64);
    expect(priceFor("gpt-realtime-2025-08-28")?.input?.TEXT).toBe(4);
    // Another model of the family is another price: not guessed from its name.
    expect(priceFor("gpt-realtime-mini")).toBeNull();
    expect(priceFor("models/gemini-2.5-flash-native-audio-preview-12-2025")?.input?.AUDIO).toBe(3);
    expect(priceFor("gpt-live-1")?.perSecond).toBeCloseTo(0.05 / 60, 10);
    expect(priceFor("gemini-3.1-flash-live-preview")).toBeNull();
    const own = { output: { TEXT: 1 } };
    expect(
      priceFor("gemini-3.1-flash-live-preview", { "gemini-3.1-flash-live-preview": own }),
    ).toBe(own);
    expect(priceFor("gpt-realtime", { "gpt-realtime": own })).toBe(own);
  });
});

describe("a cost", () => {
  it("is each modality's tokens at its rate, the cached share at the cached rate", () => {
    const u = usage({
      promptTokens: 1_000,
      promptByModality: { TEXT: 400, AUDIO: 600 },
      cachedTokens: 300,
      cachedByModality: { TEXT: 100, AUDIO: 200 },
      responseTokens: 500,
      responseByModality: { TEXT: 100, AUDIO: 400 },
    });
    // gpt-realtime: text 4 / cached 0.40 / out 16; audio 32 / cached 0.40 / out 64 (per 1M).
    const expected = (300 * 4 + 100 * 0.4 + 400 * 32 + 200 * 0.4 + 100 * 16 + 400 * 64) / 1e6;
    const cost = costOf(u, priceFor("gpt-realtime"));
    expect(cost.status).toBe("priced");
    expect(cost.status === "priced" && cost.usd).toBeCloseTo(expected, 8);
  });

  it("counts tokens the service gave no modality for, tool-use prompts and thinking as TEXT", () => {
    const u = usage({
      promptTokens: 522,
      promptByModality: { TEXT: 332, AUDIO: 165 },
      toolUsePromptTokens: 10,
      responseTokens: 42,
      responseByModality: { AUDIO: 42 },
      thoughtsTokens: 136,
    });
    const price = { input: { TEXT: 1, AUDIO: 10 }, output: { TEXT: 100, AUDIO: 1000 } };
    const expected = ((332 + 25 + 10) * 1 + 165 * 10 + 42 * 1000 + 136 * 100) / 1e6;
    const cost = costOf(u, price);
    expect(cost).toEqual({ status: "priced", usd: Math.round(expected * 1e8) / 1e8 });
  });

  it("says unpriced for a model with no price, never 0, even with no usage", () => {
    expect(costOf(usage({ promptTokens: 100 }), null)).toEqual({
      status: "unpriced",
      unpriced: ["model"],
    });
    expect(costOf(emptyUsage(), null)).toEqual({ status: "unpriced", unpriced: ["model"] });
    expect(costOf(emptyUsage(), priceFor("gpt-realtime"))).toEqual({ status: "priced", usd: 0 });
  });

  it("names what its price does not cover: GPT-Live's backend tokens beside its seconds", () => {
    const u = usage({ seconds: 60, promptTokens: 1_000, responseTokens: 50 });
    const cost = costOf(u, priceFor("gpt-live-1"));
    expect(cost).toEqual({
      status: "partial",
      usd: 0.05,
      unpriced: ["input TEXT tokens", "output TEXT tokens"],
    });
  });

  it("of a session is the sum of its turns', unpriced parts kept by name", () => {
    const price = priceFor("gpt-realtime");
    const a = costOf(usage({ promptTokens: 1_000_000 }), price);
    const b = costOf(usage({ responseTokens: 1_000_000 }), price);
    expect(sumCosts([a, b], costOf(emptyUsage(), price))).toEqual({ status: "priced", usd: 20 });
    const unpriced = costOf(usage({ promptTokens: 5 }), null);
    expect(sumCosts([a, unpriced], { status: "priced", usd: 0 })).toEqual({
      status: "partial",
      usd: 4,
      unpriced: ["model"],
    });
    expect(sumCosts([unpriced, unpriced], { status: "priced", usd: 0 })).toEqual(unpriced);
    expect(sumCosts([], { status: "unpriced", unpriced: ["model"] }).status).toBe("unpriced");
  });
});
