import type { Context } from "hono";
import type { LivelineApp } from "../app-options.js";
import type { Env } from "../contracts/worker-env.js";
import type { Config, LocationHint } from "../worker-config.js";
import type { AuthState } from "./auth.js";
import { HttpError } from "./errors.js";

/** The Hono environment of the app: bindings, plus config and auth resolved per request. */
export interface AppEnv {
  Bindings: Env;
  Variables: { app: LivelineApp; config: Config; auth: AuthState };
}

export type AppContext = Context<AppEnv>;

/**
 * The stub of a session's Durable Object (one per session id), in the configured
 * jurisdiction. `locationHint` places an object that does not exist yet (creation only).
 */
export function sessionStub(c: AppContext, sessionId: string, locationHint?: LocationHint) {
  const namespace = sessionNamespace(c.env, c.var.config.SESSION_JURISDICTION);
  const id = namespace.idFromName(sessionId);
  return locationHint === undefined ? namespace.get(id) : namespace.get(id, { locationHint });
}

let warnedNoJurisdiction = false;

function sessionNamespace(env: Env, jurisdiction: DurableObjectJurisdiction | undefined) {
  if (jurisdiction === undefined) return env.SESSION;
  try {
    return env.SESSION.jurisdiction(jurisdiction);
  } catch (err) {
    // Local workerd (wrangler dev, tests) has no jurisdictions; Cloudflare always does.
    if (!(err instanceof Error) || !/not implemented/i.test(err.message)) throw err;
    if (!warnedNoJurisdiction) {
      warnedNoJurisdiction = true;
      console.warn(
        `liveline: SESSION_JURISDICTION=${jurisdiction} is not implemented by this runtime (local workerd); sessions use the default namespace here`,
      );
    }
    return env.SESSION;
  }
}

/** `ws(s)://<host>/v1/sessions/<id>/ws?token=…`, matching the scheme of the request. */
export function wsUrl(requestUrl: string, sessionId: string, token: string): string {
  return `${wsOrigin(requestUrl)}/v1/sessions/${sessionId}/ws?token=${encodeURIComponent(token)}`;
}

/** `wss://<host>` for a request over https, `ws://<host>` for a plain-HTTP local server. */
export function wsOrigin(requestUrl: string): string {
  const url = new URL(requestUrl);
  return `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}`;
}

/** A WebSocket route's first check: 426 without `Upgrade: websocket`. */
export function requireWebSocketUpgrade(c: AppContext): void {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
    throw new HttpError(426, "upgrade_required", "this endpoint takes a WebSocket upgrade", {
      Upgrade: "websocket",
    });
}
