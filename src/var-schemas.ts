/**
 * How Worker vars are read: every var arrives as a string or not at all. The shared var
 * schemas and the error for a configuration that cannot be parsed. src/worker-config.ts composes the
 * Worker's configuration from its own vars and each provider's (src/providers/*).
 * Each schema carries, as its description, the form it expects: a bad setting is reported
 * with its name, its problem and that form (never its value: it may be a secret).
 */
import { type ZodError, type ZodObject, type ZodRawShape, z } from "zod";

/** Absent and empty (`API_KEY=` in .dev.vars) mean the same: not configured. */
export const optionalString = z
  .preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.string().optional(),
  )
  .describe("a string");

/** An optional URL; absent or empty means not configured. */
export const optionalUrl = optionalString
  .pipe(z.url().optional())
  .describe("an absolute URL, e.g. wss://host/path");

/** A positive integer with a default for absent or empty. */
export const positiveInt = (fallback: number, max = MAX_TIMER_MS) =>
  z
    .preprocess(
      (v) => (v === undefined || (typeof v === "string" && v.trim() === "") ? fallback : v),
      z.coerce.number().int().positive().max(max),
    )
    .describe(`a positive whole number up to ${max} (default ${fallback})`);

/** A whole number of 0 or more (0: off) with a default for absent or empty. */
export const nonNegativeInt = (fallback: number, max = MAX_TIMER_MS) =>
  z
    .preprocess(
      (v) => (v === undefined || (typeof v === "string" && v.trim() === "") ? fallback : v),
      z.coerce.number().int().min(0).max(max),
    )
    .describe(`a whole number from 0 (off) up to ${max} (default ${fallback})`);

/** The longest delay a timer takes (2^31 - 1 ms); every number setting stays within it. */
const MAX_TIMER_MS = 2_147_483_647;

/** One of a few names, with a default for absent or empty. */
export const oneOf = <const T extends readonly [string, ...string[]]>(
  names: T,
  fallback: T[number],
) =>
  z
    .preprocess((v) => (v === undefined || v === "" ? fallback : v), z.enum(names))
    .describe(`one of ${names.join(", ")} (default ${fallback})`);

/** One of a few names, or unset (absent or empty). */
export const optionalOneOf = <const T extends readonly [string, ...string[]]>(names: T) =>
  z
    .preprocess((v) => (v === "" ? undefined : v), z.enum(names).optional())
    .describe(`one of ${names.join(", ")}, or unset`);

/**
 * An optional string that `check` must accept (it throws on a bad value, with a message that
 * names no value): for settings parsed further than a schema says (JSON, knob lists).
 */
export const checkedString = (expected: string, check: (value: string) => void) =>
  optionalString
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      try {
        check(value);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: err instanceof Error ? err.message : "invalid" });
      }
    })
    .describe(expected);

/**
 * A secret: unset, or a value with no surrounding whitespace (a pasted newline or space would
 * make every key compare unequal, silently) and at least `min` characters.
 */
export const secret = (min: number) =>
  checkedString(`a secret of at least ${min} characters, without surrounding spaces`, (v) => {
    if (v !== v.trim()) throw new Error("has surrounding whitespace (a paste error?)");
    if (v.length < min) throw new Error(`is shorter than ${min} characters`);
  });

/** An optional http(s) URL (a REST API's base, which tests point at a local stand-in). */
export const optionalHttpUrl = (example: string) =>
  checkedString(`an http(s) URL, e.g. ${example}`, (v) => {
    const url = new URL(v);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("is not http(s)");
  });

/**
 * A list of HTTP headers as OpenTelemetry's exporters take it (`OTEL_EXPORTER_OTLP_HEADERS`):
 * `k1=v1,k2=v2`, keys trimmed, values percent-decoded. Throws naming no value (a secret).
 */
export function headerList(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const key = pair.slice(0, at).trim();
    if (at < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key))
      throw new Error("has a pair that is not key=value with a header name for its key");
    let value: string;
    try {
      value = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`has a value that is not percent-encoded (for ${key})`);
    }
    // A header value cannot hold control characters (a decoded CR, LF or NUL).
    if ([...value].some((ch) => (ch < " " && ch !== "\t") || ch === "\u007f"))
      throw new Error(`has a value with control characters (for ${key})`);
    headers[key] = value;
  }
  return headers;
}

/** One setting that cannot be used: its name, what is wrong, what it should look like. */
export interface SettingProblem {
  setting: string;
  problem: string;
  expected: string;
}

/** Thrown for a configuration that cannot be used; names settings, never their values. */
export class ConfigError extends Error {
  constructor(readonly problems: SettingProblem[]) {
    super(`invalid configuration: ${problems.map(describeProblem).join("; ")}`);
    this.name = "ConfigError";
  }

  /** The names of the settings at fault. */
  get vars(): string[] {
    return this.problems.map((p) => p.setting);
  }
}

export function describeProblem(p: SettingProblem): string {
  return `${p.setting}: ${p.problem}; expected ${p.expected}`;
}

/**
 * The problems of a failed parse of `schema`, one per setting. Zod's messages name the type
 * received, never the value, so they are safe to show.
 */
export function settingProblems(schema: ZodObject<ZodRawShape>, error: ZodError): SettingProblem[] {
  const seen = new Map<string, SettingProblem>();
  for (const issue of error.issues) {
    const setting = String(issue.path[0] ?? "(settings)");
    if (seen.has(setting)) continue;
    seen.set(setting, {
      setting,
      problem: problemText(issue),
      expected: descriptionOf(schema.shape[setting]) ?? "a valid value",
    });
  }
  return [...seen.values()];
}

function descriptionOf(schema: unknown): string | undefined {
  return schema instanceof z.ZodType ? schema.description : undefined;
}

/** What is wrong, in words that never carry the value (zod's may: "received Infinity"). */
function problemText(issue: ZodError["issues"][number]): string {
  switch (issue.code) {
    case "invalid_type":
      return `not ${issue.expected === "number" ? "a number" : `a valid ${issue.expected}`}`;
    case "too_big":
      return "too large";
    case "too_small":
      return "too small";
    case "invalid_value":
      return "not one of the allowed values";
    case "invalid_format":
      return `not a valid ${issue.format}`;
    case "custom":
      return issue.message;
    default:
      return "not valid";
  }
}

/**
 * Reads a part's own vars (a provider's, a carrier's) from the raw Worker env with its
 * schema, once per env object; a bad value throws a ConfigError naming the setting.
 */
export function varsReader<Shape extends ZodRawShape>(
  schema: ZodObject<Shape>,
): (env: object) => z.output<ZodObject<Shape>> {
  const cache = new WeakMap<object, z.output<ZodObject<Shape>>>();
  return (env) => {
    const hit = cache.get(env);
    if (hit !== undefined) return hit;
    const parsed = schema.safeParse(env);
    // Names and forms only: a value might be a secret pasted into the wrong var.
    if (!parsed.success) throw new ConfigError(settingProblems(schema, parsed.error));
    cache.set(env, parsed.data);
    return parsed.data;
  };
}
