import type { z } from "zod";
import { varsReader } from "../var-schemas.js";
import type { AgentSpec, AudioEncoding, ModelRoute } from "../vocabulary/provider-adapter.js";

/**
 * What a session's provider is set up from. `vars`: the provider's own Worker vars, parsed by
 * its schema; `bindings`: the Worker's env, for the bindings it needs (e.g. a namespace).
 */
export interface ProviderRequest<Vars, Bindings> {
  vars: Vars;
  bindings: Bindings;
  sessionId: string;
  agent: AgentSpec;
  metadata: Record<string, unknown>;
  /** The audio the session would rather speak (a phone call's: g711_ulaw); pcm16 always works. */
  audio: AudioEncoding;
  /** A measurement arm's wire (the naive relay's: as frameworks speak it), or null. */
  wireArm: WireArm | null;
}

/**
 * How a measurement arm speaks the wire instead of liveline (the naive relay of
 * scripts/measurement), opaque here: the contract names no provider. The provider that serves
 * measurement sessions (the simulator, on whose sessions alone `metadata.naive` is taken)
 * defines its shape and reads it; every other provider ignores it.
 */
export type WireArm = object;

/**
 * A provider as the registry lists it: one per folder in src/providers. `vars` is the zod
 * schema of the Worker vars it reads (secrets included); src/worker-config.ts composes every
 * provider's schema into the Worker's configuration, so a bad value is reported by name at
 * every request, never at a session's first connection.
 */
export interface Provider<Shape extends z.ZodRawShape, Bindings extends object = object> {
  vars: z.ZodObject<Shape>;
  /** Why it cannot serve sessions under these vars (named settings, never values), or null. */
  unavailable(vars: z.output<z.ZodObject<Shape>>): string | null;
  /** Why this session's metadata cannot be served (checked at creation), or null. */
  metadataProblem?(
    vars: z.output<z.ZodObject<Shape>>,
    metadata: Record<string, unknown>,
  ): string | null;
  session(request: ProviderRequest<z.output<z.ZodObject<Shape>>, Bindings>): ModelRoute;
  /**
   * What to tell an operator about the model a session would ask for (`model`: the session's
   * own, else the configured one) at `now`: one past its shutdown date, by name; or null.
   */
  modelWarning?(
    vars: z.output<z.ZodObject<Shape>>,
    model: string | undefined,
    now: number,
  ): string | null;
}

/**
 * Ids made up for calls that came without one must never repeat in a session's log, also
 * across restarts of its object: a random part per instance, a number per connection.
 */
export function callIdPrefix(attempt: number, instance: string): string {
  return `c${instance}-${attempt}`;
}

/** A provider with its types erased, as the registry holds it: it reads the raw Worker env. */
export interface RegisteredProvider<Shape extends z.ZodRawShape, Bindings extends object> {
  vars: z.ZodObject<Shape>;
  unavailable(env: object): string | null;
  metadataProblem(env: object, metadata: Record<string, unknown>): string | null;
  session(
    request: Omit<ProviderRequest<unknown, unknown>, "vars" | "bindings"> & { env: Bindings },
  ): ModelRoute;
  modelWarning(env: object, model: string | undefined, now: number): string | null;
}

/** Erases a provider's types: its vars are parsed from the raw env (once per env object). */
export function registered<Shape extends z.ZodRawShape, Bindings extends object>(
  provider: Provider<Shape, Bindings>,
): RegisteredProvider<Shape, Bindings> {
  const varsOf = varsReader(provider.vars);
  return {
    vars: provider.vars,
    unavailable: (env) => provider.unavailable(varsOf(env)),
    metadataProblem: (env, metadata) => provider.metadataProblem?.(varsOf(env), metadata) ?? null,
    session: ({ env, ...rest }) => provider.session({ ...rest, vars: varsOf(env), bindings: env }),
    modelWarning: (env, model, now) => provider.modelWarning?.(varsOf(env), model, now) ?? null,
  };
}
