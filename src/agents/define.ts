import type { z } from "zod";
import type { KeypadMode } from "../telephony/keypad.js";
import type { ToolPayload } from "../vocabulary/log-events.js";
import type { ToolPolicy } from "../vocabulary/model.js";

/** What a server tool gets besides its arguments. `Env`: the app's Worker bindings. */
export interface ToolContext<Env = unknown> {
  /** Fires when the call times out or the model cancels it. */
  signal: AbortSignal;
  sessionId: string;
  /** The app's bindings (KV, D1, service bindings, secrets) as its Worker receives them. */
  env: Env;
  /** The session's `metadata`, as `POST /v1/sessions` recorded it (e.g. the signed-in user). */
  metadata: Record<string, unknown>;
  /** The agent the call was made to. */
  agent: string;
  /**
   * Hands the session to another agent of this session (one its agents list in `handoffs`),
   * once the current turn has ended. Throws for an agent the session cannot reach.
   */
  handoff(agent: string, reason?: string): void;
  /** The phone call this session is (null: the session is no call). */
  call: PhoneCall | null;
}

/** A phone call, as the tools of its session see it. */
export interface PhoneCall {
  /** The caller's number and the number called, as the carrier gave them. */
  from: string;
  to: string;
  /**
   * Ends the call once the caller has heard this turn's reply (the goodbye), learned from the
   * carrier's marks; the session ends with it.
   */
  end(): void;
  /**
   * Transfers the call to `number` (E.164, e.g. "+15550100") once the caller has heard this
   * turn's reply, through the carrier's API; the session ends when the carrier took it. If the
   * carrier refuses, the model is told why and the call goes on. Throws for a number not in
   * E.164 form.
   */
  transfer(number: string): void;
  /**
   * The latest entry the caller typed on the keypad that no tool has read yet (its keys,
   * without the closing #), or null; a newer entry replaces an unread one (a retyped PIN).
   * Only agents with `keypad: "tools"` keep entries.
   */
  takeKeys(): string | null;
}

/**
 * A tool, defined in code with a zod schema for its arguments (as the rest of the ecosystem
 * does). Server tools carry `run`; client tools are answered by the phone or browser.
 */
export interface ToolDefinition<Args extends z.ZodType = z.ZodType, Env = unknown> {
  name: string;
  description: string;
  args: Args;
  runOn: "server" | "client";
  /** silent: a side effect, the model must not speak because of it; speak: an answer. */
  followUp: "silent" | "speak";
  timeoutMs?: number;
  /**
   * A call still running when the session is handed to another agent: `cancel` (default,
   * `tool_cancelled` with reason `handoff`) or `finish` (the handoff waits for its outcome,
   * at most `timeoutMs`, unless the user's next line cuts the transfer turn short).
   */
  onHandoff?: "cancel" | "finish" | undefined;
  // Method syntax on purpose: a tool written for the app's Env fits an agent's tool list.
  run?(args: z.infer<Args>, ctx: ToolContext<Env>): Promise<ToolPayload>;
}

/** What a session's creator may set per session, when the agent allows it. */
export const SESSION_OPTIONS = ["instructions", "voice", "model", "language"] as const;
export type SessionOptionName = (typeof SESSION_OPTIONS)[number];
export type SessionOptions = Partial<Record<SessionOptionName, string>>;

/** A session's caps: reaching one ends it gracefully (the model says goodbye first). */
export const LIMIT_OPTIONS = [
  "maxDurationSeconds",
  "maxCostUsd",
  "maxTurns",
  "maxToolCalls",
] as const;
export type LimitOption = (typeof LIMIT_OPTIONS)[number];
export type SessionLimitOptions = Partial<Record<LimitOption, number>>;

export interface AgentDefinition {
  /** The system instruction the model gets. */
  instructions: string;
  tools: readonly ToolDefinition[];
  /** The provider's voice name (Gemini: a prebuilt voice; OpenAI: a voice); provider default if unset. */
  voice?: string | undefined;
  /** The model, as the provider names it; the provider's configured model if unset. */
  model?: string | undefined;
  /** BCP-47 language code of speech (e.g. "de-DE"), where the provider takes one. */
  language?: string | undefined;
  /** Which `SESSION_OPTIONS` `POST /v1/sessions` may set for this agent (none by default). */
  allow?: readonly SessionOptionName[] | undefined;
  /**
   * The agents (by name) this one may hand the conversation to: the model gets a
   * `transfer_to_<name>` tool for each, answered by liveline.
   */
  handoffs?: readonly string[] | undefined;
  /**
   * When a session is handed to this agent during a turn: `announce` (default) speaks one
   * line in that turn (it introduces itself), `silent` waits for the user to speak.
   */
  arrival?: "announce" | "silent" | undefined;
  /**
   * On a phone call, what the keys the caller types become (an entry ends at # or a pause):
   * `said` (default) — a line the model hears, "(keys 1234 pressed on the phone)"; `tools` —
   * the model hears only that an entry was typed, and tools read its keys with
   * `ctx.call.takeKeys()`, so a PIN or a card number never reaches the model or the record.
   */
  keypad?: KeypadMode | undefined;
  /**
   * The agent's caps on a session it starts (each a positive number): `POST /v1/sessions`
   * may lower them per session, never raise them.
   */
  limits?: SessionLimitOptions | undefined;
}

/** Who a session is for, as an agent function sees it (at creation and at every start). */
export interface SessionInfo<Env = unknown> {
  sessionId: string;
  agent: string;
  provider: string;
  metadata: Record<string, unknown>;
  /** The per-session options the creator asked for (already checked against `allow`). */
  options: SessionOptions;
  env: Env;
}

