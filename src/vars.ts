/**
 * How Worker vars are read: every var arrives as a string or not at all. The shared var
 * schemas and the error for a configuration that cannot be parsed. src/config.ts composes the
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
export const positiveInt = (fallback: number) =>
  z
    .preprocess(
      (v) => (v === undefined || (typeof v === "string" && v.trim() === "") ? fallback : v),
      z.coerce.number().int().positive(),
    )
    .describe(`a positive whole number (default ${fallback})`);

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
      problem: issue.message,
      expected: descriptionOf(schema.shape[setting]) ?? "a valid value",
    });
  }
  return [...seen.values()];
}

function descriptionOf(schema: unknown): string | undefined {
  return schema instanceof z.ZodType ? schema.description : undefined;
}
