import type { z } from "zod";
import type { KeypadMode } from "../telephony/keypad.js";
import type { ToolPayload } from "../vocabulary/log-events.js";
import type { ToolPolicy } from "../vocabulary/model.js";
import { SOCKET_MODES, type SocketMode } from "../worker-config.js";

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
  /** The model's id of this call (as in the `tool_call` frame and the log). */
  callId: string;
  /**
   * A key for this call's effect: the same for the call wherever it runs (a run again after a
   * restart of the session's object gets the same key), different for every other call of any
   * session. Hand it to what the tool changes (a payment API's Idempotency-Key, a row's unique
   * key) so that a run again cannot apply twice.
   */
  idempotencyKey: string;
  /**
   * Hands the session to another agent of this session (one its agents list in `handoffs`),
   * once the current turn has ended. Throws for an agent the session cannot reach.
   */
  handoff(agent: string, reason?: string): void;
  /** The phone call this session is (null: the session is no phone call). */
  phoneCall: PhoneCall | null;
  /** @deprecated Renamed `phoneCall` (a tool call is never a phone call); kept one release. */
  call: PhoneCall | null;
  /**
   * Says how a long call is getting on: clients get an ephemeral `tool_progress` frame; a tool
   * whose policy says `progress: "say"` also has the model tell the user, once, that it is
   * still working. Never a result: the call's one outcome is what `run` returns.
   */
  progress(update: ToolProgress): void;
}

/** How far a long call has got (MCP's progress notification, or a tool's own word). */
export interface ToolProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
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
   * The arguments' JSON Schema as declared to the model, when it comes from elsewhere (an MCP
   * server's `inputSchema`): declared as it is, rather than converted from `args`.
   */
  inputSchema?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Its progress reports (`ctx.progress`): `tell` (default) passes them to clients as
   * `tool_progress` frames; `say` also has the model tell the user once that it is still
   * working. Never a result.
   */
  progress?: "tell" | "say" | undefined;
  /**
   * A call still running when the session is handed to another agent: `cancel` (default,
   * `tool_cancelled` with reason `handoff`) or `finish` (the handoff waits for its outcome,
   * at most `timeoutMs`, unless the user's next line cuts the transfer turn short).
   */
  onHandoff?: "cancel" | "finish" | undefined;
  /**
   * Safe to run again with the same `ctx.idempotencyKey` (the tool applies its effect once per
   * key): a call still running when the session's object restarts (a deploy, a runtime
   * update) is run again, under the same call id and key, and its one result is recorded and
   * spoken. Otherwise (the default) such a call is not run again, and the model hears that its
   * outcome is unknown — it may have happened — never that it failed.
   */
  idempotent?: boolean | undefined;
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

/** How an MCP server's tools behave as the agent's tools (each field the tool's own policy). */
export interface McpToolPolicy {
  /** `speak` (default): the model waits for the result and speaks it; `silent`: a side effect. */
  followUp?: "speak" | "silent" | undefined;
  /** A call with no outcome by then is cancelled (the server is told) and answered with an error. */
  timeoutMs?: number | undefined;
  onHandoff?: "cancel" | "finish" | undefined;
  /**
   * The server's progress notifications: `tell` (default) passes them to clients as
   * `tool_progress` frames; `say` also has the model tell the user once that it is still
   * working. Never a second result.
   */
  progress?: "tell" | "say" | undefined;
  /**
   * Safe to run again with the same idempotency key, which every `tools/call` carries in its
   * `_meta` (MCP_IDEMPOTENCY_KEY): as a tool's `idempotent` (defineTool).
   */
  idempotent?: boolean | undefined;
}

/**
 * A remote MCP server (Streamable HTTP) whose tools the agent's model may call, as
 * `<name>__<tool>`. Its tools are listed at a session's start; a server that is down or slow
 * then costs the session only its tools.
 */
