/**
 * Creating a session, for every door that creates one (POST /v1/sessions, a phone call's
 * voice webhook): the agent, the provider and the metadata checked, the agent resolved for
 * the session (a 400 here, never a broken session later), then the session's object made.
 */
import {
  type AgentDefinition,
  disallowedOptions,
  resolveAgent,
  type SessionLimitOptions,
  type SessionOptions,
  sessionLimits,
} from "../agents/define.js";
import type { SessionRecording } from "../contracts/session-api.js";
import {
  type ProviderName,
  providerMetadataProblem,
  providerModelWarning,
  providerUnavailable,
} from "../provider-registry.js";
import { asksForNaiveRelay } from "../session/meta.js";
import type { LocationHint } from "../worker-config.js";
import { type AppContext, sessionStub } from "./context.js";
import { HttpError } from "./errors.js";

export interface SessionRequest {
  /** Default: a random UUID (a phone call's is named by its CallSid). */
  sessionId?: string | undefined;
  /** Default: the app's default agent. */
  agent?: string | undefined;
  /** Default: the gateway's PROVIDER. */
  provider?: ProviderName | undefined;
  metadata: Record<string, unknown>;
  options: SessionOptions;
  /** The session's caps, within the agent's. */
  limits?: SessionLimitOptions | undefined;
  /** What to record, over the agent's `recording`. */
  recording?: SessionRecording | undefined;
  locationHint?: LocationHint | undefined;
}

/**
 * Creates the session; its id. Throws HttpError (400) for what cannot be served. A model past
 * its shutdown date is said to `warn` (and logged): the session is created all the same.
 */
export async function createSession(
  c: AppContext,
  request: SessionRequest,
  warn?: (warning: string) => void,
): Promise<string> {
  const { app, config } = c.var;
  const env = app.env(c.env);
  const agentName = request.agent ?? app.defaultAgent;
  const agent = app.agent(agentName);
  if (agent === undefined) {
    throw new HttpError(
      400,
      "unknown_agent",
      `unknown agent "${agentName}"; known: ${app.agentNames.join(", ")}`,
    );
  }
  const provider = request.provider ?? config.PROVIDER;
  if (!config.providers.includes(provider))
    throw new HttpError(
      400,
      "provider_unavailable",
      `this gateway offers the providers ${config.providers.join(", ")}`,
    );
  const unavailable = providerUnavailable(env, provider);
  if (unavailable) throw new HttpError(400, "provider_unavailable", unavailable);
  const problem = providerMetadataProblem(provider, env, request.metadata);
  if (problem) throw new HttpError(400, "bad_request", problem);
  if (asksForNaiveRelay({ provider, metadata: request.metadata }) && app.naiveRelay === null)
    throw new HttpError(
      400,
      "bad_request",
      "metadata.naive: this gateway has no naive relay (a measurement arm, served by npm run repro's worker)",
    );

  const sessionId = request.sessionId ?? crypto.randomUUID();
  // The agent is resolved now too: an agent function that refuses this session (or an
  // option it does not allow) is a 400 here, not a broken session later.
  let resolved: AgentDefinition;
  try {
    resolved = resolveAgent(agent, {
      sessionId,
      agent: agentName,
      provider,
      metadata: request.metadata,
      options: {},
      env,
    });
  } catch (err) {
    throw new HttpError(
      400,
      "agent_refused",
      `agent "${agentName}": ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const disallowed = disallowedOptions(resolved, request.options);
  if (disallowed.length > 0) {
    throw new HttpError(
      400,
      "option_not_allowed",
      `agent "${agentName}" does not allow ${disallowed.join(", ")} per session (it allows: ${(resolved.allow ?? []).join(", ") || "none"})`,
    );
  }
  const model = request.options.model ?? resolved.model;
  const warning = providerModelWarning(provider, env, model, Date.now());
  if (warning !== null) {
    console.warn(`session ${sessionId}: ${warning}`);
    warn?.(warning);
  }
  const recording = request.recording ?? {};
  if ((recording.audio === true || recording.wire === true) && env.RECORDINGS === undefined)
    throw new HttpError(
      400,
      "recording_unavailable",
      "this gateway keeps no recordings: it has no RECORDINGS bucket (wrangler.toml [[r2_buckets]], docs/RECORDINGS.md)",
    );
  const limits = sessionLimits(resolved, request.limits ?? {});
  if ("refused" in limits)
    throw new HttpError(400, "option_not_allowed", `agent "${agentName}": ${limits.refused}`);
  await sessionStub(c, sessionId, request.locationHint ?? config.SESSION_LOCATION_HINT).init({
    sessionId,
    agent: agentName,
    provider,
    metadata: request.metadata,
    options: request.options,
    limits: request.limits ?? {},
    recording: request.recording ?? {},
    createdAt: new Date().toISOString(),
  });
  return sessionId;
}
