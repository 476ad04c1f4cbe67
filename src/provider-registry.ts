/**
 * The providers, by the name a session asks for. Adding one: a folder in src/providers
 * whose provider.ts exports a `Provider` (src/providers/contract.ts: its vars schema,
 * availability, session) with an adapter implementing `ProviderAdapter`
 * (src/vocabulary/provider-adapter.ts), and its line below. Names, vars and env types follow.
 */
import type { z } from "zod";
import { azureProvider } from "./providers/azure/provider.js";
import { type ProviderRequest, type RegisteredProvider, registered } from "./providers/contract.js";
import { geminiProvider } from "./providers/gemini/provider.js";
import { gptLiveProvider } from "./providers/gpt-live/provider.js";
import { openaiProvider } from "./providers/openai/provider.js";
import { xaiProvider } from "./providers/xai/provider.js";
import { simulatorProvider } from "./simulator/simulated-provider.js";
import type { ProviderSession } from "./vocabulary/provider-adapter.js";

export const PROVIDERS = {
  simulator: registered(simulatorProvider),
  gemini: registered(geminiProvider),
  openai: registered(openaiProvider),
  "gpt-live": registered(gptLiveProvider),
  xai: registered(xaiProvider),
  azure: registered(azureProvider),
};

export type ProviderName = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as [ProviderName, ...ProviderName[]];

type Entry = (typeof PROVIDERS)[ProviderName];
type BindingsOf<P> = P extends RegisteredProvider<infer _S, infer B> ? B : never;

/** The Worker env's bindings every provider needs (src/contracts/worker-env.ts declares them). */
export type ProviderBindings = {
  [Name in ProviderName]: (bindings: BindingsOf<(typeof PROVIDERS)[Name]>) => void;
}[ProviderName] extends (bindings: infer All) => void
  ? All
  : never;

/** The names of every provider's Worker vars. */
export type ProviderVarNames =
  Entry extends RegisteredProvider<infer S, infer _B> ? keyof S & string : never;

/** Every provider's var schema, for src/worker-config.ts to compose (and src/contracts/worker-env.ts to type). */
export const PROVIDER_VARS: z.ZodRawShape = Object.assign(
  {},
  ...Object.values(PROVIDERS).map((p) => p.vars.shape),
);

/** Why a provider cannot serve a new session under this env's vars, or null when it can. */
export function providerUnavailable(env: object, provider: ProviderName): string | null {
  return PROVIDERS[provider].unavailable(env);
}

/** Why a new session's metadata cannot be served by its provider, or null. */
export function providerMetadataProblem(
  provider: ProviderName,
  env: object,
  metadata: Record<string, unknown>,
): string | null {
  return PROVIDERS[provider].metadataProblem(env, metadata);
}

/**
 * What to tell an operator about the model a session of `provider` would ask for (`model`: the
 * session's own, else the configured one): one past its shutdown date, by name; or null.
 */
export function providerModelWarning(
  provider: ProviderName,
  env: object,
  model: string | undefined,
  now: number,
): string | null {
  return PROVIDERS[provider].modelWarning(env, model, now);
}

/** How a session reaches its model. */
export function providerSession(
  provider: ProviderName,
  request: Omit<ProviderRequest<unknown, unknown>, "vars" | "bindings"> & { env: ProviderBindings },
): ProviderSession {
  return PROVIDERS[provider].session(request);
}
