/**
 * The world the property tests run in: the pure core in its in-memory shell, wired to the
 * reference provider model, driven by random actions; and the invariants checked on it.
 */
import fc from "fast-check";
import type { Arrival, CoreConfig, Guards } from "../../src/core/session-state.js";
import { unansweredCalls, validateHistory } from "../../src/history/validate.js";
import { GPT_LIVE_CAPABILITIES } from "../../src/providers/gpt-live/adapter.js";
import { frameOf } from "../../src/vocabulary/frames.js";
import type { ModelCapabilities, ToolPolicy } from "../../src/vocabulary/model.js";
import { Harness, TOOLS } from "./harness.js";
import { type GenerationPlan, PLAIN, REAL_OPENINGS, ReferenceModel } from "./reference-model.js";

/** Model families as the capability table describes them (DESIGN.md, provider facts). */
const CAPABILITIES: Record<string, ModelCapabilities> = {
  /** A 2.5 model whose record claims SILENT (the simulator's; an app's override). */
  "silent-claimed": {
    nonBlockingCalls: true,
    resultScheduling: true,
    turnCompleteWaitsForResults: false,
    silentHonoured: true,
    responsesOnRequest: false,
  },
  /** Every 2.5 record liveline ships: SILENT not claimed, silent results withheld. */
  "gemini-2.5": {
    nonBlockingCalls: true,
    resultScheduling: true,
    turnCompleteWaitsForResults: false,
    silentHonoured: false,
    responsesOnRequest: false,
  },
  "gemini-3.1-flash-live": {
    nonBlockingCalls: false,
    resultScheduling: false,
    turnCompleteWaitsForResults: true,
    silentHonoured: false,
    responsesOnRequest: false,
  },
  vertex: {
    nonBlockingCalls: true,
    resultScheduling: false,
    turnCompleteWaitsForResults: false,
    silentHonoured: false,
    responsesOnRequest: false,
  },
  /** Every response asked for (response.create): no regeneration, nothing to judge. */
  openai: {
    nonBlockingCalls: true,
    resultScheduling: true,
    turnCompleteWaitsForResults: false,
    silentHonoured: true,
    responsesOnRequest: true,
  },
  /** No turns: nothing ends or cuts what it says; replies asked for say so (GPT-Live). */
  "gpt-live": GPT_LIVE_CAPABILITIES,
  /** Blocking calls only, and turn_complete does not wait for them (2.x with BLOCKING tools). */
  "gemini-2.x-blocking": {
    nonBlockingCalls: false,
    resultScheduling: false,
    turnCompleteWaitsForResults: false,
    silentHonoured: false,
    responsesOnRequest: false,
  },
};

/**
 * Two agents, each with the shared tools and a transfer tool to either (one to itself is
 * answered and changes nothing): the model may call them, and the backend may hand off.
 */
const AGENTS = ["front", "desk"] as const;
const TRANSFERS: Record<string, ToolPolicy> = Object.fromEntries(
  AGENTS.map((a) => [
    `transfer_to_${a}`,
    { name: `transfer_to_${a}`, runOn: "server", followUp: "speak", timeoutMs: 5_000 },
  ]),
);
/** Every tool a model in this world may call, by name (a handoff waits for set_preference). */
const ALL_TOOLS: Record<string, ToolPolicy> = {
  ...TOOLS,
  set_preference: { ...TOOLS.set_preference!, onHandoff: "finish" },
  // A long lookup whose progress the model is asked to say once (an MCP tool's policy).
  lookup_faq: { ...TOOLS.lookup_faq!, progress: "say" },
  ...TRANSFERS,
};

type Action =
  /** `again`: the user says the previous line again ("sorry, what was included?"). */
  | { t: "user_text"; again: boolean }
  | { t: "backend_handoff"; to: number }
  | { t: "model_step"; n: number }
  | { t: "tool_finish"; pick: number }
  /** A running server call reports progress (an MCP server's notification). */
  | { t: "tool_progress"; pick: number }
  | { t: "client_answer"; pick: number; client: number }
  | { t: "duplicate_result"; pick: number }
  | { t: "unknown_result" }
  | { t: "timer" }
  | { t: "advance"; ms: number }
  | { t: "disconnect"; client: number }
  | { t: "reconnect"; client: number }
  | { t: "drop_upstream"; code: number }
  | { t: "go_away" }
  /** The session's cost cap is reached (the shell measures cost; the core is told). */
  | { t: "cost_cap" };

