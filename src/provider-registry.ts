/**
 * The providers, by the name a session asks for: the product's real ones built in, and those an
 * app adds (`createLiveline({ extensions })`, e.g. the simulator from `liveline/simulator`).
 * Adding a built-in one: a folder in src/providers whose provider.ts exports a `Provider`
 * (src/providers/contract.ts: its vars schema, availability, session) with an adapter
 * implementing `ProviderAdapter` (src/vocabulary/provider-adapter.ts), its line in `BUILT_IN`
 * below and its name in `PROVIDER_NAMES`. Vars and env types follow.
 */
import type { z } from "zod";
import { azureProvider } from "./providers/azure/provider.js";
import { type ProviderRequest, type RegisteredProvider, registered } from "./providers/contract.js";
import { geminiProvider } from "./providers/gemini/provider.js";
import { gptLiveProvider } from "./providers/gpt-live/provider.js";
import { openaiProvider } from "./providers/openai/provider.js";
import { xaiProvider } from "./providers/xai/provider.js";
import type { ModelRoute } from "./vocabulary/provider-adapter.js";

/** The real providers, always there: what the product ships. */
const BUILT_IN = {
  gemini: registered(geminiProvider),
  openai: registered(openaiProvider),
  "gpt-live": registered(gptLiveProvider),
  xai: registered(xaiProvider),
  azure: registered(azureProvider),
};

/**
 * Every name a session may ask for (the protocol's): the built-in ones and `simulator`, whose
 * provider an app adds with `liveline/simulator` (a gateway without it does not offer it).
 */
export const PROVIDER_NAMES = ["simulator", ...Object.keys(BUILT_IN)] as [
  "simulator",
  ...BuiltInProviderName[],
];
export type BuiltInProviderName = keyof typeof BUILT_IN;
export type ProviderName = "simulator" | BuiltInProviderName;
export const BUILT_IN_PROVIDER_NAMES = Object.keys(BUILT_IN) as BuiltInProviderName[];

/** A provider an app adds, its types erased (what `registered` makes of a `Provider`). */
export type AddedProvider = RegisteredProvider<z.ZodRawShape, object>;

type BuiltIn = typeof BUILT_IN;
type BindingsOf<P> = P extends RegisteredProvider<infer _S, infer B> ? B : never;

/** The Worker env's bindings the built-in providers need (src/contracts/worker-env.ts declares them). */
export type ProviderBindings = {
  [Name in BuiltInProviderName]: (bindings: BindingsOf<BuiltIn[Name]>) => void;
}[BuiltInProviderName] extends (bindings: infer All) => void
  ? All
  : never;

/** The names of the built-in providers' Worker vars. */
export type ProviderVarNames =
  BuiltIn[BuiltInProviderName] extends RegisteredProvider<infer S, infer _B>
    ? keyof S & string
    : never;

/**
 * The providers apps added, by name. One Worker runs one app, so one table per isolate; adding
 * the same provider again (a second `createLiveline`, a test) is harmless.
 */
const added = new Map<ProviderName, AddedProvider>();

/** Adds an app's provider under its name (a built-in one cannot be replaced). */
export function addProvider(name: ProviderName, provider: AddedProvider): void {
  if (Object.hasOwn(BUILT_IN, name))
    throw new Error(`liveline: "${name}" is a built-in provider; an extension cannot replace it`);
  const before = added.get(name);
  if (before !== undefined && before !== provider)
    throw new Error(`liveline: two extensions add a provider named "${name}"`);
  added.set(name, provider);
}

/** The providers this Worker has: the built-in ones, then those its app added. */
export function providerNames(): ProviderName[] {
  return [...BUILT_IN_PROVIDER_NAMES, ...added.keys()];
}

function entry(name: ProviderName): AddedProvider {
  const provider = Object.hasOwn(BUILT_IN, name)
    ? BUILT_IN[name as BuiltInProviderName]
    : added.get(name);
  if (provider === undefined)
    throw new Error(
      `liveline: no provider "${name}" in this Worker${name === "simulator" ? ' (add it: createLiveline({ extensions: [simulator] }) with simulator from "liveline/simulator")' : ""}`,
    );
  return provider;
}

/** The var schema of these providers, for src/worker-config.ts to compose. */
export function providerVars(names: readonly ProviderName[]): z.ZodRawShape {
  return Object.assign({}, ...names.map((name) => entry(name).vars.shape));
}

/** Why a provider cannot serve a new session under this env's vars, or null when it can. */
export function providerUnavailable(env: object, provider: ProviderName): string | null {
  return entry(provider).unavailable(env);
}

/** Why a new session's metadata cannot be served by its provider, or null. */
export function providerMetadataProblem(
  provider: ProviderName,
  env: object,
  metadata: Record<string, unknown>,
): string | null {
  return entry(provider).metadataProblem(env, metadata);
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
  return entry(provider).modelWarning(env, model, now);
}

/** How a session reaches its model. */
export function providerSession(
  provider: ProviderName,
  request: Omit<ProviderRequest<unknown, unknown>, "vars" | "bindings"> & { env: ProviderBindings },
): ModelRoute {
  // The env is the Worker's, with every binding its app declared (an added provider's too).
  return entry(provider).session(request);
}