export interface McpServerDefinition {
  /** Letters, digits, `_` and `-`; names its tools for the model (`crm__lookup`). */
  name: string;
  /** Its Streamable HTTP endpoint (http or https). */
  url: string;
  /**
   * Sent with every request to it (an API key: take it from the Worker's secrets, e.g. in an
   * agent function, `session.env.CRM_TOKEN`). Never logged.
   */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Only these of its tools (by the server's names); all when absent. */
  allow?: readonly string[] | undefined;
  /** None of these. */
  deny?: readonly string[] | undefined;
  /** The default policy of its tools, and `tools`: per tool (by the server's name). */
  policy?:
    | (McpToolPolicy & { tools?: Readonly<Record<string, McpToolPolicy>> | undefined })
    | undefined;
}

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
   * `ctx.phoneCall.takeKeys()`, so a PIN or a card number never reaches the model or the record.
   */
  keypad?: KeypadMode | undefined;
  /**
   * The agent's caps on a session it starts (each a positive number): `POST /v1/sessions`
   * may lower them per session, never raise them.
   */
  limits?: SessionLimitOptions | undefined;
  /** Remote MCP servers whose tools the model may call, beside `tools`. */
  mcp?: readonly McpServerDefinition[] | undefined;
  /**
   * How a session of this agent holds its apps' sockets (the Worker's `CLIENT_SOCKETS` if
   * unset): `streaming` costs a relay's CPU per audio frame; `hibernatable` lets a session
   * idle with its clients attached leave memory (a chat agent left open in a tab), each
   * message costing an event of its own. See docs/OPERATING.md.
   */
  sockets?: SocketMode | undefined;
  /**
   * What its sessions record in the RECORDINGS bucket (nothing by default): their audio, their
   * model wire, or both; `POST /v1/sessions` may say otherwise per session. docs/RECORDINGS.md.
   */
  recording?: RecordingOptions | undefined;
}

/** What a session records (docs/RECORDINGS.md): opted into per agent, or per session. */
export interface RecordingOptions {
  /** Both directions of the session's audio, as it heard and said them: one WAV. */
  audio?: boolean | undefined;
  /** The model wire: every frame to and from the model, with its time (`npm run replay`). */
  wire?: boolean | undefined;
  /**
   * On a phone call, the model is asked to say this first, word for word (e.g. "This call is
   * recorded."), before it greets the caller.
   */
  announce?: string | undefined;
  /**
   * Each recording stops at this many bytes (a `RECORDING_STOPPED` timeline row says so; the
   * session goes on). Default: the Worker's RECORDING_MAX_BYTES.
   */
  maxBytes?: number | undefined;
}

/** The longest recording announcement an agent may ask for, in characters. */
export const MAX_ANNOUNCEMENT_CHARS = 500;

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
    if (tool?.idempotent !== undefined && typeof tool.idempotent !== "boolean")
      problems.push(`the tool "${tool.name}": idempotent must be true or false`);
    if (tool?.idempotent === true && tool.runOn !== "server")
      problems.push(
        `the tool "${tool.name}": only a server tool can be idempotent (a client answers its own calls)`,
      );
  }
  if (agent.keypad !== undefined && agent.keypad !== "said" && agent.keypad !== "tools")
    problems.push(`keypad must be "said" or "tools", not ${JSON.stringify(agent.keypad)}`);
  if (agent.sockets !== undefined && !SOCKET_MODES.includes(agent.sockets))
    problems.push(
      `sockets must be "streaming" or "hibernatable", not ${JSON.stringify(agent.sockets)}`,
    );
  if (agent.arrival !== undefined && agent.arrival !== "announce" && agent.arrival !== "silent")
    problems.push(`arrival must be "announce" or "silent", not ${JSON.stringify(agent.arrival)}`);
  problems.push(...recordingProblems(agent.recording));
  for (const [name, value] of Object.entries(agent.limits ?? {}))
    if (!(LIMIT_OPTIONS as readonly string[]).includes(name))
      problems.push(`limits: "${name}" is not a limit (${LIMIT_OPTIONS.join(", ")})`);
    else if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
      problems.push(`limits.${name} must be a positive number, not ${String(value)}`);
    else if ((name === "maxTurns" || name === "maxToolCalls") && !Number.isSafeInteger(value))
      problems.push(`limits.${name} must be a whole number, not ${String(value)}`);
  for (const target of agent.handoffs ?? []) {
    const transfer = handoffToolName(target);
    if (!TOOL_NAME.test(transfer))
      problems.push(`handoff target "${target}" is not a name a tool can carry`);
    if (names.has(transfer)) problems.push(`the tool "${transfer}" is liveline's transfer tool`);
    names.add(transfer);
  }
  problems.push(...mcpProblems(agent.mcp, names));
  return problems;
}

