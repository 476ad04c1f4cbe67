import { Hono } from "hono";
import type { LivelineApp } from "../app-options.js";
import { providerModelWarning } from "../provider-registry.js";
import { describeProblem } from "../var-schemas.js";
import { VERSION } from "../version.js";
import { jsonError } from "../vocabulary/http-error.js";
import { type Config, ConfigError } from "../worker-config.js";
import { resolveAuth } from "./auth.js";
import type { AppEnv } from "./context.js";
import { HttpError, handleError } from "./errors.js";
import { methodNotAllowed } from "./method-not-allowed.js";
import { openaiSipRoutes } from "./routes/openai-sip.js";
import { recordingRoutes } from "./routes/recording.js";
import { sessionRoutes } from "./routes/sessions.js";
import { telephonyRoutes } from "./routes/telephony.js";
import { usageRoutes } from "./routes/usage.js";
import { webrtcRoutes } from "./routes/webrtc.js";
import { wsRoutes } from "./routes/ws.js";

/** The HTTP front: routes, auth and request validation; sessions live in SessionObject. */
export function createApp(app: LivelineApp): Hono<AppEnv> {
  const http = new Hono<AppEnv>();
  http.get("/health", (c) => {
    const config = settingsOrProblem(app, c.env);
    if (config instanceof ConfigError) {
      return c.json(
        {
          ok: false,
          version: VERSION,
          error: { code: "not_configured", message: notConfigured(config) },
          settings: config.problems,
        },
        503,
      );
    }
    // A configured model past its shutdown date, by name (each offered provider's default).
    const env = app.env(c.env);
    const warnings = config.providers.flatMap(
      (provider) => providerModelWarning(provider, env, undefined, Date.now()) ?? [],
    );
    return c.json({
      ok: true,
      version: VERSION,
      provider: config.PROVIDER,
      ...(warnings.length > 0 ? { warnings } : {}),
    });
  });
  http.all("/health", methodNotAllowed("GET"));

  http.use("/v1/*", async (c, next) => {
    const config = settingsOrProblem(app, c.env);
    // Every route but /health refuses a gateway it cannot run, saying which setting is wrong.
    if (config instanceof ConfigError)
      throw new HttpError(503, "not_configured", notConfigured(config));
    c.set("app", app);
    c.set("config", config);
    c.set("auth", resolveAuth(config, new URL(c.req.url)));
    await next();
  });
  http.route("/v1/sessions", wsRoutes);
  http.route("/v1/sessions", sessionRoutes);
  http.route("/v1/sessions", recordingRoutes);
  http.route("/v1/sessions", webrtcRoutes);
  http.route("/v1/telephony", telephonyRoutes);
  http.route("/v1/sip/openai", openaiSipRoutes);
  http.route("/v1/usage", usageRoutes);

  http.notFound(() => jsonError(404, "not_found", "no such route"));
  http.onError(handleError);
  return http;
}

function settingsOrProblem(app: LivelineApp, env: object): Config | ConfigError {
  try {
    return app.settings(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
}

function notConfigured(err: ConfigError): string {
  return `the gateway is not configured: ${err.problems.map(describeProblem).join("; ")}`;
}
