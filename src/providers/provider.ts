import type { Config, ProviderName } from "../config.js";
import type { AgentSpec, ProviderSession } from "../vocabulary/provider.js";

/** What a session's provider is set up from. `env`: the Worker's vars and bindings. */
export interface ProviderRequest<Env> {
  config: Config;
  env: Env;
  sessionId: string;
  agent: AgentSpec;
  metadata: Record<string, unknown>;
  /** The naive relay (a measurement arm): seeds a rebuild the way frameworks did. */
  naive: boolean;
}

/** A provider as the registry lists it: one per folder in src/providers. */
export interface Provider<Env = unknown> {
  name: ProviderName;
  /** Why it cannot serve sessions under this config (named settings, never values), or null. */
  unavailable(config: Config): string | null;
  /** Why this session's metadata cannot be served (checked at creation), or null. */
  metadataProblem?(env: Env, metadata: Record<string, unknown>): string | null;
  session(request: ProviderRequest<Env>): ProviderSession;
}

/**
 * Ids made up for calls that came without one must never repeat in a session's log, also
 * across restarts of its object: a random part per instance, a number per connection.
 */
export function callIdPrefix(attempt: number, instance: string): string {
  return `c${instance}-${attempt}`;
}
