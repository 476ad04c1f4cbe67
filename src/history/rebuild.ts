import type { HistoryEvent } from "../vocabulary/log-events.js";
import {
  type ContextItem,
  cancelledOutcome,
  type RebuiltContext,
  type ToolCallRequest,
  type ToolResponse,
  toolResponse,
} from "../vocabulary/model.js";

export const SYNTHETIC_CANCELLED = "cancelled: the call was interrupted before it finished";

/** After a reply cut by a lost connection: what the user heard of it, at most. */
export const CUT_OFF_NOTE =
  "[cut off here: the connection was lost while this was being said; the user heard no more than this]";

/**
 * Turns the log into a provider-neutral context for a fresh model connection. Consecutive
 * pieces of the same kind are merged; a call with no outcome is closed with a synthetic
 * cancelled result right after its call batch; an outcome without its call is never
 * emitted. The output satisfies `validateContext`.
 *
 * `silent`: the tools whose results the model takes without a word (their policy's
 * `followUp: "silent"`). Their results stand right after their calls, whenever they came, and
 * a call made after words of its own turn goes, with its result, before them: after the
 * model's last words, a result reads as one it still owes an answer to, and a model asked to
 * go on would speak it (found by the attack of 2026-11-29).
 */
export function rebuildContext(
  events: readonly HistoryEvent[],
  silent: (toolName: string) => boolean = () => false,
): RebuiltContext {
  const items: ContextItem[] = [];
  const callNames = new Map<string, string>();
  const answered = new Set<string>();
  const silentOutcomes = new Map<string, ToolResponse>();
  // Outcomes that follow their call (one before it is never emitted: its call is closed as
  // cancelled, as an unanswered one).
  const called = new Set<string>();
  for (const e of events) {
    if (e.kind === "tool_call") called.add(e.callId);
    if (e.kind !== "tool_result" && e.kind !== "tool_cancelled") continue;
    if (!called.has(e.callId) || answered.has(e.callId)) continue;
    if (silent(e.name)) silentOutcomes.set(e.callId, outcomeOf(e));
    answered.add(e.callId);
  }
  const last = () => items[items.length - 1];
  /** The turn whose reply the last model message holds. */
  let wordsOf: string | null = null;

  for (const e of events) {
    switch (e.kind) {
      case "user":
        // A turn the model opened on its own has no input: its words stand alone.
        if (e.source !== "model") items.push({ role: "user", text: e.text });
        break;
      case "model_text":
      case "transcript": {
        // Pieces of one turn's reply are one message; a turn the model opened on its own
        // right after another's reply is a message of its own.
        const prev = last();
        if (prev?.role === "model" && wordsOf === e.turnId) prev.text += e.text;
        else items.push({ role: "model", text: e.text });
        wordsOf = e.turnId;
        break;
      }
      case "tool_call": {
        if (callNames.has(e.callId)) break;
        callNames.set(e.callId, e.name);
        const call: ToolCallRequest = { id: e.callId, name: e.name, args: e.args };
        const prev = last();
        const early = silentOutcomes.get(e.callId);
        if (early !== undefined && prev?.role === "model" && wordsOf === e.turnId) {
          // Called after words of its own turn: the call and its result go before them.
          const pair: ContextItem[] = [
            { role: "model_calls", calls: [call] },
            { role: "tool_results", results: [early] },
          ];
          items.splice(items.length - 1, 0, ...pair);
          break;
        }
        if (prev?.role === "model_calls") prev.calls.push(call);
        else items.push({ role: "model_calls", calls: [call] });
        if (early !== undefined) pushResult(items, early);
        else if (!answered.has(e.callId)) {
          pushResult(items, { callId: e.callId, name: e.name, error: SYNTHETIC_CANCELLED });
        }
        break;
      }
      case "tool_result":
      case "tool_cancelled": {
        // Only results whose call is already in the context, and only the first one.
        if (!callNames.has(e.callId) || hasResult(items, e.callId)) break;
        pushResult(items, outcomeOf(e));
        break;
      }
      case "handoff": {
        // The new agent hears that it took over, and why (its own instructions say who it is).
        const prev = last();
        const note = `[transferred from ${e.from} to ${e.to}: ${e.reason}]`;
        if (prev?.role === "model") prev.text += ` ${note}`;
        else items.push({ role: "model", text: note });
        break;
      }
      case "interrupted": {
        // A reply the lost connection (or a restart) cut mid-way: the model is told the user
        // heard no more than what the log holds of it, as a barge-in's `played` tells it live.
        const prev = last();
        if (e.reason === "upstream_lost" && prev?.role === "model" && wordsOf === e.turnId)
          prev.text += ` ${CUT_OFF_NOTE}`;
        break;
      }
      case "turn_complete":
      case "status":
      case "error":
      case "delegation":
      case "session_limit":
        break;
      default: {
        const unreachable: never = e;
        throw new Error(`unknown history event ${JSON.stringify(unreachable)}`);
      }
    }
  }
  return { items };
}

function outcomeOf(
  e: Extract<HistoryEvent, { kind: "tool_result" | "tool_cancelled" }>,
): ToolResponse {
  const outcome = e.kind === "tool_cancelled" ? cancelledOutcome(e.reason) : e;
  return toolResponse(e.callId, e.name, outcome);
}

function pushResult(items: ContextItem[], response: ToolResponse): void {
  const prev = items[items.length - 1];
  if (prev?.role === "tool_results") prev.results.push(response);
  else items.push({ role: "tool_results", results: [response] });
}

function hasResult(items: readonly ContextItem[], callId: string): boolean {
  return items.some((i) => i.role === "tool_results" && i.results.some((r) => r.callId === callId));
}

/** Pairing rules every rebuilt context must satisfy, for any provider. */
export function validateContext(ctx: RebuiltContext): string[] {
  const problems: string[] = [];
  const called = new Set<string>();
  const resulted = new Set<string>();
  for (const item of ctx.items) {
    if (item.role === "model_calls") {
      for (const c of item.calls) {
        if (called.has(c.id)) problems.push(`call ${c.id} appears twice`);
        called.add(c.id);
      }
    } else if (item.role === "tool_results") {
      for (const r of item.results) {
        if (!called.has(r.callId)) problems.push(`result for ${r.callId} without an earlier call`);
        if (resulted.has(r.callId)) problems.push(`second result for ${r.callId}`);
        resulted.add(r.callId);
      }
    }
  }
  for (const id of called) if (!resulted.has(id)) problems.push(`call ${id} has no result`);
  return problems;
}

/**
 * The context a new connection is seeded with, checked first: one that breaks the pairing
 * rules (it cannot, from a valid log — this guards the guarantee at runtime) is replaced by
 * its text alone, user and model turns without any call or result, which is always valid.
 * The problems are returned for the timeline; the session goes on.
 */
export function checkedContext(ctx: RebuiltContext): {
  context: RebuiltContext;
  problems: string[];
} {
  const problems = validateContext(ctx);
  if (problems.length === 0) return { context: ctx, problems };
  const items = ctx.items.filter(
    (i): i is Extract<ContextItem, { role: "user" | "model" }> =>
      i.role === "user" || i.role === "model",
  );
  return { context: { items }, problems };
}
