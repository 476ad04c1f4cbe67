/**
 * `createLiveline`: the gateway inside an app's own Worker. The app gives its agents (and,
 * optionally, its extensions, the providers it offers and settings in code); it gets the
 * Worker's `fetch` and the Durable Object classes to export under the names its wrangler.toml
 * binds (`SessionObject` as SESSION; with the simulator's extension, `GeminiSimulatorObject` as
 * GEMINI_SIMULATOR).
 */
import {
  type LivelineApp,
  type LivelineExtension,
  type LivelineOptions,
  livelineApp,
} from "./app-options.js";
import type { Env } from "./contracts/worker-env.js";
import { createApp } from "./http/app.js";
import { isLocalHostname } from "./http/auth.js";
import { serveDemo } from "./http/demo.js";
import { SessionObject } from "./session/session-object.js";

export interface Liveline {
  /**
   * The Worker's fetch handler (export it as the default export's `fetch`). `env`: the
   * Worker's env as the runtime passes it (SESSION, vars, the app's own bindings).
   */
  fetch(request: Request, env: object, ctx: ExecutionContext): Promise<Response>;
  /** The session object class: export it as `SessionObject`, bound as SESSION. */
  SessionObject: typeof SessionObject;
}

/** The Durable Object classes the extensions bring, as one object. */
type ObjectsOf<Extensions extends readonly LivelineExtension[]> = (
  Extensions[number] extends infer E
    ? E extends LivelineExtension<infer Objects>
      ? (objects: Objects) => void
      : never
    : never
) extends (objects: infer All) => void
  ? All
  : never;

/**
 * The gateway in the app's Worker; with `extensions: [simulator]` its result also carries the
 * simulator's object class (`GeminiSimulatorObject`).
 */
export function createLiveline<
  AppEnv = unknown,
  const Extensions extends readonly LivelineExtension[] = [],
>(
  options: LivelineOptions<AppEnv> & { extensions?: Extensions },
): Liveline & ObjectsOf<Extensions> {
  const app = livelineApp(options);
  const http = createApp(app);
  class AppSessionObject extends SessionObject {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env, app);
    }
  }
  const liveline: Liveline = {
    async fetch(request, workerEnv, ctx) {
      // The bindings liveline reads are declared in wrangler.toml; the app's own ride along.
      const env = workerEnv as Env;
      const url = new URL(request.url);
      for (const extension of app.extensions) {
        const answer = extension.route?.(request, env, () => simulatorRouteOpen(app, env, url));
        if (answer != null) return answer;
      }
      const demo = await serveDemo(
        request,
        // With the app's settings in code filled in (TWILIO_AUTH_TOKEN for its calls).
        app.env(env),
        url,
        demoPageOn(app, env),
        (inner) => Promise.resolve(http.fetch(inner, env, ctx)),
        apiKeyOf(app, env),
      );
      if (demo !== null) return demo;
      return http.fetch(request, env, ctx);
    },
    SessionObject: AppSessionObject as unknown as typeof SessionObject,
  };
  // With the extensions' object classes (their types: ObjectsOf).
  return Object.assign({}, ...app.extensions.map((e) => e.objects), liveline);
}

/**
 * An extension's stand-in routes (the simulator's `/simulator/gemini` and the real services'
 * paths, for the official SDKs: see simulator/route.ts) are served before the Hono app (which
 * stays unaware of them), on a local host or where `SIMULATOR_ROUTE = "on"`; a deployment does
 * not hand out free simulator objects to anyone. Sessions reach their simulator internally
 * either way.
 */
export function simulatorRouteOpen(app: LivelineApp, env: Env, url: URL): boolean {
  if (isLocalHostname(url.hostname)) return true;
  try {
    return app.settings(env).SIMULATOR_ROUTE === "on";
  } catch {
    return false; // a broken configuration is reported by the app's routes
  }
}

function demoPageOn(app: LivelineApp, env: Env): boolean {
  try {
    return app.settings(env).DEMO_PAGE === "on";
  } catch {
    return false;
  }
}

function apiKeyOf(app: LivelineApp, env: Env): string | undefined {
  try {
    return app.settings(env).API_KEY;
  } catch {
    return undefined; // the API answers 503 not_configured with the reason
  }
}
