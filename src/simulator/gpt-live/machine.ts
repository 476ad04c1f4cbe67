/**
 * The GPT-Live stand-in, a pure machine: `liveStep(state, input, now)` → `{state, effects,
 * wakeAt}`, the clock injected, randomness from the seeded PRNG in the state. It speaks the
 * wire of OpenAI's GPT-Live (`/v1/live/sessions`) as the SDK's types and the brief state it
 * (README, "GPT-Live face"):
 * - `session.start` first, once; every other event before it is refused (the session waits);
 * - invalid events (unknown fields anywhere, unknown types) get an `error` event and are
 *   ignored; the session goes on;
 * - no turns, no cancel, no truncate: the model speaks on one timeline, delegates its tool
 *   work to the backend (respond.ts), and waits for outputs and a `response.create`;
 * - a sideband (`/attach`) feeds `sideband_frame`s: the same commands but `session.start` and
 *   input audio; it sees the session's events, with reflected audio (speech.ts).
 */
import { takeDue } from "../due-queue.js";
import { parseToolOutput, summarise } from "../script.js";
import { onAudio } from "./hear.js";
import { onChainCheck, onResponseCreate, speakUnprompted } from "./respond.js";
import { closeSession, startSession, updateSession } from "./session.js";
import { speak } from "./speech.js";
import { Ctx, type LiveSimEffect, type LiveSimInput, type LiveSimState } from "./state.js";
import { invalidEventMessage, LiveClientEvent } from "./strict-schemas.js";

export {
  createGptLiveSimulator,
  type LiveSimEffect,
  type LiveSimInput,
  type LiveSimState,
} from "./state.js";

export function liveStep(
  state: LiveSimState,
  input: LiveSimInput,
  now: number,
): { state: LiveSimState; effects: LiveSimEffect[]; wakeAt: number | null } {
  const from = input.type === "sideband_frame" ? "sideband" : "primary";
  const ctx = new Ctx(structuredClone(state), now, from);
  const s = ctx.s;
  if (!s.closed) {
    switch (input.type) {
      case "open":
        if (s.knobs.dropAfterMs > 0) s.queue.push({ at: now + s.knobs.dropAfterMs, kind: "drop" });
        break;
      case "frame":
      case "sideband_frame":
        onFrame(ctx, input.text);
        break;
      case "media_start":
        // The creation started it (its data channel takes no session.start).
        if (s.config === null) startSession(ctx, { type: "session.start", session: input.session });
        break;
      case "tick":
        break;
    }
    drain(ctx);
  }
  const wakeAt = s.closed || s.queue.length === 0 ? null : Math.min(...s.queue.map((q) => q.at));
  return { state: s, effects: ctx.effects, wakeAt };
}

/** Everything due by now, earliest first (ties in the order queued). */
function drain(ctx: Ctx): void {
  const s = ctx.s;
  ctx.clientEventId = undefined;
  while (!s.closed) {
    const due = takeDue(s.queue, ctx.now);
    if (due === undefined) return;
    switch (due.kind) {
      case "send":
        ctx.send(due.message, due.to);
        break;
      case "usage":
        s.usageSeconds = Math.max(s.usageSeconds, Math.round(ctx.timeline()) / 1000);
        ctx.send({ type: "session.usage.updated", usage: { seconds: s.usageSeconds } });
        break;
      case "unprompted":
        speakUnprompted(ctx, due.after);
        break;
      case "expire":
        closeSession(ctx, "expired");
        break;
      case "drop":
        // The connection is lost without a goodbye (no `session.closed`).
        s.closed = true;
        ctx.effects.push({ type: "close", code: 1011, reason: "internal error" });
        break;
      case "chain_check":
        onChainCheck(ctx);
        break;
    }
  }
}

