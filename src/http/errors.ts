import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { jsonError } from "../vocabulary/http-error.js";
import { ConfigError } from "../worker-config.js";

/** An error answered as `{"error":{"code","message"}}` with its status. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

const CODE_BY_STATUS: Partial<Record<number, string>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  410: "session_ended",
  413: "payload_too_large",
  426: "upgrade_required",
  503: "unavailable",
};

/**
 * `agent: Invalid input: expected string, received number; …` (at most five issues). An issue
 * of the whole is said as of `whole` (the body, the query); an unknown key names the key.
 */
export function summariseIssues(error: ZodError, whole = "(body)"): string {
  const parts = error.issues.slice(0, 5).map((i) => {
    if (i.path.length > 0) return `${i.path.join(".")}: ${i.message}`;
    // A custom issue of the whole says what it is about itself ("from: must be before to").
    return i.code === "custom" ? i.message : `${whole}: ${i.message}`;
  });
  if (error.issues.length > 5) parts.push(`… ${error.issues.length - 5} more`);
  return parts.join("; ");
}

/** The one error handler of the app. Unexpected errors become a detail-free 500. */
export function handleError(err: Error, _c: Context): Response {
  if (err instanceof HttpError) {
    return jsonError(err.status, err.code, err.message, err.headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const code = CODE_BY_STATUS[status] ?? (status >= 500 ? "internal" : "bad_request");
    return jsonError(status, code, status >= 500 ? "internal error" : err.message || code);
  }
  if (err instanceof ConfigError) {
    // ConfigError's message names vars, never values.
    console.error(`liveline: ${err.message}`);
  } else {
    console.error("liveline: unhandled error", err instanceof Error ? err.stack : String(err));
  }
  return jsonError(500, "internal", "internal error");
}
