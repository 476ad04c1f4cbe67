import type { ToolOutcome } from "../vocabulary/log-events.js";
import {
  cancelledOutcome,
  type ToolCallRequest,
  type ToolResponse,
  toolResponse,
} from "../vocabulary/model.js";
import { archivedCall } from "./call-archive.js";
import { expectGeneration, markAsked, noteResultsSentInGeneration } from "./follow-up.js";
import { currentGeneration, takeContent } from "./generations.js";
import { noteHandoff } from "./handoff.js";
import { callRefusedByLimit } from "./limits.js";
import { inputKey } from "./regeneration.js";
import {
  type CallState,
  type CoreState,
  capabilitiesOf,
  policyOf,
  RESTORED_BATCH,
  turnOfModelWork,
} from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { settleTurn } from "./turns.js";

/** How long after a silent result a regeneration of the previous reply is watched for. */
const REGEN_WINDOW_MS = 15_000;

export function onModelToolCall(
  ctx: StepContext,
  calls: readonly ToolCallRequest[],
  dropped?: string,
): void {
  const s = ctx.state;
  const fresh = calls.filter((request) => {
    const known =
      s.calls[request.id] !== undefined || archivedCall(s.archive, request.id) !== undefined;
    if (!known || !s.config.guards.dedupeCalls) return true;
    // The same call delivered again (as a modelTurn part and as toolCall): run it once.
    s.counters.duplicateCalls++;
    ctx.trace("DUPLICATE_CALL", { callId: request.id, name: request.name });
    return false;
  });
  // A delivery of calls already known starts no generation (one after its turn ended would
  // be taken for the next turn's answer).
  if (fresh.length === 0) return;
  const owner = takeContent(ctx, currentGeneration(ctx));
  if (owner === null) {
    // Calls inside a suppressed generation are not run: nobody asked for that generation.
    for (const request of fresh)
      ctx.trace("SUPPRESSED", { callId: request.id, name: request.name });
    // A wire whose model takes nothing more while a call of it has no output (GPT-Live's one
    // response chain) is told they were not run, as context that prompts nothing.
    if (capabilitiesOf(s).answersCancelledCalls && s.upstream.phase === "live") {
      const responses = fresh.map((r) => ({
        ...toolResponse(r.id, r.name, cancelledOutcome("not_asked")),
        scheduling: "silent" as const,
      }));
      ctx.sendModel({ type: "tool_responses", responses });
    }
    return;
  }
  const batch = `b${++s.batchCount}`;
  // Every call of the delivery joins its batch before any is answered: one answered at once
  // (refused past a cap, an unknown tool) must not flush the batch before its siblings are in
  // it (each result alone would ask the model for a follow-up of its own).
  if (dropped !== undefined) {
    for (const request of fresh) dropCall(ctx, request, owner, batch, dropped);
    return;
  }
  const answered = fresh.flatMap((request) => {
    const call = startCall(ctx, request, owner, batch);
    return call === null ? [] : [call];
  });
  for (const { call, error } of answered) completeCall(ctx, call, { error });
}

/**
 * A call the service dropped before it could run (GPT-Live: its response failed): in the
 * record, and closed there with the reason at once; never run, and no output goes back (the
 * service refuses one).
 */
function dropCall(
  ctx: StepContext,
  request: ToolCallRequest,
  turnId: string,
  batch: string,
  reason: string,
): void {
  const s = ctx.state;
  const runOn = policyOf(s, request.name)?.runOn ?? "server";
  s.toolCallCount++;
  s.calls[request.id] = {
    id: request.id,
    name: request.name,
    turnId,
    runOn,
    followUp: "silent",
    status: "cancelled",
    delivery: "withheld",
    batch,
  };
  ctx.record({
    kind: "tool_call",
    turnId,
    callId: request.id,
    name: request.name,
    args: request.args,
    runOn,
  });
  ctx.record({ kind: "tool_cancelled", turnId, callId: request.id, name: request.name, reason });
  ctx.trace("TOOL_CANCELLED", { callId: request.id, reason });
}

/** Delegation ids recorded lately: a delivery of one again (any connection) records nothing. */
const KEPT_DELEGATIONS = 256;