const CLIENTS = ["phone", "laptop"];

/**
 * `userWeight`: how often the user types (the liveness runs want new input mid-race more
 * often); `progress`: running calls report progress (the lookup's policy has it said once);
 * `caps`: the session has caps, and its cost cap may be reached at any moment.
 */
const actionArb = (userWeight: number, progress: boolean, caps: boolean): fc.Arbitrary<Action> =>
  fc.oneof(
    ...(progress
      ? [{ weight: 5, arbitrary: fc.nat(5).map((pick): Action => ({ t: "tool_progress", pick })) }]
      : []),
    {
      weight: userWeight,
      arbitrary: fc
        .constantFrom(false, false, true)
        .map((again): Action => ({ t: "user_text", again })),
    },
    {
      weight: 12,
      arbitrary: fc.integer({ min: 1, max: 4 }).map((n): Action => ({ t: "model_step", n })),
    },
    { weight: 4, arbitrary: fc.nat(5).map((pick): Action => ({ t: "tool_finish", pick })) },
    {
      weight: 4,
      arbitrary: fc
        .record({ pick: fc.nat(5), client: fc.nat(1) })
        .map((r): Action => ({ t: "client_answer", ...r })),
    },
    { weight: 3, arbitrary: fc.nat(5).map((pick): Action => ({ t: "duplicate_result", pick })) },
    { weight: 1, arbitrary: fc.constant<Action>({ t: "unknown_result" }) },
    { weight: 2, arbitrary: fc.constant<Action>({ t: "timer" }) },
    {
      weight: 2,
      arbitrary: fc.integer({ min: 1, max: 3000 }).map((ms): Action => ({ t: "advance", ms })),
    },
    { weight: 1, arbitrary: fc.nat(1).map((client): Action => ({ t: "disconnect", client })) },
    { weight: 2, arbitrary: fc.nat(1).map((client): Action => ({ t: "reconnect", client })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(1011, 1006).map((code): Action => ({ t: "drop_upstream", code })),
    },
    { weight: 1, arbitrary: fc.constant<Action>({ t: "go_away" }) },
    { weight: 1, arbitrary: fc.nat(1).map((to): Action => ({ t: "backend_handoff", to })) },
    ...(caps ? [{ weight: 1, arbitrary: fc.constant<Action>({ t: "cost_cap" }) }] : []),
  );

/**
 * A generation's plan. `progress`: worlds whose calls report progress call the lookup (the
 * tool whose progress the model is asked to say) more often, so that the ask is drawn often.
 */
const planArb = (progress: boolean): fc.Arbitrary<GenerationPlan> =>
  fc.record({
    calls: fc.array(
      fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...Object.keys(TOOLS)) },
        { weight: progress ? 6 : 0, arbitrary: fc.constant("lookup_faq") },
        { weight: 1, arbitrary: fc.constantFrom(...Object.keys(TRANSFERS)) },
      ),
      { maxLength: 3 },
    ),
    // Honest replies that open alike (issue 8): most plans open with a common phrase.
    opening: fc.constantFrom(...REAL_OPENINGS),
    reply: fc.oneof(
      { weight: 12, arbitrary: fc.constant<GenerationPlan["reply"]>("normal") },
      { weight: 1, arbitrary: fc.constant<GenerationPlan["reply"]>("none") },
      { weight: 1, arbitrary: fc.constant<GenerationPlan["reply"]>("empty") },
      { weight: 1, arbitrary: fc.constant<GenerationPlan["reply"]>("stall") },
    ),
    race: fc.boolean(),
    emptyAfterTools: fc.boolean(),
    duplicateCallDelivery: fc.boolean(),
  });

