/**
 * What each model costs, as its service publishes it: tokens by modality (Gemini Live, OpenAI
 * Realtime) or active seconds (GPT-Live). Shipped with the prices sourced below; an app
 * overrides or adds models with `createLiveline({ prices })`. A model found nowhere has no
 * price, and its cost says "unpriced" (cost.ts), never 0.
 */
import { z } from "zod";

/** USD per 1M tokens, by modality as the service names it (`TEXT`, `AUDIO`, `IMAGE`, …). */
const PerModality = z.record(z.string().regex(/^[A-Z]+$/), z.number().nonnegative());

/**
 * A model's price. Every part is optional: usage of a part with no price is named as
 * unpriced in the cost, never counted as free.
 */
export const ModelPrice = z.strictObject({
  /** Input tokens, USD per 1M, by modality. */
  input: PerModality.optional(),
  /** Input tokens the service served from its cache, USD per 1M, by modality. */
  cachedInput: PerModality.optional(),
  /** Output tokens (thinking tokens at the TEXT rate), USD per 1M, by modality. */
  output: PerModality.optional(),
  /** A model billed by time: USD per metered second. */
  perSecond: z.number().nonnegative().optional(),
  /** Where the figures come from, and when they were read. */
  source: z.string().max(500).optional(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/** An app's prices, by exact model id (the bare id: no `models/` or Vertex path). */
export const PriceOverrides = z.record(z.string().min(1), ModelPrice);
export type PriceOverrides = z.infer<typeof PriceOverrides>;

interface ShippedPrice {
  /** Matched against the bare model id. */
  pattern: RegExp;
  price: ModelPrice;
}

// OpenAI's model page for gpt-realtime (developers.openai.com, read 2026-11-24).
const GPT_REALTIME: ModelPrice = {
  input: { TEXT: 4, AUDIO: 32 },
  cachedInput: { TEXT: 0.4, AUDIO: 0.4 },
  output: { TEXT: 16, AUDIO: 64 },
  source: "developers.openai.com/api/docs/models/gpt-realtime (read 2026-11-24)",
};

// Google's Gemini API pricing for Gemini 2.5 Flash Live / native audio, paid tier, as a
// dated copy of ai.google.dev/gemini-api/docs/pricing quotes it (verified 2026-05-16).
const GEMINI_25_FLASH_LIVE: ModelPrice = {
  input: { TEXT: 0.5, AUDIO: 3, IMAGE: 3, VIDEO: 3 },
  output: { TEXT: 2, AUDIO: 12 },
  source: "ai.google.dev/gemini-api/docs/pricing, Gemini 2.5 Flash Live (as of 2026-05-16)",
};

// OpenAI's voice latency and cost guide: GPT-Live is billed $0.05 per active minute. Its
// delegation backend's tokens are billed as that model's own: unpriced unless the app adds it.
const GPT_LIVE: ModelPrice = {
  perSecond: 0.05 / 60,
  source: "OpenAI voice agents guide, latency and cost: $0.05 per active minute",
};

/**
 * First match wins. Models not listed (Gemini 3.x Live among them: no published figure was
 * found for its Live API) are unpriced until an app prices them.
 */
const SHIPPED: readonly ShippedPrice[] = [
  { pattern: /^gpt-realtime(-\d{4}-\d{2}-\d{2})?$/, price: GPT_REALTIME },
  {
    pattern: /^gemini-2\.5-flash-(native-audio|live)|^gemini-live-2\.5-flash/,
    price: GEMINI_25_FLASH_LIVE,
  },
  { pattern: /^gpt-live-1(-\d{4}-\d{2}-\d{2})?$/, price: GPT_LIVE },
];

/** The bare model id: "models/x" → "x", "projects/…/models/x" → "x". */
function bare(model: string): string {
  return model.slice(model.lastIndexOf("/") + 1);
}

/** The model's price: the app's, else the shipped one, else none. */
export function priceFor(model: string, overrides: PriceOverrides = {}): ModelPrice | null {
  const id = bare(model);
  const own = overrides[id] ?? overrides[model];
  if (own !== undefined) return own;
  return SHIPPED.find((row) => row.pattern.test(id))?.price ?? null;
}
