/**
 * A turn's or a session's cost, from the usage its model reported and the model's price
 * (prices.ts). Pure: the same usage and price always give the same figure. Usage the price
 * does not cover is named, never counted as free.
 */
import type { UsageTotals } from "../vocabulary/model.js";
import type { ModelPrice } from "./prices.js";

/**
 * `priced`: every part of the usage had a price. `partial`: `usd` covers the parts that had
 * one; `unpriced` names the rest. `unpriced`: the model has no price (no figure is given).
 */
export type Cost =
  | { status: "priced"; usd: number }
  | { status: "partial"; usd: number; unpriced: string[] }
  | { status: "unpriced"; unpriced: string[] };

/** No usage: what a turn that reported none used. */
export function emptyUsage(): UsageTotals {
  return {
    responses: 0,
    promptTokens: 0,
    responseTokens: 0,
    totalTokens: 0,
    cachedTokens: 0,
    thoughtsTokens: 0,
    toolUsePromptTokens: 0,
    promptByModality: {},
    responseByModality: {},
    cachedByModality: {},
    seconds: 0,
  };
}

const PER_MILLION = 1_000_000;

/** One billed quantity of the usage and its rate (undefined: no price for it). */
interface Part {
  label: string;
  quantity: number;
  /** USD per unit. */
  rate: number | undefined;
}

export function costOf(usage: UsageTotals, price: ModelPrice | null): Cost {
  if (price === null) return { status: "unpriced", unpriced: ["model"] };
  let usd = 0;
  const unpriced: string[] = [];
  for (const part of partsOf(usage, price)) {
    if (part.quantity <= 0) continue;
    if (part.rate === undefined) unpriced.push(part.label);
    else usd += part.quantity * part.rate;
  }
  usd = roundUsd(usd);
  return unpriced.length === 0 ? { status: "priced", usd } : { status: "partial", usd, unpriced };
}

/**
 * The sum of several costs (a session's, of its turns', each priced by its own model):
 * unpriced parts are kept by name; with no cost at all, `none` (what no usage costs).
 */
export function sumCosts(costs: readonly Cost[], none: Cost): Cost {
  if (costs.length === 0) return none;
  let usd = 0;
  let priced = false;
  const unpriced = new Set<string>();
  for (const cost of costs) {
    if (cost.status !== "unpriced") {
      usd += cost.usd;
      priced = true;
    }
    if (cost.status !== "priced") for (const label of cost.unpriced) unpriced.add(label);
  }
  if (!priced) return { status: "unpriced", unpriced: [...unpriced] };
  usd = roundUsd(usd);
  return unpriced.size === 0
    ? { status: "priced", usd }
    : { status: "partial", usd, unpriced: [...unpriced] };
}

/**
 * What the usage bills: input by modality (its cached share at the cached rate), output by
 * modality, thinking as TEXT output, metered seconds. Tokens the service counted without
 * naming a modality (Gemini's details can fall short of its total; a tool-use prompt) are
 * TEXT, the modality every prompt carries.
 */
function partsOf(u: UsageTotals, price: ModelPrice): Part[] {
  const input = withRemainder(u.promptByModality, u.promptTokens + u.toolUsePromptTokens);
  const cached = withRemainder(u.cachedByModality, u.cachedTokens);
  const output = withRemainder(u.responseByModality, u.responseTokens);
  const parts: Part[] = [];
  for (const [modality, tokens] of Object.entries(input)) {
    const inCache = Math.min(tokens, cached[modality] ?? 0);
    parts.push(tokenPart(`input ${modality} tokens`, tokens - inCache, price.input?.[modality]));
    parts.push(
      tokenPart(`cached input ${modality} tokens`, inCache, price.cachedInput?.[modality]),
    );
  }
  for (const [modality, tokens] of Object.entries(output))
    parts.push(tokenPart(`output ${modality} tokens`, tokens, price.output?.[modality]));
  parts.push(tokenPart("thinking tokens", u.thoughtsTokens, price.output?.TEXT));
  parts.push({ label: "metered seconds", quantity: u.seconds, rate: price.perSecond });
  return parts;
}

function tokenPart(label: string, tokens: number, perMillion: number | undefined): Part {
  return {
    label,
    quantity: tokens,
    rate: perMillion === undefined ? undefined : perMillion / PER_MILLION,
  };
}

/** The counts by modality, with what the total has beyond them added to TEXT. */
function withRemainder(byModality: Record<string, number>, total: number): Record<string, number> {
  const out = { ...byModality };
  const named = Object.values(out).reduce((a, b) => a + b, 0);
  if (total > named) out.TEXT = (out.TEXT ?? 0) + (total - named);
  return out;
}

/** To a millionth of a cent: sums of many small float products stay readable. */
function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}
