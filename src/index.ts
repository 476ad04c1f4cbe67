import type { Env } from "./env.js";
import { createApp } from "./http/app.js";
import { isLocalHostname } from "./http/auth.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./providers/simulator/object.js";

export { GeminiSimulatorObject } from "./providers/simulator/object.js";
export { SessionObject } from "./session/session-object.js";

const app = createApp();

/**
 * The simulator's public route is served before the Hono app (which stays unaware of it),
 * on a local host or where `SIMULATOR_ROUTE = "on"`; a deployment does not hand out free
 * simulator objects to anyone. Sessions reach their simulator internally either way.
 */
export function simulatorRouteOpen(env: Env, url: URL): boolean {
  return env.SIMULATOR_ROUTE === "on" || isLocalHostname(url.hostname);
}

export default {
  fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/simulator/gemini" && simulatorRouteOpen(env, url)) {
      return handleSimulatorRequest(request, env as Env & SimulatorEnv);
    }
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
