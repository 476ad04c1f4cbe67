/**
 * What an app gives liveline (`createLiveline`'s options), made ready for the Worker's routes
 * and the session objects: its agents by name, the providers it offers, and its settings
 * (code defaults under the Worker's vars).
 */

import { type Agent, agentProblems } from "./agents/define.js";
import type { Guards } from "./core/core-config.js";
import { PriceOverrides } from "./metering/prices.js";
import {
  type AddedProvider,
  addProvider,
  BUILT_IN_PROVIDER_NAMES,
  type ProviderName,
} from "./provider-registry.js";
import type { WireArm } from "./providers/contract.js";
import type { HistoryEvent } from "./vocabulary/log-events.js";
import type { RebuiltContext } from "./vocabulary/model.js";
import { type Config, configLoader, type SettingDefaults } from "./worker-config.js";

export interface LivelineOptions<Env = unknown> {
  /** The agents a session can be created for, by name (`POST /v1/sessions {"agent": name}`). */
  agents: Readonly<Record<string, Agent<Env>>>;
  /** The agent of a session that names none (default: the first of `agents`). */
  defaultAgent?: string;
  /**
   * What the app adds to the product: `[simulator]` (from "liveline/simulator") serves the
   * model stand-in as the `simulator` provider, its Durable Object and its public routes.
   */
  extensions?: readonly LivelineExtension[];
  /** The providers sessions may use (default: every built-in one and every one an extension adds). */
  providers?: readonly ProviderName[];
  /** Settings in code, e.g. `{ TOKEN_TTL_SECONDS: 600 }`; the Worker's vars override them. */
  config?: SettingDefaults;
  /**
   * The agent that answers each phone number (E.164, e.g. "+15551230000") a call comes in on;
   * a number not listed is answered by the default agent.
   */
  phoneNumbers?: Readonly<Record<string, string>>;
  /**
   * Measurement only (`npm run repro`, the tests): the naive relay that simulator sessions
   * created with `metadata.naive: true` run as (scripts/measurement/naive-relay.ts). A gateway
   * without it refuses such sessions, and its bundle carries none of the arm.
   */
  naiveRelay?: RelayArm;
  /**
   * Prices by model id, over the shipped ones (src/metering/prices.ts): USD per 1M tokens by
   * modality (`input`, `cachedInput`, `output`) and per metered second (`perSecond`), e.g.
   * `{ "gemini-3.1-flash-live-preview": { input: { TEXT: 0.75, AUDIO: 3 }, output: { AUDIO: 12 } } }`.
   */
  prices?: PriceOverrides;
}

/**
 * What an app adds to liveline beyond the product (e.g. `simulator` from "liveline/simulator"):
 * providers under their names, the Durable Object classes the app exports with liveline's, and
 * routes served before liveline's own.
 */
export interface LivelineExtension<Objects extends object = object> {
  /** Providers it adds, by the name sessions ask for (a built-in name cannot be taken). */
  readonly providers?: Partial<Record<ProviderName, AddedProvider>>;
  /** The Durable Object classes the app exports by these names (createLiveline hands them on). */
  readonly objects: Objects;
  /**
   * Its answer to a request before liveline's routes see it, or null when the request is not
   * its. `open()`: whether stand-in routes are public here (a local host, or SIMULATOR_ROUTE = "on").
   */
  route?(request: Request, env: object, open: () => boolean): Promise<Response> | null;
}

/** A measurement arm: liveline with other protections and another seed, to show failures. */
export interface RelayArm {
  /** The core's protections in this arm's sessions. */
  guards: Guards;
  /** How a new model connection is seeded from the log (not validated). */
  rebuild(events: readonly HistoryEvent[]): RebuiltContext;
  /** How it speaks each model's wire. */
  wire: WireArm;
}

/** The app as routes and session objects use it. */
export interface LivelineApp {
  readonly agentNames: readonly string[];
  readonly defaultAgent: string;
  agent(name: string): Agent<unknown> | undefined;
  /** The settings of this env; throws ConfigError (see configLoader). */
  settings(env: object): Config;
  /** The env with the code defaults filled in: what providers and tools are given. */
  env<E extends object>(env: E): E;
  /** The naive relay, where this Worker is a measurement one; null in a gateway. */
  readonly naiveRelay: RelayArm | null;
  /** The agent that answers a call to `number`. */
  agentForNumber(number: string): string;
  /** The app's prices, by model id (over the shipped ones). */
  readonly prices: PriceOverrides;
  /** The app's extensions, in the order given. */
  readonly extensions: readonly LivelineExtension[];
}

export function livelineApp<Env>(options: LivelineOptions<Env>): LivelineApp {
  const agents = new Map(Object.entries(options.agents) as [string, Agent<unknown>][]);
  const agentNames = [...agents.keys()];
  const defaultAgent = options.defaultAgent ?? agentNames[0];
  if (defaultAgent === undefined) throw new Error("createLiveline: `agents` names no agent");
  if (!agents.has(defaultAgent))
    throw new Error(`createLiveline: defaultAgent "${defaultAgent}" is not one of agents`);
  // A fixed agent is checked now, at the Worker's start; a function of the session at
  // each session's creation (a 400 agent_refused there).
  for (const [number, agent] of Object.entries(options.phoneNumbers ?? {}))
    if (!agents.has(agent))
      throw new Error(
        `createLiveline: phoneNumbers: ${number} is answered by "${agent}", which is not an agent`,
      );
  for (const [name, agent] of agents) {
    if (typeof agent === "function") continue;
    const problems = agentProblems(agent);
    for (const target of agent.handoffs ?? [])
      if (!agents.has(target)) problems.push(`it hands off to "${target}", which is not an agent`);
    if (problems.length > 0)
      throw new Error(`createLiveline: agent "${name}": ${problems.join("; ")}`);
  }
  const prices = PriceOverrides.safeParse(options.prices ?? {});
  if (!prices.success)
    throw new Error(
      `createLiveline: prices: ${prices.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  const extensions = options.extensions ?? [];
  const addedNames: ProviderName[] = [];
  for (const extension of extensions)
    for (const [name, provider] of Object.entries(extension.providers ?? {}) as [
      ProviderName,
      AddedProvider,
    ][]) {
      addProvider(name, provider);
      addedNames.push(name);
    }
  const offered: ProviderName[] = [...BUILT_IN_PROVIDER_NAMES, ...addedNames];
  // This app's own: another app of the isolate (a test's) may have added one it did not.
  for (const name of options.providers ?? [])
    if (!offered.includes(name))
      throw new Error(
        `createLiveline: providers: "${name}" is not a provider of this app${name === "simulator" ? ' (add it: extensions: [simulator], from "liveline/simulator")' : ""}`,
      );
  const loader = configLoader({
    ...(options.config === undefined ? {} : { defaults: options.config }),
    providers: options.providers ?? offered,
  });
  return {
    agentNames,
    defaultAgent,
    agent: (name) => agents.get(name),
    settings: loader.settings,
    env: loader.env,
    naiveRelay: options.naiveRelay ?? null,
    agentForNumber: (number) => options.phoneNumbers?.[number] ?? defaultAgent,
    prices: prices.data,
    extensions,
  };
}