/** An agent: fixed, or a function of the session (instructions and tools per user). */
export type Agent<Env = unknown> =
  | AgentDefinition
  | ((session: SessionInfo<Env>) => AgentDefinition);

/** Keeps the schema's inferred argument type for `run` while storing tools uniformly. */
export function defineTool<Args extends z.ZodType, Env = unknown>(
  tool: ToolDefinition<Args, Env>,
): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** An agent, fixed or per session; the identity function, there for its types. */
export function defineAgent<Env = unknown>(agent: Agent<Env>): Agent<Env> {
  return agent;
}

/**
 * The agent a session runs: the definition (or the function's answer for this session) with
 * the session's options on top. Throws on a definition that cannot work (a duplicate tool).
 */
export function resolveAgent<Env>(agent: Agent<Env>, session: SessionInfo<Env>): AgentDefinition {
  const base = typeof agent === "function" ? agent(session) : agent;
  const problems = agentProblems(base);
  if (problems.length > 0) throw new Error(problems.join("; "));
  const o = session.options;
  return {
    ...base,
    instructions: o.instructions ?? base.instructions,
    voice: o.voice ?? base.voice,
    model: o.model ?? base.model,
    language: o.language ?? base.language,
  };
}

/** The transfer tool the model gets for handing the session to `target` (src/agents/handoff-tools.ts). */
export function handoffToolName(target: string): string {
  return `transfer_to_${target}`;
}

/** What a session runs when its agent cannot be had: no instructions, no tools. */
export const NO_AGENT: AgentDefinition = { instructions: "", tools: [] };

/** Function names every provider takes (Gemini's rule is the strictest: 64, no spaces). */
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** What makes an agent definition unusable (empty: nothing), for its author to read. */
export function agentProblems(agent: AgentDefinition): string[] {
  if (typeof agent !== "object" || agent === null) return ["an agent must be an object"];
  if (typeof agent.instructions !== "string") return ["instructions must be a string"];
  if (!Array.isArray(agent.tools)) return ["tools must be an array of defineTool(...)"];
  const problems: string[] = [];
  const names = new Set<string>();
  for (const tool of agent.tools) {
    if (!TOOL_NAME.test(String(tool?.name)))
      problems.push(`tool name "${String(tool?.name)}" must match ${TOOL_NAME}`);
    else if (names.has(tool.name)) problems.push(`the tool "${tool.name}" is declared twice`);
    names.add(tool?.name);
    if (tool?.onHandoff !== undefined && tool.onHandoff !== "cancel" && tool.onHandoff !== "finish")
      problems.push(`the tool "${tool.name}": onHandoff must be "cancel" or "finish"`);
    if (tool?.runOn === "server" && typeof tool.run !== "function")
      problems.push(`the server tool "${tool.name}" has no run function`);
  }
  if (agent.keypad !== undefined && agent.keypad !== "said" && agent.keypad !== "tools")
    problems.push(`keypad must be "said" or "tools", not ${JSON.stringify(agent.keypad)}`);
  if (agent.arrival !== undefined && agent.arrival !== "announce" && agent.arrival !== "silent")
    problems.push(`arrival must be "announce" or "silent", not ${JSON.stringify(agent.arrival)}`);
  for (const [name, value] of Object.entries(agent.limits ?? {}))
    if (!(LIMIT_OPTIONS as readonly string[]).includes(name))
      problems.push(`limits: "${name}" is not a limit (${LIMIT_OPTIONS.join(", ")})`);
    else if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
      problems.push(`limits.${name} must be a positive number, not ${JSON.stringify(value)}`);
  for (const target of agent.handoffs ?? []) {
    const transfer = handoffToolName(target);
    if (!TOOL_NAME.test(transfer))
      problems.push(`handoff target "${target}" is not a name a tool can carry`);
    if (names.has(transfer)) problems.push(`the tool "${transfer}" is liveline's transfer tool`);
  }
  return problems;
}

/**
 * A session's caps: the agent's, each lowered where the session asks; a session that asks to
 * raise one past the agent's gets the refusal's words instead.
 */
export function sessionLimits(
  agent: AgentDefinition,
  asked: SessionLimitOptions,
): SessionLimitOptions | { refused: string } {
  const out: SessionLimitOptions = { ...agent.limits };
  for (const name of LIMIT_OPTIONS) {
    const value = asked[name];
    if (value === undefined) continue;
    const cap = agent.limits?.[name];
    if (cap !== undefined && value > cap)
      return { refused: `limits.${name} ${value} is above the agent's ${cap}` };
    out[name] = value;
  }
  return out;
}

/** The options this agent does not allow, by name (empty: all are allowed). */
export function disallowedOptions(agent: AgentDefinition, options: SessionOptions): string[] {
  const allowed = new Set<string>(agent.allow ?? []);
  return Object.keys(options).filter((k) => !allowed.has(k));
}

/** The policy table the session core needs. */
export function toolPolicies(
  agent: AgentDefinition,
  defaultTimeoutMs: number,
): Record<string, ToolPolicy> {
  const policies: Record<string, ToolPolicy> = {};
  for (const tool of agent.tools) {
    policies[tool.name] = {
      name: tool.name,
      runOn: tool.runOn,
      followUp: tool.followUp,
      timeoutMs: tool.timeoutMs ?? defaultTimeoutMs,
      ...(tool.onHandoff === undefined ? {} : { onHandoff: tool.onHandoff }),
    };
  }
  return policies;
}
