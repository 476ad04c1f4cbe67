/**
 * The Responses backend of a `responses` delegation, as the Live wire carries it: each event
 * of a Responses stream wrapped in `response.event {delegation_id, event}` (SDK:
 * ResponseEvent; the nested events follow the Responses streaming API: `response.created`,
 * output items, `response.completed`). Lifecycle snapshots omit input and clear
 * instructions, tools and output, as the SDK's ResponseEvent says. A response the
 * `failResponses` knob names ends `response.failed`: its calls are dropped (livekit/agents PR
 * #7266: the service discards them and refuses their outputs).
 */
import { argsFor } from "../script.js";
import { later } from "./speech.js";
import type { Call, Ctx, Json } from "./state.js";

/** One backend response: its id, its delegation (null: asked for by the client) and its events. */
export interface BackendResponse {
  id: string;
  delegationId: string | null;
  /** The backend's text (a message item), if any. */
  text: string;
  /** Function calls it makes (the response then waits for their outputs). */
  calls: Call[];
  /** The user's line the calls' arguments are shaped from. */
  userText: string;
}

/** How a streamed response ended. */
export interface Streamed {
  /** It ended `response.failed`: its calls were dropped, and nothing of it is said. */
  failed: boolean;
}

/**
 * Queue `response`'s whole stream at wall time `at` (`twice`: all of it delivered again, as
 * the `duplicateDelegation` knob does), then a look at the chain once it went out.
 */
export function streamResponse(
  ctx: Ctx,
  response: BackendResponse,
  at: number,
  twice = false,
): Streamed {
  const s = ctx.s;
  s.responses++;
  const failed = s.knobs.failResponses.includes(s.responses);
  let sequence = 0;
  const stream: Json[] = [];
  const emit = (event: Json) => {
    const message = {
      type: "response.event",
      delegation_id: response.delegationId,
      event: { ...event, sequence_number: sequence++ },
    };
    stream.push(message);
    later(ctx, at, message);
  };
  const model =
    s.config?.delegation?.type === "responses" ? s.config.delegation.responses.model : "";
  const snapshot = (status: string, usage: Json | null): Json => ({
    id: response.id,
    object: "response",
    created_at: Math.floor(ctx.now / 1000),
    status,
    model,
    instructions: null,
    tools: [],
    output: [],
    usage,
  });
  emit({ type: "response.created", response: snapshot("in_progress", null) });
  let index = 0;
  if (response.text !== "") message(emit, ctx.id("msg"), index++, response.text);
  for (const call of response.calls) {
    const itemId = ctx.id("fc");
    const args = JSON.stringify(
      argsFor(
        { name: call.name, parametersJsonSchema: s.toolParameters[call.name] },
        response.userText,
      ),
    );
    const item = (status: string, argumentsSoFar: string): Json => ({
      id: itemId,
      type: "function_call",
      status,
      call_id: call.callId,
      name: call.name,
      arguments: argumentsSoFar,
    });
    const where = { output_index: index++ };
    emit({ type: "response.output_item.added", ...where, item: item("in_progress", "") });
    emit({
      type: "response.function_call_arguments.delta",
      ...where,
      item_id: itemId,
      delta: args,
    });
    emit({
      type: "response.function_call_arguments.done",
      ...where,
      item_id: itemId,
      arguments: args,
    });
    const done = { type: "response.output_item.done", ...where, item: item("completed", args) };
    emit(done);
    // duplicateDelivery: the same call's event once more (a new Live event, the same call).
    if (s.knobs.duplicateDelivery > 0 && ctx.draw() < s.knobs.duplicateDelivery) {
      later(ctx, at, {
        type: "response.event",
        delegation_id: response.delegationId,
        event: { ...done, sequence_number: sequence - 1 },
      });
    }
  }
  const output = response.text.split(/\s+/).filter(Boolean).length + 8 * response.calls.length;
  const input = 40 + 8 * s.tasks.length;
  const usage = { input_tokens: input, output_tokens: output, total_tokens: input + output };
  if (failed) {
    for (const call of response.calls) call.dropped = true;
    const error = { code: "server_error", message: "The response failed (liveline simulator)." };
    emit({ type: "response.failed", response: { ...snapshot("failed", usage), error } });
  } else {
    emit({ type: "response.completed", response: snapshot("completed", usage) });
  }
  if (twice) for (const message of stream) later(ctx, at, message);
  s.queue.push({ at, kind: "chain_check" });
  return { failed };
}

/** A message item with one output_text part, streamed in one delta. */
function message(emit: (event: Json) => void, itemId: string, index: number, text: string): void {
  const where = { item_id: itemId, output_index: index, content_index: 0 };
  const item = (status: string, content: Json[]): Json => ({
    id: itemId,
    type: "message",
    status,
    role: "assistant",
    content,
  });
  const part = (t: string): Json => ({ type: "output_text", text: t, annotations: [] });
  emit({ type: "response.output_item.added", output_index: index, item: item("in_progress", []) });
  emit({ type: "response.content_part.added", ...where, part: part("") });
  emit({ type: "response.output_text.delta", ...where, delta: text, logprobs: [] });
  emit({ type: "response.output_text.done", ...where, text, logprobs: [] });
  emit({ type: "response.content_part.done", ...where, part: part(text) });
  emit({
    type: "response.output_item.done",
    output_index: index,
    item: item("completed", [part(text)]),
  });
}
