import { Hono } from "hono";
import { z } from "zod";
import { SESSION_OPTIONS, type SessionOptions } from "../../agents/define.js";
import { type LogRead, PAGE_DEFAULT, PAGE_MAX } from "../../contracts/session-api.js";
import { jsonLimitProblem } from "../../json-limits.js";
import { PROVIDER_NAMES } from "../../provider-registry.js";
import { LOCATION_HINTS } from "../../worker-config.js";
import { apiKeyFirst } from "../api-key-first.js";
import { issueToken, requireApiKey, requireApiKeyOrSessionToken } from "../auth.js";
import { limitBody } from "../body-limit.js";
import { type AppContext, type AppEnv, sessionStub, wsUrl } from "../context.js";
import { createSession } from "../create-session.js";
import { HttpError } from "../errors.js";
import { parseJsonBody, parseQuery, QueryToken, sessionIdParam } from "../json-body.js";
import { methodNotAllowed } from "../method-not-allowed.js";

/** Bodies of POST /v1/sessions beyond this are refused with 413. */
const MAX_CREATE_BODY_BYTES = 64 * 1024;

/** An option's text: instructions may be long, a name or code is short. */
const optionText = (max: number) => z.string().trim().min(1).max(max);

/** A cap: a finite number above 0. */
const positiveLimit = z.number().positive("must be above 0").finite();

const CreateSessionBody = z
  .object({
    /** Default: the app's default agent. */
    agent: z.string().min(1).optional(),
    provider: z.enum(PROVIDER_NAMES).optional(),
    metadata: z
      .record(z.string(), z.unknown())
      .default({})
      .superRefine((m, ctx) => {
        const problem = jsonLimitProblem(m);
        if (problem)
          ctx.addIssue({ code: "custom", message: `${problem} (the limit for stored values)` });
      }),
    // Per-session options: each must be allowed by the agent (AgentDefinition.allow).
    instructions: optionText(32_000).optional(),
    voice: optionText(64).optional(),
    model: optionText(200).optional(),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a BCP-47 code such as en-US")
      .optional(),
    /** Where to place the session's object: near the phone that will talk to it. */
    locationHint: z.enum(LOCATION_HINTS).optional(),
    /** Caps within the agent's: each positive (0 or below is refused by name). */
    limits: z
      .strictObject({
        maxDurationSeconds: positiveLimit.optional(),
        maxCostUsd: positiveLimit.optional(),
        maxTurns: z
          .number()
          .int("must be a whole number up to 9007199254740991")
          .positive("must be above 0")
          .optional(),
        maxToolCalls: z
          .number()
          .int("must be a whole number up to 9007199254740991")
          .positive("must be above 0")
          .optional(),
      })
      .optional(),
    /** What to record (docs/RECORDINGS.md), over the agent's `recording`. */
    recording: z
      .strictObject({
        audio: z.boolean().optional(),
        wire: z.boolean().optional(),
        maxBytes: z.number().int("must be a whole number").positive("must be above 0").optional(),
      })
      .optional(),
  })
  // A misspelt field is refused by name, never ignored.
  .strict();

const HandoffBody = z
  .object({
    agent: z.string().min(1),
    reason: z.string().max(1000).default(""),
  })
  .strict();

const ReadQuery = z.object({ token: QueryToken });

/** A page's size (GET /history, /timeline): 1 to PAGE_MAX rows. */
const PageLimit = z.coerce
  .number()
  .int("must be a whole number")
  .min(1, "must be 1 or more")
  .max(PAGE_MAX, `must be ${PAGE_MAX} or less`);
/** A cursor as the last page gave it (`next`). */
const PageCursor = z.string().regex(/^\d{1,15}$/, "must be a `next` a page of this session gave");

const LogReadQuery = ReadQuery.extend({
  limit: PageLimit.optional(),
  cursor: PageCursor.optional(),
});

/** The read a query asks for: a page when it names a limit or a cursor, else the whole. */
function logRead(query: z.infer<typeof LogReadQuery>): LogRead {
  if (query.limit === undefined && query.cursor === undefined) return { whole: "stream" };
  return { page: { limit: query.limit ?? PAGE_DEFAULT, after: Number(query.cursor ?? 0) } };
}

/** The object's answer as a response: a stream or a string of JSON, or an object (older code). */
function jsonAnswer(c: AppContext, answer: ReadableStream<Uint8Array> | string | object) {
  if (typeof answer === "string" || answer instanceof ReadableStream)
    return c.body(answer, 200, { "Content-Type": "application/json" });
  return c.json(answer);
}

/** The session's stub, after making sure the session was created (404 otherwise). */
async function existingSession(c: AppContext, sessionId: string) {
  const stub = sessionStub(c, sessionId);
  if (!(await stub.exists())) throw new HttpError(404, "unknown_session", "no such session");
  return stub;
}

/**
 * The stub of a session that exists and was not ended: 404 for an unknown session, 410
 * `session_ended` (as its WebSocket upgrade answers) for one ended with DELETE.
 */
