import { Hono } from "hono";
import type { Env } from "../env.js";
import { VERSION } from "../version.js";

/** The HTTP front: routes, auth and request validation; sessions live in SessionObject. */
export function createApp(): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  app.get("/health", (c) => c.json({ ok: true, version: VERSION }));
  app.notFound((c) => c.json({ error: { code: "not_found", message: "no such route" } }, 404));
  return app;
}
