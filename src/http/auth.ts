import { sign, verify } from "hono/jwt";
import { safeEqual } from "../safe-equal.js";
import { type Config, normaliseOrigin } from "../worker-config.js";
import { HttpError } from "./errors.js";

/**
 * The secrets requests are checked against. `apiKey` null means local development with no
 * API_KEY: API-key routes are open. `tokenSecret` is TOKEN_SECRET or, in local
 * development, a random per-isolate secret.
 */
export interface AuthState {
  apiKey: string | null;
  tokenSecret: string;
}

// Re-exported: demo.ts and the tests take it from here; it lives below http for telephony.
export { safeEqual };

let isolateSecret: string | null = null;
let warned = false;

/** Hostnames a deployed Worker can never be reached by: loopback, private networks, .local. */
export function isLocalHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local")) return true;
  if (h === "::1" || h === "0.0.0.0") return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(h);
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31);
}

/**
 * The secrets for a request to `url`. Missing secrets are tolerated only on a local host
 * (wrangler dev, a phone on the LAN): the server then says so once per isolate and runs
 * open; on any other host the request fails with 503, so a deployment never runs open.
 */
export function resolveAuth(config: Config, url: URL): AuthState {
  const missing = [
    config.API_KEY ? null : "API_KEY",
    config.TOKEN_SECRET ? null : "TOKEN_SECRET",
  ].filter((v): v is string => v !== null);
  if (missing.length > 0 && !isLocalHostname(url.hostname)) {
    throw new HttpError(
      503,
      "not_configured",
      `this deployment is missing secrets: ${missing.join(", ")} (wrangler secret put)`,
    );
  }
  if (missing.length > 0 && !warned) {
    warned = true;
    console.warn(
      `liveline: ${missing.join(" and ")} not set; local development mode: ` +
        (config.API_KEY ? "" : "requests need no API key, ") +
        (config.TOKEN_SECRET ? "" : "session tokens use a random per-process secret, ") +
        "never deploy like this",
    );
  }
  return {
    apiKey: config.API_KEY ?? null,
    tokenSecret: config.TOKEN_SECRET ?? getIsolateSecret(),
  };
}

/** For tests: forget that the local-development warning was given. */
export function resetDevModeWarning(): void {
  warned = false;
}

function getIsolateSecret(): string {
  if (isolateSecret === null) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    isolateSecret = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return isolateSecret;
}

/** The credential of `Authorization: Bearer <x>`, or null. */
export function bearer(header: string | undefined): string | null {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1] ?? null;
}

/** Requires the API key (unless none is configured: local development). */
export async function requireApiKey(auth: AuthState, authorization: string | undefined) {
  if (auth.apiKey === null) return;
  const given = bearer(authorization);
  if (given === null) throw new HttpError(401, "unauthorized", "missing Authorization: Bearer");
  if (!(await safeEqual(given, auth.apiKey))) {
    throw new HttpError(401, "unauthorized", "wrong API key");
  }
}

interface IssuedToken {
  token: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** An HS256 token over `{sid, exp}`, good for `ttlSeconds`. */
export async function issueToken(
  auth: AuthState,
  sessionId: string,
  ttlSeconds: number,
  nowMs = Date.now(),
): Promise<IssuedToken> {
  const exp = Math.floor(nowMs / 1000) + ttlSeconds;
  const token = await sign({ sid: sessionId, exp }, auth.tokenSecret, "HS256");
  return { token, expiresAt: new Date(exp * 1000).toISOString() };
}

/**
 * Whether each of a token's three parts is base64url as `sign` writes it: no padding, no
 * bits set past the last byte. The JWT decoder takes both, so one token had several strings
 * (found by the attack of 2026-12-02): a check of a token by its string could be bypassed.
 */
export function isCanonicalToken(token: string): boolean {
  const parts = token.split(".");
  return parts.length === 3 && parts.every(isCanonicalBase64Url);
}

function isCanonicalBase64Url(part: string): boolean {
  if (!/^[A-Za-z0-9_-]+$/.test(part) || part.length % 4 === 1) return false;
  const b64 = part.replaceAll("-", "+").replaceAll("_", "/");
  const again = btoa(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)));
  return again.replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_") === part;
}

/** Whether `token` is a valid, unexpired token of session `sessionId`. */
async function isSessionToken(auth: AuthState, token: string, sessionId: string): Promise<boolean> {
  if (!isCanonicalToken(token)) return false;
  try {
    const payload = await verify(token, auth.tokenSecret, "HS256");
    return typeof payload.exp === "number" && payload.sid === sessionId;
  } catch {
    return false; // bad signature, expired, malformed
  }
}

/** Requires a session token for `sessionId` (401 otherwise). */
export async function requireSessionToken(
  auth: AuthState,
  token: string | null,
  sessionId: string,
): Promise<void> {
  if (token === null) throw new HttpError(401, "unauthorized", "missing session token");
  if (!(await isSessionToken(auth, token, sessionId))) {
    throw new HttpError(401, "unauthorized", "invalid or expired session token");
  }
}

/**
 * For reads of a session (history, timeline): the API key as bearer, or the session's
 * token as `?token=` or bearer. Open when no API key is configured (local development).
 */
export async function requireApiKeyOrSessionToken(
  auth: AuthState,
  authorization: string | undefined,
  queryToken: string | undefined,
  sessionId: string,
): Promise<void> {
  if (auth.apiKey === null) return;
  const given = bearer(authorization);
  if (given !== null && (await safeEqual(given, auth.apiKey))) return;
  const token = queryToken ?? given;
  if (token === null) {
    throw new HttpError(401, "unauthorized", "needs the API key or the session's token");
  }
  if (!(await isSessionToken(auth, token, sessionId))) {
    throw new HttpError(401, "unauthorized", "invalid API key or session token");
  }
}

/**
 * Cross-site WebSocket hijacking guard: with ALLOWED_ORIGINS set, an upgrade that carries
 * an `Origin` not in the list is refused. Without an `Origin` (native apps, servers) it
 * passes: browsers always send one, never an empty one. An empty (or blank) `Origin` is no
 * Origin, as an empty `?token=` is no token: some hops drop an empty header, and whether it
 * passed must not depend on the path the request took.
 */
export function checkOrigin(config: Config, origin: string | undefined): void {
  if (config.ALLOWED_ORIGINS === undefined || origin === undefined || origin.trim() === "") return;
  if (!config.ALLOWED_ORIGINS.includes(normaliseOrigin(origin))) {
    throw new HttpError(403, "forbidden", "this origin may not open a session socket");
  }
}