export async function openSession(c: AppContext, sessionId: string) {
  const stub = sessionStub(c, sessionId);
  const lifecycle = await stub.lifecycle();
  if (lifecycle === "unknown") throw new HttpError(404, "unknown_session", "no such session");
  if (lifecycle === "ended") throw new HttpError(410, "session_ended", "the session has ended");
  return stub;
}

async function tokenAnswer(c: AppContext, sessionId: string) {
  const { token, expiresAt } = await issueToken(
    c.var.auth,
    sessionId,
    c.var.config.TOKEN_TTL_SECONDS,
  );
  return { sessionId, token, wsUrl: wsUrl(c.req.url, sessionId, token), expiresAt };
}

function sessionOptions(body: Partial<Record<(typeof SESSION_OPTIONS)[number], string>>) {
  const options: SessionOptions = {};
  for (const name of SESSION_OPTIONS) {
    const value = body[name];
    if (value !== undefined) options[name] = value;
  }
  return options;
}

/** POST /v1/sessions, POST /:id/token, DELETE /:id, GET /:id/history, GET /:id/timeline. */
export const sessionRoutes = new Hono<AppEnv>()
  .post("/", apiKeyFirst, limitBody(MAX_CREATE_BODY_BYTES), async (c) => {
    const body = await parseJsonBody(c, CreateSessionBody);
    const warnings: string[] = [];
    const sessionId = await createSession(
      c,
      {
        agent: body.agent,
        provider: body.provider,
        metadata: body.metadata,
        options: sessionOptions(body),
        limits: body.limits,
        recording: body.recording,
        locationHint: body.locationHint,
      },
      (warning) => warnings.push(warning),
    );
    const answer = await tokenAnswer(c, sessionId);
    return c.json(warnings.length > 0 ? { ...answer, warnings } : answer, 201);
  })
  .all("/", methodNotAllowed("POST"))
  .post("/:id/token", async (c) => {
    await requireApiKey(c.var.auth, c.req.header("Authorization"));
    const sessionId = sessionIdParam(c);
    // A token for an ended session would open nothing (its upgrade is a 410).
    await openSession(c, sessionId);
    return c.json(await tokenAnswer(c, sessionId));
  })
  .all("/:id/token", methodNotAllowed("POST"))
  .delete("/:id", async (c) => {
    await requireApiKey(c.var.auth, c.req.header("Authorization"));
    const sessionId = sessionIdParam(c);
    const stub = await existingSession(c, sessionId);
    await stub.end();
    return c.json({ sessionId, ended: true });
  })
  .get("/:id", async (c) => {
    // The session's state and its token usage: for the app's backend (API key) or a client
    // of the session (its token).
    const sessionId = sessionIdParam(c);
    const { token } = parseQuery(c, ReadQuery);
    await requireApiKeyOrSessionToken(c.var.auth, c.req.header("Authorization"), token, sessionId);
    const stub = await existingSession(c, sessionId);
    return c.json(await stub.describe());
  })
  .all("/:id", methodNotAllowed("GET", "DELETE"))
  .post("/:id/handoff", async (c) => {
    // The app's backend hands the session to another of its agents (after the current turn).
    await requireApiKey(c.var.auth, c.req.header("Authorization"));
    const sessionId = sessionIdParam(c);
    const body = await parseJsonBody(c, HandoffBody);
    const stub = await existingSession(c, sessionId);
    const answer = await stub.handoff(body.agent, body.reason);
    if ("problem" in answer) throw new HttpError(400, "handoff_refused", answer.problem);
    // pending: false — back to the agent that speaks now: the pending handoff was called off.
    return c.json({ sessionId, agent: body.agent, pending: answer.pending }, 202);
  })
  .all("/:id/handoff", methodNotAllowed("POST"))
  .get("/:id/history", async (c) => {
    const sessionId = sessionIdParam(c);
    const query = parseQuery(c, LogReadQuery);
    await requireApiKeyOrSessionToken(
      c.var.auth,
      c.req.header("Authorization"),
      query.token,
      sessionId,
    );
    const stub = await existingSession(c, sessionId);
    return jsonAnswer(c, await stub.history(logRead(query)));
  })
  .all("/:id/history", methodNotAllowed("GET"))
  .get("/:id/timeline", async (c) => {
    const sessionId = sessionIdParam(c);
    const query = parseQuery(c, LogReadQuery);
    await requireApiKeyOrSessionToken(
      c.var.auth,
      c.req.header("Authorization"),
      query.token,
      sessionId,
    );
    const stub = await existingSession(c, sessionId);
    return jsonAnswer(c, await stub.timeline(logRead(query)));
  })
  .all("/:id/timeline", methodNotAllowed("GET"))
  .post("/:id/restart", async (c) => {
    // Fault injection for soak runs: the session's object dies as in a crash and restarts on
    // its next event. Only where FAULT_INJECTION = "on"; anywhere else the route is absent.
    if (c.env.FAULT_INJECTION !== "on") throw new HttpError(404, "not_found", "no such route");
    await requireApiKey(c.var.auth, c.req.header("Authorization"));
    const sessionId = sessionIdParam(c);
    const stub = await openSession(c, sessionId);
    await stub.crash().catch(() => undefined); // the object dies answering: that is the point
    return c.json({ sessionId, restarted: true });
  });
