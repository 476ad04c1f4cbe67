import type { Env } from "./env.js";
import { createApp } from "./http/app.js";
import { isLocalHostname } from "./http/auth.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./providers/simulator/object.js";
import { simulatorUrl } from "./providers/simulator/route.js";

export { GeminiSimulatorObject } from "./providers/simulator/object.js";
export { SessionObject } from "./session/session-object.js";

const app = createApp();

/**
 * The simulator's public routes (`/simulator/gemini` and the real service's path, for the
 * official SDKs: see providers/simulator/route.ts) are served before the Hono app (which stays
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
