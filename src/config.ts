import { z } from "zod";

/** The providers a session can name; src/providers/registry.ts says which can be served. */
export const PROVIDERS = ["simulator", "gemini", "openai"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * The agents a session can be created for. Mirrors the demo agents of src/tools: when an
 * agent is added there, its name goes here too.
 */
export const AGENTS = ["greeter"] as const;
export type AgentName = (typeof AGENTS)[number];

/** Absent and empty (`API_KEY=` in .dev.vars) mean the same: not configured. */
const optionalString = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
  z.string().optional(),
);

const positiveInt = (fallback: number) =>
  z.preprocess(
    (v) => (v === undefined || (typeof v === "string" && v.trim() === "") ? fallback : v),
    z.coerce.number().int().positive(),
  );

const ConfigSchema = z.object({
  PROVIDER: z.preprocess((v) => (v === undefined || v === "" ? "simulator" : v), z.enum(PROVIDERS)),
  GEMINI_API_KEY: optionalString,
  GEMINI_LIVE_URL: optionalString.pipe(z.url().optional()),
  GEMINI_MODEL: optionalString,
  /** "developer" (the Gemini API, an API key) or "vertex" (Vertex AI, an access token). */
  GEMINI_ENDPOINT: z.preprocess(
    (v) => (v === undefined || v === "" ? "developer" : v),
    z.enum(["developer", "vertex"]),
  ),
  VERTEX_PROJECT: optionalString,
  VERTEX_LOCATION: optionalString,
  VERTEX_ACCESS_TOKEN: optionalString,
  /** OpenAI Realtime: the API key (a secret), the endpoint, the model. */
  OPENAI_API_KEY: optionalString,
  OPENAI_REALTIME_URL: optionalString.pipe(z.url().optional()),
  OPENAI_MODEL: optionalString,
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

/** The Worker's typed configuration. Holds secrets: never log it or send it anywhere. */
export type Config = z.infer<typeof ConfigSchema>;

/** Thrown for a configuration that cannot be parsed; names the vars, never their values. */
export class ConfigError extends Error {
  constructor(readonly vars: string[]) {
    super(`invalid configuration: ${vars.join(", ")}`);
    this.name = "ConfigError";
  }
}

const cache = new WeakMap<object, Config>();

/** Parses the env's vars and secrets (cached per env object). Throws ConfigError. */
export function loadConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    // Only the names: a value might be a secret pasted into the wrong var.
    throw new ConfigError([...new Set(parsed.error.issues.map((i) => String(i.path[0])))]);
  }
  cache.set(env, parsed.data);
  return parsed.data;
}

/** `https://App.example/` → `https://app.example`, the form browsers send in `Origin`. */
export function normaliseOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, "");
}
