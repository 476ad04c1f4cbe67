import type { Context } from "hono";
import { type ZodType, z } from "zod";
import { HttpError, summariseIssues } from "./errors.js";

/** Parses a JSON body with `schema`; an empty body counts as `{}`. 400 on any failure. */
export async function parseJsonBody<T>(c: Context, schema: ZodType<T>): Promise<T> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      throw new HttpError(400, "bad_request", "the body is not valid JSON");
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new HttpError(400, "bad_request", summariseIssues(parsed.error));
  return parsed.data;
}

/** Parses the query string (one value per key) with `schema`. 400 on failure. */
export function parseQuery<T>(c: Context, schema: ZodType<T>): T {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success)
    throw new HttpError(400, "bad_request", summariseIssues(parsed.error, "(query)"));
  return parsed.data;
}

/**
 * The `token` query parameter. Empty (`?token=`) is no token: a missing credential (401, as
 * without the parameter; a bearer token, if any, is then used), never a malformed query (400).
 */
export const QueryToken = z
  .string()
  .optional()
  .transform((v) => (v === "" ? undefined : v));

const SessionId = z.uuid();

/**
 * The `:id` path parameter; anything that is not a session id is an unknown session. A UUID
 * is read case-insensitively (RFC 9562): written in capitals it names the same session.
 */
export function sessionIdParam(c: Context): string {
  const parsed = SessionId.safeParse(c.req.param("id"));
  if (!parsed.success) throw new HttpError(404, "unknown_session", "no such session");
  return parsed.data.toLowerCase();
}