/**
 * The model handed work to its backend (GPT-Live): recorded once per id, before any call of
 * it runs, in the turn it works for (turnOfModelWork). The
 * naive relay (no call dedupe) records every announcement, as it runs every delivery.
 */
export function onDelegation(ctx: StepContext, id: string, target: string): void {
  const s = ctx.state;
  s.lastWorkAt = ctx.now;
  if (s.config.guards.dedupeCalls && s.delegations.includes(id)) {
    ctx.trace("DUPLICATE_DELEGATION", { delegationId: id });
    return;
  }
  s.delegations = [...s.delegations, id].slice(-KEPT_DELEGATIONS);
  const turnId = turnOfModelWork(s);
  ctx.record({ kind: "delegation", delegationId: id, target, ...(turnId ? { turnId } : {}) });
}

/** Records and starts a call; one liveline answers itself at once is returned with its error. */
function startCall(
  ctx: StepContext,
  request: ToolCallRequest,
  turnId: string,
  batch: string,
): { call: CallState; error: string } | null {
  const s = ctx.state;
  const policy = policyOf(s, request.name);
  s.toolCallCount++;
  // A call past a cap never runs: liveline answers it itself (no client is asked to run it),
  // and in the goodbye its refusal is not read out.
  const refused = callRefusedByLimit(ctx, turnId);
  const call: CallState = {
    id: request.id,
    name: request.name,
    turnId,
    runOn: refused === null ? (policy?.runOn ?? "server") : "server",
    followUp:
      refused !== null && s.limit?.phase === "goodbye" ? "silent" : (policy?.followUp ?? "speak"),
    status: "running",
    delivery: "pending",
    batch,
  };
  s.calls[request.id] = call;
  ctx.record({
    kind: "tool_call",
    turnId,
    callId: call.id,
    name: call.name,
    args: request.args,
    runOn: call.runOn,
  });
  ctx.trace("TOOL_CALL", { turnId, callId: call.id, name: call.name, runOn: call.runOn });
  if (refused !== null) {
    ctx.trace("LIMIT_REFUSED_CALL", { callId: call.id, name: call.name });
    return { call, error: refused };
  }
  if (!policy) return { call, error: `unknown tool "${request.name}"` };
  ctx.emit({ type: "set_timer", timer: `tool:${call.id}`, at: ctx.now + policy.timeoutMs });
  if (call.runOn === "server") {
    ctx.emit({ type: "run_tool", callId: call.id, name: call.name, args: request.args });
  }
  return null;
}

export function onClientToolResult(
  ctx: StepContext,
  clientId: string,
  callId: string,
  outcome: ToolOutcome,
): void {
  const s = ctx.state;
  const call = s.calls[callId];
  const archived = call === undefined ? archivedCall(s.archive, callId) : undefined;
  if (archived?.runOn === "client") {
    // Settled long ago: refused as any second result is.
    refuseSecondResult(ctx, clientId, callId, archived.status);
    return;
  }
  if (call?.runOn !== "client") {
    s.counters.unknownCallResults++;
    ctx.trace("UNKNOWN_CALL", { callId, clientId });
    ctx.sendError(clientId, "unknown_call", `no client tool call with id "${callId}"`);
    return;
  }
  if (call.status !== "running" && s.config.guards.dedupeResults) {
    refuseSecondResult(ctx, clientId, callId, call.status);
    return;
  }
  completeCall(ctx, call, outcome);
}

function refuseSecondResult(
  ctx: StepContext,
  clientId: string,
  callId: string,
  status: "answered" | "cancelled",
): void {
  if (status === "cancelled") {
    // Not a second result: the call was cancelled (tool_cancelled said so) and takes none.
    ctx.trace("RESULT_AFTER_CANCEL", { callId, clientId });
    ctx.sendError(clientId, "call_cancelled", `call "${callId}" was cancelled; it takes no result`);
    return;
  }
  ctx.state.counters.duplicateResults++;
  ctx.trace("DUPLICATE_RESULT", { callId, clientId });
  ctx.sendError(
    clientId,
    "duplicate_result",
    `call "${callId}" already has a result; the first one stands`,
  );
}