/** What makes an agent's `recording` unusable. */
function recordingProblems(recording: RecordingOptions | undefined): string[] {
  if (recording === undefined) return [];
  if (typeof recording !== "object" || recording === null)
    return ["recording must be an object: { audio?, wire?, announce?, maxBytes? }"];
  const problems: string[] = [];
  for (const flag of ["audio", "wire"] as const)
    if (recording[flag] !== undefined && typeof recording[flag] !== "boolean")
      problems.push(`recording.${flag} must be true or false`);
  const { announce, maxBytes } = recording;
  if (
    announce !== undefined &&
    (typeof announce !== "string" ||
      announce.trim() === "" ||
      announce.length > MAX_ANNOUNCEMENT_CHARS)
  )
    problems.push(`recording.announce must be a line of 1 to ${MAX_ANNOUNCEMENT_CHARS} characters`);
  if (maxBytes !== undefined && !(Number.isSafeInteger(maxBytes) && maxBytes > 0))
    problems.push(`recording.maxBytes must be a positive whole number, not ${String(maxBytes)}`);
  return problems;
}

/** An MCP server's name: it prefixes its tools' names, which every provider must take. */
const MCP_SERVER_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

/** The prefix of an MCP server's tools as the model knows them. */
export function mcpToolPrefix(server: string): string {
  return `${server}__`;
}

function mcpProblems(servers: unknown, toolNames: ReadonlySet<string>): string[] {
  if (servers === undefined) return [];
  if (!Array.isArray(servers)) return ["mcp must be an array of servers ({name, url, …})"];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const server of servers as McpServerDefinition[]) {
    const name = String(server?.name);
    if (!MCP_SERVER_NAME.test(name)) {
      problems.push(`mcp server name "${name}" must match ${MCP_SERVER_NAME}`);
      continue;
    }
    if (seen.has(name)) problems.push(`the mcp server "${name}" is declared twice`);
    seen.add(name);
    let url: URL | null = null;
    try {
      url = new URL(String(server.url));
    } catch {
      // said below
    }
    if (url === null || (url.protocol !== "https:" && url.protocol !== "http:"))
      problems.push(`the mcp server "${name}": url must be an http(s) URL`);
    const prefix = mcpToolPrefix(name);
    // Refused by name: the agent's own tool would be confused with one of the server's.
    for (const tool of toolNames)
      if (tool.startsWith(prefix))
        problems.push(
          `the tool "${tool}" collides with the mcp server "${name}" (its tools are named ${prefix}<tool>)`,
        );
    for (const key of ["allow", "deny"] as const) {
      const list = server[key];
      if (list !== undefined && (!Array.isArray(list) || list.some((t) => typeof t !== "string")))
        problems.push(`the mcp server "${name}": ${key} must be a list of tool names`);
    }
    const policies = [server.policy, ...Object.values(server.policy?.tools ?? {})];
    for (const policy of policies) {
      if (policy === undefined) continue;
      const { followUp, timeoutMs, onHandoff, progress, idempotent } = policy;
      if (idempotent !== undefined && typeof idempotent !== "boolean")
        problems.push(`the mcp server "${name}": idempotent must be true or false`);
      if (followUp !== undefined && followUp !== "speak" && followUp !== "silent")
        problems.push(`the mcp server "${name}": followUp must be "speak" or "silent"`);
      if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0))
        problems.push(`the mcp server "${name}": timeoutMs must be a positive number`);
      if (onHandoff !== undefined && onHandoff !== "cancel" && onHandoff !== "finish")
        problems.push(`the mcp server "${name}": onHandoff must be "cancel" or "finish"`);
      if (progress !== undefined && progress !== "tell" && progress !== "say")
        problems.push(`the mcp server "${name}": progress must be "tell" or "say"`);
    }
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
  const refused: string[] = [];
  for (const name of LIMIT_OPTIONS) {
    const value = asked[name];
    if (value === undefined) continue;
    const cap = agent.limits?.[name];
    if (cap !== undefined && value > cap)
      refused.push(`limits.${name} ${value} is above the agent's ${cap}`);
    out[name] = value;
  }
  return refused.length > 0 ? { refused: refused.join("; ") } : out;
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
      ...(tool.progress === undefined ? {} : { progress: tool.progress }),
      ...(tool.idempotent === true ? { idempotent: true } : {}),
    };
  }
  return policies;
}

/**
 * The key a call's effect is made once by (ToolContext `idempotencyKey`): the session's id
 * and the call's, which the log keeps, so a run again after a restart gets the same key.
 */
export function idempotencyKey(sessionId: string, callId: string): string {
  return `${sessionId}:${callId}`;
}