/**
 * A session's caps (issue 50: a cap reached at every point of a turn). Most worlds have none;
 * a duration cap is up this many ms after the session starts; a turns or tool-calls cap at
 * this many.
 */
export type CapsPlan =
  | { kind: "none" }
  | { kind: "duration"; afterMs: number }
  | { kind: "turns"; max: number }
  | { kind: "tool_calls"; max: number };

export const NO_CAPS: CapsPlan = { kind: "none" };

const capsArb: fc.Arbitrary<CapsPlan> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<CapsPlan>(NO_CAPS) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 20_000 })
      .map((afterMs): CapsPlan => ({ kind: "duration", afterMs })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 4 }).map((max): CapsPlan => ({ kind: "turns", max })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 4 }).map((max): CapsPlan => ({ kind: "tool_calls", max })),
  },
);

/**
 * Which capability records a world draws. `truthful`: each record says what its model does
 * (every record liveline ships: none claims SILENT without a recording showing it).
 * `silent-claimed`: a record claims SILENT is honoured (an app's override) and the model may
 * ignore it (O2): only every turn ending once, without a stall, is promised there.
 */
export type Records = "truthful" | "silent-claimed";

/**
 * A session's world. `busy`: the user types more often, so that new input meets every race
 * (the liveness runs).
 */
export function scenarioArb(
  records: Records,
  {
    busy = false,
    families = Object.keys(CAPABILITIES),
    progress = false,
    caps = false,
  }: { busy?: boolean; families?: string[]; progress?: boolean; caps?: boolean } = {},
) {
  const claimed = records === "silent-claimed";
  return fc.record({
    // A wrong claim matters where SILENT is sent: the record that claims it, most often.
    capabilities:
      claimed && families.includes("silent-claimed")
        ? fc.constantFrom(...families, "silent-claimed", "silent-claimed", "silent-claimed")
        : fc.constantFrom(...families),
    plans: fc.array(planArb(progress), { minLength: 1, maxLength: 8 }),
    emptyNudgeReplies: fc.nat(3),
    /** Late speak results met with silence: the watchdog's nudge is what gets them spoken. */
    silentLateFollowUps: fc.nat(2),
    /** The model ignores SILENT although its capability record says it honours it. */
    ignoresSilent: claimed ? fc.constantFrom(true, true, false) : fc.constant(false),
    actions: fc.array(actionArb(busy ? 6 : 3, progress, caps), { minLength: 5, maxLength: 60 }),
    caps: caps ? capsArb : fc.constant<CapsPlan>(NO_CAPS),
    /** What each agent does when handed a session during a turn. */
    arrival: fc.tuple(
      fc.constantFrom<Arrival>("announce", "silent"),
      fc.constantFrom<Arrival>("announce", "silent"),
    ),
    /** Both agents on one provider link (a handoff updates it in place, as on OpenAI). */
    sharedLink: fc.boolean(),
  });
}
export type Scenario = ReturnType<typeof scenarioArb> extends fc.Arbitrary<infer S> ? S : never;