export function onServerToolOutcome(ctx: StepContext, callId: string, outcome: ToolOutcome): void {
  const call = ctx.state.calls[callId];
  // A server tool finishing after a timeout or cancellation: its outcome is already settled.
  if (!call || (call.status !== "running" && ctx.state.config.guards.dedupeResults)) return;
  completeCall(ctx, call, outcome);
}

export function onToolTimeout(ctx: StepContext, callId: string): void {
  const call = ctx.state.calls[callId];
  if (call?.status !== "running") return;
  if (call.runOn === "server") ctx.emit({ type: "abort_tool", callId, reason: "timeout" });
  completeCall(ctx, call, { error: `tool "${call.name}" timed out` });
}

/** The call's one result: recorded, announced, and delivered to the model per policy. */
function completeCall(ctx: StepContext, call: CallState, outcome: ToolOutcome): void {
  call.status = "answered";
  const transfer = noteHandoff(ctx, call, outcome);
  ctx.emit({ type: "clear_timer", timer: `tool:${call.id}` });
  const response = toolResponse(call.id, call.name, outcome);
  ctx.record({ kind: "tool_result", turnId: call.turnId, ...response, callId: call.id });
  ctx.trace("TOOL_RESPONSE", {
    callId: call.id,
    name: call.name,
    error: outcome.error !== undefined,
    followUp: call.followUp,
  });
  // Held with its batch first, then the transfer's other calls cancelled: cancelling flushes
  // the batch, which would otherwise send the rest without this result, as a second input
  // that the handoff then left unanswered (found by a soak: a speak result never spoken).
  deliverResult(ctx, call, response);
  if (transfer) cancelForTransfer(ctx, call);
  settleTurn(ctx);
}

/**
 * The model asked to hand the session over: the other calls of that turn still running are
 * cancelled now (reason handoff), so that a call the turn would wait for (an unanswered
 * client call whose result is spoken) does not hold the handoff up to its timeout. Tools
 * that finish first (`onHandoff: "finish"`) go on; the handoff waits for them.
 */
function cancelForTransfer(ctx: StepContext, transfer: CallState): void {
  for (const call of Object.values(ctx.state.calls)) {
    if (call.status !== "running" || call.turnId !== transfer.turnId) continue;
    if (policyOf(ctx.state, call.name)?.onHandoff === "finish") continue;
    cancelCall(ctx, call, "handoff");
  }
}

/**
 * Send a result to the model so that it causes exactly what its tool's follow-up asks for.
 * - speak: declared BLOCKING. The results of one batch of calls go back together, as one
 *   input: inside the generation that called them the model takes them in and goes on;
 *   after that generation ended they prompt exactly one follow-up generation, which
 *   belongs to the same user turn (the turn waits for it).
 * - silent: must never prompt a generation. Where calls can be NON_BLOCKING the model is
 *   not waiting for it: it is sent with SILENT where that is honoured, else withheld. On
 *   blocking-only models the model waits for it inside its generation, so it goes back with
 *   the rest of its batch, as one input (one message can provoke at most one reaction);
 *   after the generation ended, a batch of side effects alone is withheld (the model would
 *   answer it again).
 */
