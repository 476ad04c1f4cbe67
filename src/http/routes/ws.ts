import { Hono } from "hono";
import { z } from "zod";
import { REPLAY_HEADER, RESUME_FROM_HEADER, SESSION_HEADER } from "../../contracts/session-api.js";
import { bearer, checkOrigin, requireSessionToken } from "../auth.js";
import { type AppEnv, requireWebSocketUpgrade, sessionStub } from "../context.js";
import { HttpError } from "../errors.js";
import { parseQuery, QueryToken, sessionIdParam } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";

const WsQuery = z.object({
  token: QueryToken,
  resumeFrom: z
    .string()
    .regex(/^\d+$/, "must be a non-negative integer")
    .transform(Number)
    // Digits only by now: what fails is a number past any seq (said once, in words).
    .pipe(z.number().refine(Number.isSafeInteger, "is beyond any session's last seq"))
    .optional(),
  /** "batch": the replay comes as `replay {frames}` messages (a protocol extension). */
  replay: z.enum(["batch"]).optional(),
});

/**
 * GET /v1/sessions/:id/ws — checks, in order: query (400), `Upgrade: websocket` (426),
 * token (401), the session's existence (404), Origin (403); then hands the upgrade to the
 * session's object with the validated values in trusted headers.
 */
export const wsRoutes = new Hono<AppEnv>()
  .get("/:id/ws", async (c) => {
    const sessionId = sessionIdParam(c);
    const query = parseQuery(c, WsQuery);
    requireWebSocketUpgrade(c);
    const token = query.token ?? bearer(c.req.header("Authorization"));
    await requireSessionToken(c.var.auth, token, sessionId);
    const stub = sessionStub(c, sessionId);
    if (!(await stub.exists())) throw new HttpError(404, "unknown_session", "no such session");
    checkOrigin(c.var.config, c.req.header("Origin"));

    const headers = new Headers(c.req.raw.headers);
    for (const name of [...headers.keys()]) {
      if (name.toLowerCase().startsWith("x-liveline-")) headers.delete(name);
    }
    headers.set(SESSION_HEADER, sessionId);
    if (query.resumeFrom !== undefined) headers.set(RESUME_FROM_HEADER, String(query.resumeFrom));
    if (query.replay !== undefined) headers.set(REPLAY_HEADER, query.replay);
    return stub.fetch(new Request(c.req.raw, { headers }));
  })
  .all("/:id/ws", methodNotAllowed("GET"));
