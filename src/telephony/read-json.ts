import type { z } from "zod";

/** A message read with a schema: the message, or what is wrong with it (for the timeline). */
export type JsonRead<T> = { ok: true; message: T } | { ok: false; problem: string };

/** A carrier's text frame (or webhook body) parsed as JSON and read with `schema`. */
export function readJson<T>(schema: z.ZodType<T>, text: string): JsonRead<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not JSON" };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "message";
  return { ok: false, problem: `${where}: ${issue?.message ?? "invalid"}` };
}
