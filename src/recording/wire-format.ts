/**
 * A wire recording's entries: everything that crossed the session's edges, with its time (ms
 * since the session's start, the timeline's clock) — what each client sent, and every frame to
 * and from the model on each of its connections — and the durable frames the session sent, to
 * compare a replay with. One JSON object a line (JSONL), after the header (layout.ts).
 *
 * A client's audio is kept as its length (a replay sends that much silence: the model side is
 * scripted, so what was said does not change what it says); everything else in full. No key or
 * token is ever in a recording: the secrets the Worker holds are blanked out of every frame
 * (`[redacted]`), and none travels in a frame liveline sends or takes otherwise.
 */
import { z } from "zod";

const ms = z.number();

export const WireEntry = z.discriminatedUnion("dir", [
  /** A client's message: a text frame as sent, or an audio frame's length. */
  z.object({
    ms,
    dir: z.literal("client"),
    client: z.string(),
    text: z.string().optional(),
    audioBytes: z.number().int().nonnegative().optional(),
  }),
  z.object({
    ms,
    dir: z.literal("client_connected"),
    client: z.string(),
    resumeFrom: z.number().int().nullable(),
  }),
  z.object({ ms, dir: z.literal("client_left"), client: z.string() }),
  /** A model connection (its number counts the session's connections) is open. */
  z.object({ ms, dir: z.literal("model_open"), conn: z.number().int() }),
  /** A frame to or from the model: text, or binary as base64 (`text` when it is UTF-8). */
  z.object({
    ms,
    dir: z.enum(["to_model", "from_model"]),
    conn: z.number().int(),
    text: z.string().optional(),
    base64: z.string().optional(),
    binary: z.boolean().optional(),
  }),
  z.object({
    ms,
    dir: z.literal("model_closed"),
    conn: z.number().int(),
    code: z.number().int(),
    reason: z.string(),
    by: z.enum(["model", "gateway"]),
  }),
  /** A durable frame the session sent to its clients (the record's own, by `seq`). */
  z.object({ ms, dir: z.literal("durable"), frame: z.record(z.string(), z.unknown()) }),
]);
export type WireEntry = z.infer<typeof WireEntry>;

/** Names whose values are credentials wherever they appear in metadata. */
const CREDENTIAL_NAME = /(key|token|secret|password|authorization|credential)/i;

/** `text` with each secret blanked out (secrets shorter than 6 characters are left: noise). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets)
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join("[redacted]");
  return out;
}

/** A copy of `value` with every field named like a credential blanked out, at any depth. */
export function redactCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactCredentials);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      CREDENTIAL_NAME.test(k) && typeof v === "string" ? "[redacted]" : redactCredentials(v),
    ]),
  );
}
