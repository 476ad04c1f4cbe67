import { z } from "zod";
import { CARRIER_VARS } from "./carrier-registry.js";
import {
  PROVIDER_NAMES,
  type ProviderName,
  providerNames,
  providerUnavailable,
  providerVars,
} from "./provider-registry.js";
import {
  ConfigError,
  checkedString,
  headerList,
  nonNegativeInt,
  optionalHttpUrl,
  optionalOneOf,
  optionalString,
  positiveInt,
  type SettingProblem,
  secret,
  settingProblems,
} from "./var-schemas.js";

export { ConfigError } from "./var-schemas.js";

/** Where Durable Objects may be placed (Cloudflare's location hints). */
export const LOCATION_HINTS = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "oc",
  "afr",
  "me",
] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];

/** How a session's object holds an app's sockets (session/session-sockets.ts). */
export const SOCKET_MODES = ["streaming", "hibernatable"] as const;
export type SocketMode = (typeof SOCKET_MODES)[number];

const onOff = z
  .preprocess((v) => (v === undefined || v === "" ? "off" : v), z.enum(["on", "off"]))
  .describe('"on" or "off" (default off)');

/** The Worker's own vars; each provider's and each carrier's are checked beside them. */
const ConfigSchema = z.object({
  /**
   * The provider of a session that names none. Unset: the first real provider whose
   * credentials are configured (gemini, then openai), else the simulator where the app adds
   * it (liveline/simulator), else gemini (whose missing key is then the setting to fix).
   */
  PROVIDER: optionalOneOf(PROVIDER_NAMES),
  API_KEY: secret(8),
  /** HS256 key of session tokens: short ones can be guessed offline from one token. */
  TOKEN_SECRET: secret(16),
  ALLOWED_ORIGINS: optionalString
    .transform((v) =>
      v === undefined
        ? undefined
        : v
            .split(",")
            .map((o) => normaliseOrigin(o))
            .filter((o) => o !== ""),
    )
    .describe("a comma-separated list of origins, e.g. https://app.example.com"),
  /** At most 30 days: a token is a bearer credential for its session. */
  TOKEN_TTL_SECONDS: positiveInt(900, 30 * 24 * 3600),
  IDLE_TIMEOUT_MS: positiveInt(60_000),
  /**
   * At most 960 KiB: a line is stored with its frame in one row, and a row holds at most 2 MB
   * on Cloudflare (session/history-store.ts).
   */
  MAX_FRAME_BYTES: positiveInt(262_144, 983_040),
  MAX_FRAMES_PER_SECOND: positiveInt(100),
  MAX_AUDIO_FRAMES_PER_SECOND: positiveInt(250),
  MAX_CLIENTS_PER_SESSION: positiveInt(8),
  STALE_SOCKET_MS: positiveInt(30_000),
  /**
   * How the object holds an app's sockets (session/session-sockets.ts): "streaming" (default: a
   * relay's cost per frame) or "hibernatable" (an idle session with clients attached leaves
   * memory; each message costs an event of its own).
   */
  CLIENT_SOCKETS: z
    .preprocess((v) => (v === undefined || v === "" ? "streaming" : v), z.enum(SOCKET_MODES))
    .describe('"streaming" or "hibernatable" (default streaming)'),
  /**
   * A phone call whose media stream closes without a hang-up (a deploy, a restart of its
   * session's object) has this long to be connected again by its carrier (Twilio: the
   * stream's `<Connect action>`) before its session ends; 0: no reconnect, a lost stream ends
   * the call at once.
   */
  CALL_RECONNECT_GRACE_MS: nonNegativeInt(30_000, 600_000),
  TOOL_TIMEOUT_MS: positiveInt(15_000),
  MODEL_TIMEOUT_MS: positiveInt(15_000),
  /** A model without turns (GPT-Live): this long quiet after it spoke ends its utterance. */
  UTTERANCE_QUIET_MS: positiveInt(1_500),
  /** A session's timeline keeps its newest rows, at most this many (it is a debug trace). */
  TIMELINE_MAX_ROWS: positiveInt(10_000),
  /**
   * The subrequests a session's object may make (Workers Paid: 10,000 an invocation; Free:
   * 50): near it, trace batches and progress reports are shed (session/subrequests.ts).
   */
  SUBREQUEST_BUDGET: positiveInt(10_000),
  /** "eu": every session object, and its history, is kept in the EU jurisdiction. */
  SESSION_JURISDICTION: optionalOneOf(["eu", "fedramp"]),
  /** Where a session's object is placed when its creator gives no `locationHint`. */
  SESSION_LOCATION_HINT: optionalOneOf(LOCATION_HINTS),
  FAULT_INJECTION: onOff,
  SIMULATOR_ROUTE: onOff,
  // Recordings (src/recording, the RECORDINGS bucket): opted into per agent or per session.
  /** A recording is written in parts of this length: a crash loses the last one at most. */
  RECORDING_PART_MS: positiveInt(5_000, 60_000),
  /** The most a session's audio recording, or its wire recording, may take (each, in bytes). */
  RECORDING_MAX_BYTES: positiveInt(256 * 1024 * 1024),
  /** Recordings older than this many days are no longer served, and are deleted when asked for. */
  RECORDING_RETENTION_DAYS: z
    .preprocess(
      (v) =>
        v === undefined || (typeof v === "string" && v.trim() === "") ? undefined : Number(v),
      z.number().int().positive().max(36_500).optional(),
    )
    .describe("a number of days, 1 to 36500, or unset (kept until deleted)"),
  /** "on": the demo page and its session endpoint on any host (always on a local host). */
  DEMO_PAGE: onOff,
  // Traces, as OpenTelemetry's OTLP exporters name their settings (src/telemetry).
  /** Where traces go: its `/v1/traces` (unset: no traces). */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl("https://otlp.example.com"),
  /** The traces URL itself, used as it is (over the endpoint). */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalHttpUrl("https://otlp.example.com/v1/traces"),
  /** Secret: the collector's headers (an API key), `key=value,…`. */
  OTEL_EXPORTER_OTLP_HEADERS: checkedString(
    "key=value pairs separated by commas, values percent-encoded (a secret)",
    (v) => void headerList(v),
  ),
  OTEL_EXPORTER_OTLP_PROTOCOL: checkedString(
    "http/protobuf (the only protocol liveline sends), or unset",
    (v) => {
      if (v !== "http/protobuf") throw new Error("is not http/protobuf");
    },
  ),
  /** The traces' `service.name` (default liveline). */
  OTEL_SERVICE_NAME: optionalString,
});
const CarrierVarsSchema = z.object(CARRIER_VARS);