function deliverResult(ctx: StepContext, call: CallState, response: ToolResponse): void {
  const s = ctx.state;
  const { guards } = s.config;
  if (call.batch === RESTORED_BATCH) {
    // Carried over a restart: the next connection is opened once it has its outcome, and its
    // context holds it (restart.ts); the carried turn then asks for what is owed.
    call.delivery = "withheld";
    return;
  }
  const caps = capabilitiesOf(s);
  if (!guards.resultScheduling) {
    // Naive relay: every result goes out the moment it is ready, as the frameworks do.
    call.delivery = "in_generation";
    ctx.sendModel({ type: "tool_responses", responses: [response], turnId: call.turnId });
    return;
  }
  if (call.followUp === "speak" || !caps.nonBlockingCalls) {
    call.held = response;
    flushBatch(ctx, call.batch);
    return;
  }
  if (caps.resultScheduling && caps.silentHonoured) {
    const turn = s.turn?.id === call.turnId ? s.turn : null;
    const inGeneration = turn !== null && s.generation?.owner === call.turnId;
    call.delivery = inGeneration ? "in_generation" : "late_silent";
    // A turnless model's backend stops at its calls and goes on only when asked: while the
    // call's turn is open, the result lets it go on with the rest of its reply, as a model
    // with non-blocking calls goes on by itself (the turn waits for nothing more: what it
    // says next is delivered, in this turn while it speaks, else in a turn of its own).
    // After the turn, it is context only; the next request goes on from it.
    const scheduling = caps.turnless === true && turn !== null ? "when_idle" : "silent";
    ctx.sendModel({
      type: "tool_responses",
      responses: [{ ...response, scheduling }],
      turnId: call.turnId,
    });
    // The last output its response waited for, asking it to go on: the rest of the reply is
    // on its way (the turn's utterance is not over however quiet the voice is meanwhile).
    if (scheduling === "when_idle" && batchAnswered(s, call.batch)) s.replyAsked = true;
    if (inGeneration) noteResultsSentInGeneration(ctx, "quiet");
    // A model that ignores SILENT answers it by saying its previous reply again.
    if (ctx.now > s.regenUntil) s.regenerations = { sent: 0, owed: 0 };
    if (!inGeneration) s.regenerations.sent++;
    s.regenUntil = ctx.now + REGEN_WINDOW_MS;
    return;
  }
  // The model would take this response as new input and answer it again: keep it out.
  withhold(ctx, call);
}

/** Every call of the batch (one response's, as the adapter hands them on) has its output. */
function batchAnswered(s: CoreState, batch: string): boolean {
  return Object.values(s.calls).every(
    (c) => c.batch !== batch || (c.status !== "running" && c.held === undefined),
  );
}

function withhold(ctx: StepContext, call: CallState): void {
  const s = ctx.state;
  const response = call.held;
  call.delivery = "withheld";
  call.held = undefined;
  s.counters.withheldResults++;
  ctx.trace("TOOL_RESULT_WITHHELD", { callId: call.id, name: call.name });
  // A wire whose model takes nothing more while a call of it has no output (GPT-Live's one
  // response chain) gets it all the same, as context that prompts nothing.
  if (
    response !== undefined &&
    capabilitiesOf(s).answersCancelledCalls &&
    s.upstream.phase === "live"
  )
    ctx.sendModel({
      type: "tool_responses",
      responses: [{ ...response, scheduling: "silent" }],
      turnId: call.turnId,
    });
}

/** The calls whose results go back together: a batch's speak calls (all of it if blocking-only). */
function batchMembers(ctx: StepContext, batch: string): CallState[] {
  const everyCall = !capabilitiesOf(ctx.state).nonBlockingCalls;
  return Object.values(ctx.state.calls).filter(
    (c) => c.batch === batch && (everyCall || c.followUp === "speak"),
  );
}

