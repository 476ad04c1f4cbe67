/**
 * The simulator as an extension of the product (`liveline/simulator`): the `simulator`
 * provider, its Durable Object and its public routes, added by an app in one line —
 * `createLiveline({ agents, extensions: [simulator] })`, then
 * `export const { SessionObject, GeminiSimulatorObject } = liveline;` as before, its
 * wrangler.toml binding GEMINI_SIMULATOR to GeminiSimulatorObject.
 */
import type { LivelineExtension } from "../app-options.js";
import { registered } from "../providers/contract.js";
import { GeminiSimulatorObject, handleSimulatorRequest, type SimulatorEnv } from "./object.js";
import { simulatorUrl } from "./route.js";
import { simulatorProvider } from "./simulated-provider.js";

export const simulator: LivelineExtension<{ GeminiSimulatorObject: typeof GeminiSimulatorObject }> =
  {
    providers: { simulator: registered(simulatorProvider) },
    objects: { GeminiSimulatorObject },
    // Its public faces (`/simulator/gemini`, the real services' paths for the official SDKs)
    // where stand-in routes are open; sessions reach it internally either way.
    route(request, env, open) {
      const url = simulatorUrl(new URL(request.url));
      if (url === null || !open()) return null;
      return handleSimulatorRequest(new Request(url, request), env as SimulatorEnv);
    },
  };
