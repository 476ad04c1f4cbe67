import type { Context } from "hono";
import type { Config } from "../config.js";
import type { Env } from "../env.js";
import type { AuthState } from "./auth.js";

/** The Hono environment of the app: bindings, plus config and auth resolved per request. */
export interface AppEnv {
  Bindings: Env;
  Variables: { config: Config; auth: AuthState };
}

export type AppContext = Context<AppEnv>;

/** The stub of a session's Durable Object (one per session id). */
export function sessionStub(env: Env, sessionId: string) {
  return env.SESSION.get(env.SESSION.idFromName(sessionId));
}

/** `ws(s)://<host>/v1/sessions/<id>/ws?token=…`, matching the scheme of the request. */
export function wsUrl(requestUrl: string, sessionId: string, token: string): string {
  const url = new URL(requestUrl);
  const scheme = url.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${url.host}/v1/sessions/${sessionId}/ws?token=${encodeURIComponent(token)}`;
}