/**
 * Every setting a Worker offering these providers reads, by name (the Worker's own, those
 * providers' and the carriers'; .dev.vars.example lists each of the repository's: a test checks).
 */
export function settingNames(providers: readonly ProviderName[] = providerNames()): string[] {
  return [
    ...new Set([
      ...Object.keys(ConfigSchema.shape),
      ...Object.keys(providerVars(providers)),
      ...Object.keys(CARRIER_VARS),
    ]),
  ];
}

/**
 * The Worker's typed configuration (its providers read their own vars through the registry).
 * Holds secrets: never log it or send it anywhere.
 */
export type Config = Omit<z.infer<typeof ConfigSchema>, "PROVIDER"> & {
  PROVIDER: ProviderName;
  /** The providers sessions may ask for (all unless the app narrowed them). */
  providers: readonly ProviderName[];
};

/** Settings given in code (createLiveline's `config`): defaults the Worker's vars override. */
export type SettingDefaults = Readonly<Record<string, string | number | boolean>>;

/**
 * Reads the settings from a Worker env: `defaults` under the env's vars. `settings(env)`
 * parses everything once per env object (every provider's vars included, so a bad value
 * anywhere is reported at once) and throws a ConfigError naming each bad setting;
 * `env(env)` is the env with the defaults filled in, what providers and tools read.
 */
export function configLoader(
  opts: { defaults?: SettingDefaults; providers?: readonly ProviderName[] } = {},
) {
  const providers = opts.providers ?? providerNames();
  if (providers.length === 0) throw new Error("liveline: `providers` names no provider");
  // The vars of the providers offered (an added one's only where the app added it).
  const ProviderVarsSchema = z.object(providerVars(providers));
  const names = new Set(settingNames(providers));
  const unknown = Object.keys(opts.defaults ?? {}).filter((k) => !names.has(k));
  if (unknown.length > 0)
    throw new Error(
      `liveline: unknown setting${unknown.length > 1 ? "s" : ""} in config: ${unknown.join(", ")}`,
    );
  const defaults = Object.fromEntries(
    Object.entries(opts.defaults ?? {}).map(([k, v]) => [k, String(v)]),
  );
  const merged = new WeakMap<object, object>();
  const parsed = new WeakMap<object, Config>();
  const envOf = <E extends object>(env: E): E => {
    const hit = merged.get(env);
    if (hit) return hit as E;
    const filled = { ...defaults, ...env } as E;
    merged.set(env, filled);
    return filled;
  };
  return {
    env: envOf,
    settings(raw: object): Config {
      const hit = parsed.get(raw);
      if (hit) return hit;
      const env = envOf(raw);
      const own = ConfigSchema.safeParse(env);
      const problems: SettingProblem[] = [
        ConfigSchema,
        ProviderVarsSchema,
        CarrierVarsSchema,
      ].flatMap((schema) => {
        const read = schema.safeParse(env);
        return read.success ? [] : settingProblems(schema, read.error);
      });
      if (own.success && own.data.PROVIDER !== undefined && !providers.includes(own.data.PROVIDER))
        problems.push({
          setting: "PROVIDER",
          problem: "names a provider this gateway does not offer",
          expected: `one of ${providers.join(", ")}`,
        });
      if (!own.success || problems.length > 0) throw new ConfigError(problems);
      const provider = own.data.PROVIDER ?? defaultProvider(env, providers);
      // A gateway whose default provider cannot serve cannot create the sessions that name
      // none: that is a setting to fix, said on /health, not a 400 on every session.
      const unavailable = providerUnavailable(env, provider);
      if (unavailable !== null)
        throw new ConfigError([
          {
            setting: own.data.PROVIDER === undefined ? "PROVIDER (default)" : "PROVIDER",
            problem: `${provider} cannot serve: ${unavailable}`,
            expected: "a provider whose credentials are set",
          },
        ]);
      const config: Config = { ...own.data, PROVIDER: provider, providers };
      parsed.set(raw, config);
      return config;
    },
  };
}

/** The first real provider whose credentials are set, else the simulator (where added), else the first. */
function defaultProvider(env: object, providers: readonly ProviderName[]): ProviderName {
  const real = providers.find((p) => p !== "simulator" && providerUnavailable(env, p) === null);
  return real ?? (providers.includes("simulator") ? "simulator" : (providers[0] ?? "simulator"));
}

/** `https://App.example/` → `https://app.example`, the form browsers send in `Origin`. */
export function normaliseOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, "");
}
