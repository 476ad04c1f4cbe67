import type { Env } from "./env.js";
import { createApp } from "./http/app.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./providers/simulator/object.js";

export { GeminiSimulatorObject } from "./providers/simulator/object.js";
export { SessionObject } from "./session/session-object.js";

const app = createApp();

/** The simulator's route is served before the Hono app (which stays unaware of it). */
export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/simulator/gemini") {
      return handleSimulatorRequest(request, env as Env & SimulatorEnv);
    }
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