/** A live session: the core in its in-memory shell, wired to the reference model. */
export function world(
  scenario: Scenario,
  guards: Guards,
  config: Partial<CoreConfig> = {},
  {
    pairsReplies = true,
    around,
  }: { pairsReplies?: boolean; around?: (h: Harness) => unknown } = {},
) {
  const caps = CAPABILITIES[scenario.capabilities]!;
  const start = 1_000_000;
  const plan = scenario.caps;
  const limits =
    plan.kind === "none"
      ? undefined
      : plan.kind === "duration"
        ? { startedAt: start, endsAt: start + plan.afterMs }
        : plan.kind === "turns"
          ? { startedAt: start, maxTurns: plan.max }
          : { startedAt: start, maxToolCalls: plan.max };
  const h = new Harness({
    limits,
    guards,
    capabilities: caps,
    sessionId: "s1",
    tools: ALL_TOOLS,
    agent: AGENTS[0],
    agentTools: Object.fromEntries(AGENTS.map((a) => [a, ALL_TOOLS])),
    handoffTools: Object.fromEntries(AGENTS.map((a) => [`transfer_to_${a}`, a])),
    agentArrival: { [AGENTS[0]]: scenario.arrival[0], [AGENTS[1]]: scenario.arrival[1] },
    agentLinks: scenario.sharedLink ? Object.fromEntries(AGENTS.map((a) => [a, "one"])) : {},
    ...config,
  });
  // A judgement put around the core (a control's: opening-judgement.ts).
  around?.(h);
  let planIndex = 0;
  const nextPlan = () => scenario.plans[planIndex++ % scenario.plans.length] ?? PLAIN;
  const model = new ReferenceModel(caps, (name) => ALL_TOOLS[name]?.followUp ?? "speak", nextPlan);
  model.emptyNudgeReplies = scenario.emptyNudgeReplies;
  model.ignoresSilent = scenario.ignoresSilent;
  model.silentLateFollowUps = scenario.silentLateFollowUps;
  model.pairsReplies = pairsReplies;
  h.onOpenUpstream = (open) =>
    model.connect(
      open.mode === "resume"
        ? { handle: open.handle }
        : { reply: lastReplyInLog(h), unspoken: unspokenInLog(h) },
    );
  h.onCloseUpstream = () => model.close();
  h.onModelCommand = (command) => model.receive(command);
  let userTurns = 0;
  let lastLine: string | null = null;
  let unknown = 0;
  /** When anything last happened that the core could take as progress (for the bound). */
  let lastActivityAt = h.now;
  const deliver = (event: Parameters<typeof h.model>[0]) => {
    lastActivityAt = h.now;
    h.model(event);
  };

  const pendingClientCalls = () => {
    const done = new Set(
      h.log.flatMap((e) =>
        e.kind === "tool_result" || e.kind === "tool_cancelled" ? [e.callId] : [],
      ),
    );
    return h.log.flatMap((e) =>
      e.kind === "tool_call" && e.runOn === "client" && !done.has(e.callId) ? [e.callId] : [],
    );
  };
  const answeredClientCalls = () => {
    const client = new Set(
      h.log.flatMap((e) => (e.kind === "tool_call" && e.runOn === "client" ? [e.callId] : [])),
    );
    return h.log.flatMap((e) =>
      e.kind === "tool_result" && client.has(e.callId) ? [e.callId] : [],
    );
  };
  const connected = (i: number) => h.clients.get(CLIENTS[i]!)?.connected ?? false;
  const anyClient = () => CLIENTS.find((c) => h.clients.get(c)?.connected);

  function run(action: Action): void {
    switch (action.t) {
      case "user_text": {
        const client = anyClient();
        if (!client || h.state.ended) return;
        userTurns++;
        const text = action.again && lastLine !== null ? lastLine : `question ${userTurns}`;
        lastLine = text;
        h.input({ type: "client_text", clientId: client, text });
        return;
      }
      case "backend_handoff":
        if (h.state.ended) return;
        h.input({ type: "handoff_requested", to: AGENTS[action.to]!, reason: "backend" });
        return;
      case "model_step":
        for (let i = 0; i < action.n; i++) {
          const event = model.out.shift();
          if (!event) return;
          deliver(event);
        }
        return;
      case "tool_finish": {
        const running = [...h.runningTools.keys()];
        const callId = running[action.pick % Math.max(1, running.length)];
        if (!callId) return;
        const name = h.runningTools.get(callId);
        h.runningTools.delete(callId);
        lastActivityAt = h.now;
        // A deterministic tool: the same result each time it is called.
        h.input({ type: "tool_outcome", callId, result: { value: `r-${name}` } });
        return;
      }
      case "tool_progress": {
        const running = [...h.runningTools.keys()];
        const callId = running[action.pick % Math.max(1, running.length)];
        if (!callId) return;
        h.input({ type: "tool_progress", callId, progress: action.pick + 1 });
        return;
      }
      case "client_answer": {
        const pending = pendingClientCalls();
        const callId = pending[action.pick % Math.max(1, pending.length)];
        if (!callId || !connected(action.client)) return;
        h.input({
          type: "client_tool_result",
          clientId: CLIENTS[action.client]!,
          callId,
          result: { chips: [callId] },
        });
        return;
      }
      case "duplicate_result": {
        const answered = answeredClientCalls();
        const callId = answered[action.pick % Math.max(1, answered.length)];
        const client = anyClient();
        if (!callId || !client) return;
        h.input({ type: "client_tool_result", clientId: client, callId, result: { again: true } });
        return;
      }
      case "unknown_result": {
        const client = anyClient();
        if (!client) return;
        unknown++;
        h.input({
          type: "client_tool_result",
          clientId: client,
          callId: `never-${unknown}`,
          result: {},
        });
        return;
      }
      case "timer": {
        const next = Math.min(...h.timers.values());
        if (Number.isFinite(next)) modelWithinGrace(next);
        h.fireNextTimer();
        return;
      }
      case "advance":
        modelWithinGrace(h.now + action.ms);
        h.advance(action.ms);
        return;
      case "disconnect":
        h.disconnect(CLIENTS[action.client]!);
        return;
      case "reconnect": {
        const id = CLIENTS[action.client]!;
        if (connected(action.client)) return;
        h.connect(id, h.clients.has(id) ? h.lastSeqSeen(id) : undefined);
        return;
      }
      case "drop_upstream":
        if (model.connected) model.drop(action.code);
        return;
      case "go_away":
        if (model.connected) model.out.push({ type: "go_away", timeLeftMs: 20_000 });
        return;
      case "cost_cap":
        if (h.state.ended) return;
        lastActivityAt = h.now;
        h.input({ type: "limit_reached", limit: "cost", value: 1 });
        return;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * The timing assumptions of the guarantees: what the model has already produced reaches
   * the core before a follow-up grace (followUpGraceMs) runs out — its reaction to a result
   * shows within the grace. So before time passes a grace timer's deadline, the model's
   * pending output is delivered. A model slower than that is still bounded by the watchdog
   * (liveness); the watchdog's deadline carries no such assumption.
   */
  function modelWithinGrace(until: number): void {
    const graceDue = () =>
      [...h.timers].some(([timer, at]) => timer.startsWith("grace:") && at <= until);
    // Likewise the window in which a regeneration is recognised (a model that ignores SILENT
    // reacts to the result as it reacts to input, within seconds): its reaction comes first.
    const regenDue = () => h.state.regenUntil > h.now && h.state.regenUntil <= until;
    while (model.out.length > 0 && (graceDue() || regenDue())) deliver(model.out.shift()!);
  }

  /** Let everything settle: the model says what it has, tools finish, clients answer, timers fire. */
  function drain(): void {
    for (let i = 0; i < 2000; i++) {
      if (!connected(0) && !h.state.ended) {
        h.connect("phone", h.lastSeqSeen("phone"));
        continue;
      }
      const event = model.out.shift();
      if (event) {
        deliver(event);
        continue;
      }
      const running = [...h.runningTools.keys()][0];
      if (running) {
        const name = h.runningTools.get(running);
        h.runningTools.delete(running);
        h.input({ type: "tool_outcome", callId: running, result: { value: `r-${name}` } });
        continue;
      }
      const pending = pendingClientCalls()[0];
      if (pending && connected(0)) {
        h.input({
          type: "client_tool_result",
          clientId: "phone",
          callId: pending,
          result: { chips: [] },
        });
        continue;
      }
      if (h.fireNextTimer()) continue;
      return;
    }
    throw new Error("the session did not settle");
  }

  return { h, model, run, drain, lastActivityAt: () => lastActivityAt };
}

/** The model's words in the log: text from a model that writes, transcript from one that speaks. */
function saysWords(
  e: Harness["log"][number],
): e is Extract<Harness["log"][number], { kind: "model_text" | "transcript" }> {
  return e.kind === "model_text" || e.kind === "transcript";
}

/** Speak results in the log that no model text speaks: a model seeded from it has them to say. */
function unspokenInLog(h: Harness): string[] {
  const spoken = new Set(h.log.flatMap((e) => (saysWords(e) ? [e.text] : [])));
  return h.log.flatMap((e) =>
    e.kind === "tool_result" &&
    ALL_TOOLS[e.name]?.followUp === "speak" &&
    !spoken.has(`spoken:${e.callId}`)
      ? [e.callId]
      : [],
  );
}

/** The chunks of the last model reply in the log: what a model seeded from the log said last. */
function lastReplyInLog(h: Harness): string[] {
  const texts = h.log.filter((e) => saysWords(e));
  const last = texts.at(-1);
  return last ? texts.filter((e) => e.turnId === last.turnId).map((e) => e.text) : [];
}

/**
 * Invariants that hold after every step. `noDuplicates`: no model text reaches clients
 * twice — promised where the capability record is truthful; a model that ignores SILENT
 * against its record's claim can get a regenerated reply delivered (when in doubt, deliver).
 */
export function checkStep(h: Harness, model: ReferenceModel, noDuplicates = true): void {
  const violations = validateHistory(h.log);
  if (violations.length > 0) throw new Error(`history invalid: ${JSON.stringify(violations)}`);
  if (noDuplicates) {
    // A text may reach clients as often as the model said it answering inputs (the same
    // question asked again gets the same words), never more.
    const seen = new Map<string, number>();
    for (const e of h.log) {
      if (!saysWords(e)) continue;
      const times = (seen.get(e.text) ?? 0) + 1;
      seen.set(e.text, times);
      if (times > 1 && times > model.answers.filter((a) => a.gen?.texts.includes(e.text)).length)
        throw new Error(`model reply forwarded twice: "${e.text}"`);
    }
  }
  // The agent changes only by handoff, each from the agent that spoke until then.
  let agent: string | undefined = h.state.config.agent;
  for (const e of h.log) {
    if (e.kind !== "handoff") continue;
    if (e.from !== agent || e.to === e.from)
      throw new Error(`handoff ${e.from} → ${e.to} while ${agent} spoke`);
    agent = e.to;
  }
  if (agent !== h.state.agent)
    throw new Error(`the log says ${agent} speaks, the core ${h.state.agent}`);
  // A turn stops at its end: nothing the model says is attributed to it afterwards.
  const ended = new Set<string>();
  for (const e of h.log) {
    if (e.kind === "turn_complete" || e.kind === "interrupted") ended.add(e.turnId);
    else if ((saysWords(e) || e.kind === "tool_call") && ended.has(e.turnId)) {
      throw new Error(`${e.kind} for turn ${e.turnId} after its end`);
    }
  }
  checkEndsOnce(h);
  checkOfferedLive(h);
  for (const [id, view] of h.clients) {
    for (const seqs of view.connections) {
      for (let i = 1; i < seqs.length; i++) {
        if (seqs[i] !== seqs[i - 1]! + 1)
          throw new Error(`${id} saw seq ${seqs[i]} after ${seqs[i - 1]}`);
      }
    }
  }
}

/** Errors that tell the user a turn did not go as asked: what it owed may be missing. */
const TURN_ERRORS = new Set(["empty_response", "model_timeout"]);

/**
 * Turns that ended interrupted or with a visible error: no answer is promised for them.
 * `resumed` also excuses turns carried to a new connection (`turn_resumed`) from having the
 * very generation the old connection lost: the new one answers again, visibly. (Their speak
 * results must still be spoken.)
 */
function excusedTurns(h: Harness, resumed = false, cut = true): Set<string> {
  return new Set(
    h.log.flatMap((e) => {
      if (e.kind === "interrupted") return cut ? [e.turnId] : [];
      if (
        e.kind === "error" &&
        e.turnId &&
        (TURN_ERRORS.has(e.code) || (resumed && e.code === "turn_resumed"))
      )
        return [e.turnId];
      return [];
    }),
  );
}

/**
 * The longest an open turn may go with nothing happening (no model event, no tool outcome,
 * no log entry) before the core acts on it: the watchdog's deadline plus the waits that have
 * their own timers (a follow-up grace, the longest tool timeout, a reconnect backoff).
 */
export function progressBound(h: Harness): number {
  const c = h.state.config;
  const longestTool = Math.max(...Object.values(ALL_TOOLS).map((t) => t.timeoutMs));
  return c.modelTimeoutMs + c.followUpGraceMs + longestTool + c.reconnectMaxMs;
}

/** Liveness, after every step: no turn stays open past the bound with nothing happening. */
export function checkProgress(h: Harness, lastActivityAt: number): void {
  const turn = h.state.turn;
  if (turn === null) return;
  const since = Math.max(lastActivityAt, h.log.at(-1)?.at ?? 0);
  if (h.now - since > progressBound(h))
    throw new Error(`turn ${turn.id} waited ${h.now - since} ms with nothing happening`);
}

/**
 * Every answer the model gave to an input reaches that input's turn, in full — unless the
 * turn was interrupted or shows an error that says the model failed it. `cutExcused: false`
 * (a model nothing can cut): an interrupted turn is owed what its model said in full too.
 */
export function checkAnswersDelivered(
  h: Harness,
  model: ReferenceModel,
  { cutExcused = true }: { cutExcused?: boolean } = {},
): void {
  const excused = excusedTurns(h, true, cutExcused);
  const joined = new Set(
    h.log.flatMap((e) => (e.kind === "interrupted" && e.joined === true ? [e.turnId] : [])),
  );
  const users = h.log.filter(
    (e): e is Extract<typeof e, { kind: "user" }> => e.kind === "user" && !joined.has(e.turnId),
  );
  // Inputs reach the model in the order they were typed (lines typed over before they reached
  // it go with the next, their turns `joined`: the input's last line is its turn's), so each
  // answer's turn is the next user turn with that line — or, where the line was sent naming
  // its turn, that turn (the same line typed twice, the first lost with a connection).
  let next = 0;
  for (const { input, gen, turnId } of model.answers) {
    const line = input.split("\n").at(-1);
    const at =
      turnId === undefined
        ? users.findIndex((e, i) => i >= next && e.text === line)
        : users.findIndex((e) => e.turnId === turnId && e.text === line);
    if (at === -1) throw new Error(`the model was sent "${input}", which no turn has`);
    next = at + 1;
    const user = users[at]!;
    if (!gen?.completed || excused.has(user.turnId)) continue;
    for (const text of gen.texts) {
      const delivered = h.log.some(
        (e) => saysWords(e) && e.turnId === user.turnId && e.text === text,
      );
      if (!delivered)
        throw new Error(`answer "${text}" to "${input}" never reached turn ${user.turnId}`);
    }
    // A delivered answer never ends its turn with an error: a plain answer (no calls, so
    // nothing more owed) is followed by no error for its turn, but a notice that it was slow.
    if (gen.callIds.length > 0) continue;
    const first = h.log.findIndex(
      (e) => saysWords(e) && e.turnId === user.turnId && e.text === gen.texts[0],
    );
    const after = h.log
      .slice(first)
      .find((e) => e.kind === "error" && e.turnId === user.turnId && e.code !== "model_slow");
    if (first !== -1 && after?.kind === "error")
      throw new Error(`turn ${user.turnId} was answered, then ended with ${after.code}`);
  }
}

/**
 * No answer to one line reaches another line's turn (a turn the model opened itself may carry
 * any: what it says of its own accord, or a reply that outlived its turn). Where replies are
 * marked with their request (turnless models), this is known, never guessed.
 */
export function checkNoAnswerMisplaced(h: Harness): void {
  const lineOf = new Map<string, string>();
  for (const e of h.log)
    if (e.kind === "user" && e.source !== "model") lineOf.set(e.turnId, e.text);
  for (const e of h.log) {
    if (!saysWords(e)) continue;
    const line = lineOf.get(e.turnId);
    const answered = /a\(([^)]*)\):/.exec(e.text)?.[1];
    if (line === undefined || answered === undefined) continue;
    if (answered.split("\n").at(-1) !== line)
      throw new Error(`answer "${e.text}" reached turn ${e.turnId}, the line "${line}"'s`);
  }
}

/** Invariants that hold once the session has settled. */
export function checkSettled(
  h: Harness,
  model: ReferenceModel,
  records: Records = "truthful",
): void {
  checkStep(h, model, records === "truthful");
  const ends = new Map<string, number>();
  for (const e of h.log)
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId, (ends.get(e.turnId) ?? 0) + 1);
  for (const e of h.log) {
    if (e.kind === "user" && ends.get(e.turnId) !== 1) {
      throw new Error(`turn ${e.turnId} ended ${ends.get(e.turnId) ?? 0} times`);
    }
  }
  const open = unansweredCalls(h.log);
  if (open.length > 0) throw new Error(`calls never answered or cancelled: ${open.join(", ")}`);
  // Every speak result of a turn that completed normally is spoken, after it, in that turn —
  // promised where the record is truthful: a regeneration nobody can tell from the follow-up
  // may take its place where it is not.
  if (records === "truthful") checkSpeakResultsSpoken(h);
  checkCapEnds(h);
  checkNothingLost(h);
}

