import type { Context } from "hono";
import { HttpError } from "./errors.js";

/** A fallback handler for a known path: 405 with the methods it takes in `Allow`. */
export function methodNotAllowed(...allowed: string[]) {
  return (c: Context): never => {
    throw new HttpError(
      405,
      "method_not_allowed",
      `${c.req.method} is not allowed here; use ${allowed.join(" or ")}`,
      { Allow: allowed.join(", ") },
    );
  };
}
