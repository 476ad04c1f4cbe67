/**
 * The providers, by the name a session asks for. Adding one: a folder in src/providers
 * whose provider.ts implements `Provider` (src/providers/provider.ts) with an adapter that
 * implements `ProviderAdapter` (src/vocabulary/provider.ts), and its line here.
 */
import type { Config, ProviderName } from "../config.js";
import type { ProviderSession } from "../vocabulary/provider.js";
import { type GeminiVars, geminiProvider } from "./gemini/provider.js";
import { openaiProvider } from "./openai/provider.js";
import type { Provider, ProviderRequest } from "./provider.js";
import { type SimulatorVars, simulatorProvider } from "./simulated/provider.js";

/** Everything any provider reads from the Worker's env. */
export type ProviderEnv = GeminiVars & SimulatorVars;

const PROVIDERS: { [Name in ProviderName]: Provider<ProviderEnv> } = {
  simulator: simulatorProvider,
  gemini: geminiProvider,
  openai: openaiProvider,
};

/** Why a provider cannot serve a new session under this config, or null when it can. */
export function providerUnavailable(config: Config, provider: ProviderName): string | null {
  return PROVIDERS[provider].unavailable(config);
}

/** Why a new session's metadata cannot be served by its provider, or null. */
export function providerMetadataProblem(
  provider: ProviderName,
  env: ProviderEnv,
  metadata: Record<string, unknown>,
): string | null {
  return PROVIDERS[provider].metadataProblem?.(env, metadata) ?? null;
}

/** How a session reaches its model. */
export function providerSession(
  provider: ProviderName,
  request: ProviderRequest<ProviderEnv>,
): ProviderSession {
  return PROVIDERS[provider].session(request);
}