function checkSpeakResultsSpoken(h: Harness): void {
  const completed = new Set(h.log.flatMap((e) => (e.kind === "turn_complete" ? [e.turnId] : [])));
  const gaveUp = excusedTurns(h);
  h.log.forEach((e, i) => {
    if (e.kind !== "tool_result" || ALL_TOOLS[e.name]?.followUp !== "speak") return;
    if (!completed.has(e.turnId) || gaveUp.has(e.turnId)) return;
    const spoken = h.log
      .slice(i + 1)
      .some((x) => saysWords(x) && x.turnId === e.turnId && x.text === `spoken:${e.callId}`);
    if (!spoken) throw new Error(`speak result ${e.callId} was never spoken in turn ${e.turnId}`);
  });
}

function checkNothingLost(h: Harness): void {
  // Nothing recorded is lost: the phone, resuming each time from what it had seen, has every
  // durable frame exactly once and in order; a fresh resume from 0 replays the whole log.
  const phone = h.durableFrames("phone").map((f) => f.seq);
  // A phone away when the session ended cannot resume it (an ended session's socket is refused:
  // its history is read instead, as the auditor's replay below): what it saw is the log's start.
  const away = h.state.ended && !(h.clients.get("phone")?.connected ?? false);
  const expected = h.log.map((e) => e.seq).slice(0, away ? phone.length : undefined);
  if (JSON.stringify(phone) !== JSON.stringify(expected))
    throw new Error(`phone saw seqs ${phone} of ${expected}`);
  h.connect("auditor", 0);
  const replay = h.durableFrames("auditor");
  if (JSON.stringify(replay) !== JSON.stringify(h.log.map(frameOf)))
    throw new Error("replay differs from the log");
}