/** Once no member of the batch is running, send its held results as one input. */
function flushBatch(ctx: StepContext, batch: string): void {
  const s = ctx.state;
  const members = batchMembers(ctx, batch);
  if (members.some((c) => c.status === "running")) return;
  const ready = members.filter((c) => c.held !== undefined);
  if (ready.length === 0) return;
  const turnId = ready[0]!.turnId;
  const turn = s.turn?.id === turnId ? s.turn : null;
  // A generation saying the call is still working did not take its results: they are late.
  const inGeneration =
    turn !== null &&
    s.generation !== null &&
    s.generation.owner === turnId &&
    (s.generation.stillWorking !== true || !s.config.guards.stillWorkingTakesNoResults);
  const speak = ready.some((c) => c.followUp === "speak");
  if (turn === null || (!speak && !inGeneration)) {
    // The turn was interrupted (the model dropped these calls, nobody waits to hear them),
    // or side effects only, after the generation ended (the model would answer them again).
    for (const c of ready) withhold(ctx, c);
    return;
  }
  const responses: ToolResponse[] = [];
  for (const c of ready) {
    responses.push(c.held!);
    c.held = undefined;
    c.delivery = inGeneration ? "in_generation" : "late";
  }
  ctx.sendModel({ type: "tool_responses", responses, turnId });
  turn.inputKey = inputKey({ kind: "results", results: responses });
  // Sent into the running generation: what it says after them answers them too.
  if (inGeneration && s.generation) s.generation.resultsUnanswered = turn.inputKey;
  turn.resultsSinceContent++;
  if (speak) turn.speakSinceContent = true;
  // A model without turns answers results in the reply they ask for (`reply_ready`), never
  // in the words it goes on saying meanwhile: the turn waits for that reply.
  const answeredInReply =
    capabilitiesOf(s).turnless === true && s.config.guards.resultsAwaitTheirReply;
  if (!inGeneration || answeredInReply) {
    expectGeneration(ctx, turn.id);
    return;
  }
  // The generation waited for these (a speak batch, or any call on a blocking-only model):
  // the model's wait for its continuation starts now, not at the call (a call that ran to
  // its timeout would otherwise be followed at once by a false model_timeout).
  markAsked(ctx, turn);
  // If the model had in fact just ended its turn, it takes this as new input (a model that
  // withholds turn_complete until answered cannot have ended it).
  noteResultsSentInGeneration(ctx, speak ? "speak" : "silent");
  if (!speak && !capabilitiesOf(s).turnCompleteWaitsForResults)
    s.regenUntil = ctx.now + REGEN_WINDOW_MS;
}

/**
 * Abort and record a cancellation. The model is told only where its wire needs an output for
 * every call (`answersCancelledCalls`), on the connection that made the call: a silent
 * "cancelled" error, context that prompts nothing.
 */
export function cancelCall(ctx: StepContext, call: CallState, reason: string): void {
  call.status = "cancelled";
  ctx.emit({ type: "clear_timer", timer: `tool:${call.id}` });
  if (call.runOn === "server") ctx.emit({ type: "abort_tool", callId: call.id, reason });
  if (ctx.state.upstream.phase === "live" && capabilitiesOf(ctx.state).answersCancelledCalls) {
    const cancelled = toolResponse(call.id, call.name, cancelledOutcome(reason));
    const responses = [{ ...cancelled, scheduling: "silent" as const }];
    ctx.sendModel({ type: "tool_responses", responses, turnId: call.turnId });
  }
  ctx.record({
    kind: "tool_cancelled",
    turnId: call.turnId,
    callId: call.id,
    name: call.name,
    reason,
  });
  ctx.trace("TOOL_CANCELLED", { callId: call.id, reason });
  if (ctx.state.config.guards.resultScheduling) flushBatch(ctx, call.batch);
}

/**
 * New input (a line, speech) on a wire whose model takes nothing more while a call has no
 * output (GPT-Live's one response chain): a client's call of a turn that is over (the
 * greeting's chips, say) would hold the input until the client answers or it times out. The
 * user moved on: it is cancelled (`superseded`), its output sent first. A server's goes on: it
 * settles by itself, within its timeout, and the input waits for it.
 */
export function supersedeStaleClientCalls(ctx: StepContext): void {
  const s = ctx.state;
  // A protection: the naive relay leaves calls alone, as the field's relays do.
  if (!s.config.guards.resultScheduling || !s.config.guards.staleClientCallsSuperseded) return;
  if (capabilitiesOf(s).answersCancelledCalls !== true) return;
  for (const call of Object.values(s.calls)) {
    if (call.status === "running" && call.runOn === "client" && call.turnId !== s.turn?.id)
      cancelCall(ctx, call, "superseded");
  }
}

/** The StepContext's `cancelRunningCalls`: every running call of the turn (null: of all). */
export function cancelRunningCalls(ctx: StepContext, turnId: string | null, reason: string): void {
  for (const call of Object.values(ctx.state.calls)) {
    if (call.status === "running" && (turnId === null || call.turnId === turnId)) {
      cancelCall(ctx, call, reason);
    }
  }
}

export function onModelCancellation(ctx: StepContext, ids: readonly string[]): void {
  for (const id of ids) {
    const call = ctx.state.calls[id];
    if (call?.status === "running") cancelCall(ctx, call, "model_cancelled");
  }
  settleTurn(ctx);
}
