import type { Env } from "./env.js";
import { createApp } from "./http/app.js";
import { isLocalHostname } from "./http/auth.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./simulator/object.js";
import { simulatorUrl } from "./simulator/route.js";

export { SessionObject } from "./session/session-object.js";
export { GeminiSimulatorObject } from "./simulator/object.js";

const app = createApp();

/**
 * The simulator's public routes (`/simulator/gemini` and the real service's path, for the
 * official SDKs: see simulator/route.ts) are served before the Hono app (which stays
 * unaware of them), on a local host or where `SIMULATOR_ROUTE = "on"`; a deployment does not
 * hand out free simulator objects to anyone. Sessions reach their simulator internally either
 * way.
 */
export function simulatorRouteOpen(env: Env, url: URL): boolean {
  return env.SIMULATOR_ROUTE === "on" || isLocalHostname(url.hostname);
}

export default {
  fetch(request, env, ctx) {
    const url = new URL(request.url);
    const simUrl = simulatorUrl(url);
    if (simUrl !== null && simulatorRouteOpen(env, url)) {
      return handleSimulatorRequest(new Request(simUrl, request), env as Env & SimulatorEnv);
    }
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
