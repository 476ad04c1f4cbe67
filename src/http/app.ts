import { Hono } from "hono";
import { loadConfig } from "../config.js";
import { VERSION } from "../version.js";
import { resolveAuth } from "./auth.js";
import type { AppEnv } from "./context.js";
import { errorResponse, handleError } from "./errors.js";
import { methodNotAllowed } from "./method-not-allowed.js";
import { sessionRoutes } from "./routes/sessions.js";
import { wsRoutes } from "./routes/ws.js";

/** The HTTP front: routes, auth and request validation; sessions live in SessionObject. */
export function createApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/health", (c) => c.json({ ok: true, version: VERSION }));
  app.all("/health", methodNotAllowed("GET"));

  app.use("/v1/*", async (c, next) => {
    const config = loadConfig(c.env);
    c.set("config", config);
    c.set("auth", resolveAuth(config, new URL(c.req.url)));
    await next();
  });
  app.route("/v1/sessions", wsRoutes);
  app.route("/v1/sessions", sessionRoutes);

  app.notFound((c) => errorResponse(c, 404, "not_found", "no such route"));
  app.onError(handleError);
  return app;
}