/**
 * The session's end, when a cap or anything else ends it: once. One `session_limit` at most,
 * one `ended` status at most, and nothing recorded after the end.
 */
export function checkEndsOnce(h: Harness): void {
  const limits = h.log.filter((e) => e.kind === "session_limit").length;
  if (limits > 1) throw new Error(`${limits} session_limit events`);
  const end = h.log.findIndex((e) => e.kind === "status" && e.state === "ended");
  if (end === -1) return;
  const after = h.log.slice(end + 1);
  if (after.length > 0)
    throw new Error(`recorded after the session ended: ${after.map((e) => e.kind).join(", ")}`);
}

/**
 * Every durable frame the log holds was offered to the clients live, as its step wrote it,
 * in order: no seq written but never sent (a client that stays connected sees each once).
 */
export function checkOfferedLive(h: Harness): void {
  const offered = h.effects.flatMap((e) => (e.type === "send_durable" ? [e.frame.seq] : []));
  const logged = h.log.map((e) => e.seq);
  if (JSON.stringify(offered) !== JSON.stringify(logged))
    throw new Error(`offered live ${offered} but the log holds ${logged}`);
}

/** A cap that was reached ends the session: its goodbye (if anyone hears it), then the end. */
export function checkCapEnds(h: Harness): void {
  if (h.state.limit === null) return;
  const limit = h.log.some((e) => e.kind === "session_limit");
  const ended = h.log.some((e) => e.kind === "status" && e.state === "ended");
  if (!limit || !ended)
    throw new Error(`the ${h.state.limit.limit} cap was reached but the session did not end`);
}
