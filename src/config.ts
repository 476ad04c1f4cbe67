import { z } from "zod";
import { PROVIDER_NAMES, PROVIDER_VARS } from "./providers/registry.js";
import { ConfigError, oneOf, optionalString, positiveInt } from "./vars.js";

export { ConfigError } from "./vars.js";

/**
 * The agents a session can be created for. Mirrors the demo agents of src/tools: when an
 * agent is added there, its name goes here too.
 */
export const AGENTS = ["greeter"] as const;
export type AgentName = (typeof AGENTS)[number];

/** The Worker's own vars; each provider's (src/providers/*) are checked beside them. */
const ConfigSchema = z.object({
  /** The provider of a session that names none. */
  PROVIDER: oneOf(PROVIDER_NAMES, "simulator"),
  API_KEY: optionalString,
  TOKEN_SECRET: optionalString,
  ALLOWED_ORIGINS: optionalString.transform((v) =>
    v === undefined
      ? undefined
      : v
          .split(",")
          .map((o) => normaliseOrigin(o))
          .filter((o) => o !== ""),
  ),
  TOKEN_TTL_SECONDS: positiveInt(900),
  IDLE_TIMEOUT_MS: positiveInt(60_000),
  MAX_FRAME_BYTES: positiveInt(262_144),
  MAX_FRAMES_PER_SECOND: positiveInt(100),
  MAX_AUDIO_FRAMES_PER_SECOND: positiveInt(250),
  MAX_CLIENTS_PER_SESSION: positiveInt(8),
  STALE_SOCKET_MS: positiveInt(30_000),
  TOOL_TIMEOUT_MS: positiveInt(15_000),
  MODEL_TIMEOUT_MS: positiveInt(15_000),
});
const ProviderVarsSchema = z.object(PROVIDER_VARS);

/**
 * The Worker's typed configuration (its providers read their own vars through the registry).
 * Holds secrets: never log it or send it anywhere.
 */
export type Config = z.infer<typeof ConfigSchema>;

const cache = new WeakMap<object, Config>();

/**
 * Parses the env's vars and secrets (cached per env object), every provider's included, so a
 * bad value anywhere is reported at once. Throws ConfigError.
 */
export function loadConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = ConfigSchema.safeParse(env);
  const providers = ProviderVarsSchema.safeParse(env);
  const issues = [...(parsed.error?.issues ?? []), ...(providers.error?.issues ?? [])];
  // Only the names: a value might be a secret pasted into the wrong var.
  if (!parsed.success || issues.length > 0)
    throw new ConfigError([...new Set(issues.map((i) => String(i.path[0])))]);
  cache.set(env, parsed.data);
  return parsed.data;
}

/** `https://App.example/` → `https://app.example`, the form browsers send in `Origin`. */
export function normaliseOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, "");
}
