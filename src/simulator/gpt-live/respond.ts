/**
 * What the GPT-Live model says, and the backend work it hands off (script.ts decides the
 * words and the calls, as on the other faces):
 * - an utterance is answered by the voice model; where the script calls declared tools it says
 *   the first half of its reply, then delegates (`session.delegation.created`), and the
 *   backend's function calls arrive in `response.event`s; the task waits for their outputs;
 * - a typed line (`response.item.create` + `response.create`) goes to the backend, which
 *   answers it (`delegation_id: null`: the client asked, not the voice model; assumed) with
 *   text or calls; the model speaks the text;
 * - `response.create` after every output of a task continues it: the backend's text, then the
 *   model speaks the results and the rest of its reply (a superseded task's are never spoken).
 */
import {
  asksToIntroduce,
  introduction,
  isSideEffect,
  nextAnswerTag,
  plannedCalls,
  replyFor,
  replyWithCalls,
  resultSpeech,
  tagged,
  toolInfos,
} from "../script.js";
import { streamResponse } from "./backend.js";
import { later, speak } from "./speech.js";
import type { Call, Ctx, LiveSimState, Task } from "./state.js";

const nextTag = (s: LiveSimState): string => nextAnswerTag(s.knobs, s);
const toolsOf = (s: LiveSimState) => toolInfos(s.tools, s.toolDescriptions);

/** The reply to a user's line: what is said before its calls, what after, and the calls. */
function plan(ctx: Ctx, text: string): { before: string; after: string; calls: string[] } {
  const s = ctx.s;
  if (asksToIntroduce(text)) return { before: introduction(nextTag(s)), after: "", calls: [] };
  s.userTurns++;
  const calls = plannedCalls(s.userTurns, text, s.tools, s.knobs.calls, s.knobs, toolsOf(s));
  const reply = replyWithCalls(
    replyFor(
      s.userTurns,
      text,
      s.lastReply,
      ctx.draw(),
      nextTag(s),
      [],
      s.knobs.repeatAnswers,
      toolsOf(s),
    ),
    s.userTurns,
    calls,
    s.knobs,
  );
  if (calls.length > 0) return { before: reply.before, after: reply.after, calls };
  const whole = reply.after === "" ? reply.before : `${reply.before} ${reply.after}`;
  return { before: whole, after: "", calls: [] };
}

/** New user input: with `supersede`, every task still waiting is given up (the model moved on). */
function supersede(ctx: Ctx): void {
  if (!ctx.s.knobs.supersede) return;
  for (const task of ctx.s.tasks) if (!task.continued) task.superseded = true;
}

function openTask(ctx: Ctx, delegationId: string | null, names: string[], owed: string): Call[] {
  // The service's call ids are unique across sessions (a handoff or a restart starts a new
  // one): the session's id keeps this face's counters from repeating one.
  const session = ctx.s.sessionId.replace(/^sess_/, "");
  const calls = names.map((name) => ({
    callId: `${ctx.id("call")}_${session}`,
    name,
    summary: null,
  }));
  const task: Task = {
    delegationId,
    calls,
    owed: owed === "" ? null : owed,
    superseded: false,
    continued: false,
  };
  ctx.s.tasks.push(task);
  return calls;
}

/** An utterance that ended at timeline `end`: the voice model answers, delegating its calls. */
export function answerUtterance(ctx: Ctx, text: string, end: number): void {
  const s = ctx.s;
  supersede(ctx);
  const { before, after, calls } = plan(ctx, text);
  const said = speak(ctx, before, end + s.knobs.latencyMs);
  if (calls.length === 0) return;
  const delegationId = ctx.id("dlg");
  const responseId = ctx.id("resp");
  // Delegated where its words end on the timeline; the backend's events after its latency.
  const at = Math.max(ctx.now, ctx.after(said.end - ctx.timeline()));
  later(ctx, at, {
    type: "session.delegation.created",
    offset_ms: said.end,
    delegation: {
      id: delegationId,
      type: "delegation",
      target: "responses",
      response_id: responseId,
    },
  });
  const owed = openTask(ctx, delegationId, calls, after);
  streamResponse(
    ctx,
    { id: responseId, delegationId, text: "", calls: owed, userText: text },
    at + s.knobs.latencyMs * s.knobs.timeScale,
  );
}

