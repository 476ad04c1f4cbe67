/**
 * The session's life: `session.start` → `session.started` (a flat snapshot: `id`,
 * `expires_at`, `model`, `status` beside the resolved config), `session.update` (only the
 * delegation's settings and triggers change), `session.close` or expiry → `session.closed`.
 */
import { later } from "./speech.js";
import type { Ctx, Json } from "./state.js";
import {
  IMMUTABLE_FIELDS,
  type LiveClientEvent,
  type ResponsesUpdate,
  type SessionStartConfig,
} from "./strict-schemas.js";

type Start = Extract<LiveClientEvent, { type: "session.start" }>;
type Update = Extract<LiveClientEvent, { type: "session.update" }>;

/**
 * Sessions expire after two hours (aplisay/llm-agent PR #306); `expires_at` says when. The
 * knob `expireAfterMs` shortens it (0: never, `expires_at` still two hours on).
 */
const DEFAULT_LIFETIME_S = 2 * 60 * 60;

export function startSession(ctx: Ctx, event: Start): void {
  const s = ctx.s;
  const config = event.session;
  if (config.delegation?.type === "decisions") {
    ctx.error(
      "not_simulated",
      "Decisions delegation is not simulated (liveline simulator).",
      "session.delegation.type",
    );
    return;
  }
  s.config = config;
  s.startedAt = ctx.now;
  if (config.audio?.format !== undefined) s.format = config.audio.format;
  setTools(ctx, config);
  // A seeded history counts as turns had; its last assistant line is "what I said".
  const input = config.input ?? [];
  s.userTurns = input.filter((m) => m.role === "user").length;
  const last = input.findLast((m) => m.role === "assistant");
  if (last !== undefined) s.lastReply = [last.content[0]?.text ?? ""];
  // A user line the seed ends with (after its last assistant line) is still to be answered: a
  // response asked for with nothing new answers it (the conversation as it is).
  const lastUser = input.findLastIndex((m) => m.role === "user");
  const unanswered = lastUser > input.findLastIndex((m) => m.role === "assistant");
  s.unansweredSeed = unanswered ? (input[lastUser]?.content[0]?.text ?? null) : null;
  if (s.knobs.setupMs > 0) {
    // `setupMs`: the service takes a moment to start a session (real ms, as on the other faces).
    const ref = ctx.clientEventId === undefined ? {} : { client_event_id: ctx.clientEventId };
    const started = { type: "session.started", session: snapshot(ctx), ...ref };
    later(ctx, ctx.now + s.knobs.setupMs, started, false, "primary");
  } else {
    ctx.reply({ type: "session.started", session: snapshot(ctx) }, "primary");
  }
  if (s.knobs.expireAfterMs > 0)
    s.queue.push({ at: ctx.now + s.knobs.expireAfterMs, kind: "expire" });
}

function setTools(ctx: Ctx, config: SessionStartConfig): void {
  const delegation = config.delegation;
  const tools = delegation?.type === "responses" ? (delegation.responses.tools ?? []) : [];
  const functions = tools.flatMap((t) => (t.type === "function" ? [t] : []));
  ctx.s.tools = functions.map((t) => t.name);
  ctx.s.toolParameters = Object.fromEntries(
    functions.map((t) => [t.name, t.parameters ?? undefined]),
  );
  ctx.s.toolDescriptions = Object.fromEntries(functions.map((t) => [t.name, t.description ?? ""]));
}

/**
 * Only `delegation` (of the same type) and `triggers` change; the start's other fields are
 * `immutable_field_update` (documented: [CONV], [DEL], SDK SessionUpdateEvent).
 */
export function updateSession(ctx: Ctx, event: Update): void {
  const s = ctx.s;
  const config = s.config!;
  const update = event.session;
  const fixed = IMMUTABLE_FIELDS.find((k) => update[k] !== undefined);
  if (fixed !== undefined) {
    ctx.error(
      "immutable_field_update",
      `Cannot update 'session.${fixed}' after the session started.`,
      `session.${fixed}`,
    );
    return;
  }
  const current = config.delegation?.type ?? "client";
  if (update.delegation !== undefined) {
    const next = update.delegation?.type ?? "client";
    if (next !== current) {
      ctx.error(
        "immutable_field_update",
        "The delegation type cannot change during a session.",
        "session.delegation.type",
      );
      return;
    }
  }
  const delegation = update.delegation;
  if (delegation?.type === "responses" && config.delegation?.type === "responses") {
    const responses = merge(config.delegation.responses, delegation.responses ?? {});
    config.delegation = { ...config.delegation, ...delegation, responses };
    setTools(ctx, config);
  } else if (delegation?.type === "client") {
    config.delegation = { ...delegation };
  }
  if (update.triggers !== undefined) config.triggers = update.triggers;
  ctx.reply({ type: "session.updated", session: snapshot(ctx) });
}

/** Omitted settings keep their values (SDK ResponsesDelegationUpdateConfig). */
function merge<T extends { model: string }>(current: T, update: ResponsesUpdate): T {
  const defined = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
  return { ...current, ...defined };
}

/** `session.closed` with the final snapshot and usage, then the socket closes (1000, assumed). */
export function closeSession(ctx: Ctx, reason: "close_requested" | "expired"): void {
  const s = ctx.s;
  ctx.reply({
    type: "session.closed",
    reason,
    session: snapshot(ctx),
    usage: { seconds: s.usageSeconds },
  });
  s.closed = true;
  ctx.effects.push({ type: "close", code: 1000, reason: "session closed" });
}

/** The resolved session (SDK SessionResource): defaults filled in, `status` always active. */
export function snapshot(ctx: Ctx): Json {
  const s = ctx.s;
  const config = s.config!;
  const lifetime =
    s.knobs.expireAfterMs > 0 ? Math.ceil(s.knobs.expireAfterMs / 1000) : DEFAULT_LIFETIME_S;
  const delegation = config.delegation ?? { type: "client" };
  return {
    id: s.sessionId,
    expires_at: Math.floor(s.startedAt / 1000) + lifetime,
    model: config.model,
    status: "active",
    audio: { format: s.format, output: { voice: config.audio?.output?.voice ?? "marin" } },
    delegation: { acknowledgement_delay_ms: 0, ...delegation },
    input: config.input ?? [],
    instructions: config.instructions ?? null,
    ...(config.safety_identifier == null ? {} : { safety_identifier: config.safety_identifier }),
    store: config.store ?? false,
    ...(config.triggers === undefined ? {} : { triggers: config.triggers }),
  };
}