function onFrame(ctx: Ctx, text: string): void {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    ctx.error("invalid_json", "The event is not valid JSON.");
    return;
  }
  const id = (json as { event_id?: unknown } | null)?.event_id;
  ctx.clientEventId = typeof id === "string" ? id : undefined;
  const parsed = LiveClientEvent.safeParse(json);
  if (!parsed.success) {
    const { code, message, param } = invalidEventMessage(parsed.error, json);
    ctx.error(code, message, param);
    return;
  }
  const event = parsed.data;
  const s = ctx.s;
  if (
    ctx.origin === "sideband" &&
    (event.type === "session.start" || event.type === "session.input_audio.append")
  ) {
    // A sideband belongs to a running session and carries no audio (SDK ConnectClientEvent).
    ctx.error("invalid_event", `'${event.type}' is not accepted on a sideband connection.`, "type");
    return;
  }
  if (s.config === null && event.type !== "session.start") {
    ctx.error(
      "session_not_started",
      "Send session.start and wait for session.started first.",
      "type",
    );
    return;
  }
  switch (event.type) {
    case "session.start":
      if (s.config !== null)
        ctx.error("session_already_started", "The session has already started.", "type");
      else startSession(ctx, event);
      return;
    case "session.update":
      updateSession(ctx, event);
      return;
    case "session.input_audio.append":
      onAudio(ctx, event.audio);
      return;
    case "session.input_audio.mute":
    case "session.input_audio.unmute":
      s.muted = event.type === "session.input_audio.mute";
      ctx.reply({ type: s.muted ? "session.input_audio.muted" : "session.input_audio.unmuted" });
      return;
    case "session.instructions.append":
    case "session.thinking.append":
    case "session.commentary.append":
      onAppend(ctx, event.type, event.content, event.delegation_id);
      return;
    case "response.item.create":
      if (requireResponses(ctx)) onItem(ctx, event.item);
      return;
    case "response.create":
      if (requireResponses(ctx)) onResponseCreate(ctx);
      return;
    case "session.close":
      closeSession(ctx, "close_requested");
      return;
    case "session.output_audio.fixture.play":
    case "decision.create":
    case "decision.item.create":
    case "decision.item.delete":
      ctx.error("not_simulated", `'${event.type}' is not simulated (liveline simulator).`, "type");
      return;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
    }
  }
}

/** `response.*` events need Responses delegation (SDK: "Requires Responses delegation"). */
function requireResponses(ctx: Ctx): boolean {
  if (ctx.s.config?.delegation?.type === "responses") return true;
  ctx.error("responses_delegation_required", "This event requires Responses delegation.", "type");
  return false;
}

type Append =
  | "session.instructions.append"
  | "session.thinking.append"
  | "session.commentary.append";

/**
 * Context mid-session, acknowledged where the timeline takes it (at once here). A non-null
 * `delegation_id` is refused with Responses delegation (SDK); the simulator never delegates to
 * the client, so any id is unknown there. Commentary is spoken (assumed: verbatim).
 */
function onAppend(ctx: Ctx, type: Append, content: string, delegationId: string | null): void {
  if (delegationId !== null) {
    const responses = ctx.s.config?.delegation?.type === "responses";
    const why = responses
      ? "is not accepted with Responses delegation"
      : "names no delegation of this session";
    ctx.error("invalid_value", `'delegation_id' ${why}.`, "delegation_id");
    return;
  }
  const t = ctx.timeline();
  ctx.reply({ type: type.replace(/append$/, "appended"), start_ms: t, end_ms: t });
  if (type === "session.commentary.append") speak(ctx, content, t + ctx.s.knobs.latencyMs);
}

type Item = Extract<LiveClientEvent, { type: "response.item.create" }>["item"];

/** An input item for the backend: a line is kept for the next `response.create`; no ack. */
function onItem(ctx: Ctx, item: Item): void {
  const s = ctx.s;
  switch (item.type) {
    case "message":
      if (item.role === "user") s.pendingUser.push(text(item.content));
      else if (item.role === "assistant") {
        // A reply after them (a seeded conversation's history): those lines were answered.
        s.pendingUser = [];
        s.lastReply = [text(item.content)];
      }
      return;
    case "function_call_output": {
      const call = s.tasks.flatMap((t) => t.calls).find((c) => c.callId === item.call_id);
      // A failed response's calls were dropped: their outputs are refused (livekit/agents
      // PR #7266; the code assumed, as for a call the session never made).
      if (call === undefined || call.dropped === true) {
        ctx.error(
          "invalid_value",
          `No function call found for call_id '${item.call_id ?? ""}'.`,
          "item.call_id",
        );
        return;
      }
      // A second output for an answered call is taken and ignored (assumed).
      if (call.summary !== null) return;
      const output = parseToolOutput(text(item.output));
      call.summary = summarise(output);
      // A declined call's output says so (the guides: return a cancelled output for it).
      call.cancelled = output.status === "cancelled";
      return;
    }
  }
}

/** The text of a message's content or an output: a string, or its parts' texts joined. */
function text(content: string | readonly ({ text: string } | { type: "input_image" })[]): string {
  return typeof content === "string"
    ? content
    : content.map((p) => ("text" in p ? p.text : "")).join("");
}