/**
 * `response.create`: answers the latest typed line; else continues every task whose calls all
 * have outputs; else, with a task still missing outputs, the Responses refusal; else
 * (nothing new) the backend answers the conversation as it is (assumed).
 */
export function onResponseCreate(ctx: Ctx): void {
  const s = ctx.s;
  const ready = s.tasks.filter((t) => !t.continued && t.calls.every((c) => c.summary !== null));
  const line = s.pendingUser.at(-1);
  s.pendingUser = [];
  if (line !== undefined) {
    // The newest input is the user's line: the response answers it, with the outputs
    // appended before (a silent result's) as its context, not spoken of (assumed).
    for (const task of ready) task.continued = true;
    answerLine(ctx, line);
    return;
  }
  if (ready.length > 0) {
    for (const task of ready) continueTask(ctx, task);
    return;
  }
  const missing = s.tasks
    .find((t) => !t.continued && !t.superseded)
    ?.calls.find((c) => c.summary === null);
  if (missing !== undefined) {
    ctx.error(
      "missing_tool_output",
      `No tool output found for function call ${missing.callId}.`,
      "item.call_id",
    );
    return;
  }
  backendSays(ctx, null, tagged("Anything else?", nextTag(s)), true);
}

/** A typed line, answered by the backend: its text (spoken) or its calls (then it waits). */
function answerLine(ctx: Ctx, text: string): void {
  supersede(ctx);
  const { before, after, calls } = plan(ctx, text);
  if (calls.length === 0) {
    backendSays(ctx, null, before, true);
    return;
  }
  const responseId = ctx.id("resp");
  const owed = openTask(ctx, null, calls, after);
  streamResponse(
    ctx,
    { id: responseId, delegationId: null, text: before, calls: owed, userText: text },
    ctx.after(ctx.s.knobs.latencyMs),
  );
  speak(ctx, before, ctx.timeline() + ctx.s.knobs.latencyMs);
}

/**
 * A task's outputs handed to the backend: its text, spoken unless the task was superseded.
 * A side effect's output (chips shown, a preference saved) is not spoken of (assumed: the
 * backend goes on with its reply, as the other faces' models do after a side effect).
 */
function continueTask(ctx: Ctx, task: Task): void {
  task.continued = true;
  const spoken = task.calls.filter((c) => !isSideEffect(c.name, ctx.s.knobs));
  const speech = spoken.map((c) => resultSpeech(c.name, c.summary ?? "", nextTag(ctx.s)));
  const text = [...speech, task.owed ?? ""].join(" ").trim();
  backendSays(ctx, task.delegationId, text, !task.superseded);
}

/** A backend response with `text` (after the latency), then the model says it if `spoken`. */
function backendSays(ctx: Ctx, delegationId: string | null, text: string, spoken: boolean): void {
  const latency = ctx.s.knobs.latencyMs;
  streamResponse(
    ctx,
    { id: ctx.id("resp"), delegationId, text, calls: [], userText: "" },
    ctx.after(latency),
  );
  if (spoken) speak(ctx, text, ctx.timeline() + latency);
}

/**
 * Quiet since a reply ended at timeline `after` (`unpromptedAfterMs`): nothing said since,
 * nothing to be said, no task waiting for outputs, no line waiting for a response, the user
 * not speaking. The model checks on the user, once, on its own.
 */
export function speakUnprompted(ctx: Ctx, after: number): void {
  const s = ctx.s;
  const speechQueued = s.queue.some((due) => due.kind === "send" && due.speech);
  const taskWaiting = s.tasks.some((t) => !t.continued && !t.superseded);
  const userSpeaking = s.utteranceHeardMs > 0;
  const busy = speechQueued || taskWaiting || userSpeaking || s.pendingUser.length > 0;
  if (s.speechEnd !== after || busy) return;
  speak(ctx, tagged("Are you still there?", nextTag(s)), ctx.timeline(), false);
}
