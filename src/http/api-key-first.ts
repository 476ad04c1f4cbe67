import { createMiddleware } from "hono/factory";
import { requireApiKey } from "./auth.js";
import type { AppEnv } from "./context.js";

/**
 * The API key, checked before the route's body limit reads anything of the body: a caller
 * without the key gets its 401, never a 413 for a body it should not have sent.
 */
export const apiKeyFirst = createMiddleware<AppEnv>(async (c, next) => {
  await requireApiKey(c.var.auth, c.req.header("Authorization"));
  await next();
});
