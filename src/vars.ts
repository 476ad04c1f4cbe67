/**
 * How Worker vars are read: every var arrives as a string or not at all. The shared var
 * schemas and the error for a configuration that cannot be parsed. src/config.ts composes the
 * Worker's configuration from its own vars and each provider's (src/providers/*).
 */
import { z } from "zod";

/** Absent and empty (`API_KEY=` in .dev.vars) mean the same: not configured. */
export const optionalString = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
  z.string().optional(),
);

/** An optional URL; absent or empty means not configured. */
export const optionalUrl = optionalString.pipe(z.url().optional());

/** A positive integer with a default for absent or empty. */
export const positiveInt = (fallback: number) =>
  z.preprocess(
    (v) => (v === undefined || (typeof v === "string" && v.trim() === "") ? fallback : v),
    z.coerce.number().int().positive(),
  );

/** One of a few names, with a default for absent or empty. */
export const oneOf = <const T extends readonly [string, ...string[]]>(
  names: T,
  fallback: T[number],
) => z.preprocess((v) => (v === undefined || v === "" ? fallback : v), z.enum(names));

/** Thrown for a configuration that cannot be parsed; names the vars, never their values. */
export class ConfigError extends Error {
  constructor(readonly vars: string[]) {
    super(`invalid configuration: ${vars.join(", ")}`);
    this.name = "ConfigError";
  }
}
