/**
 * What the GPT-Live model says, and the backend work it hands off (script.ts decides the
 * words and the calls, as on the other faces). The backend is one response chain for the
 * whole session (livekit/agents PR #7266; habemus-papadum/pdum_aiui's probe of 2026-10-10):
 * - an utterance is answered by the voice model; where the script calls declared tools it says
 *   the first half of its reply, then delegates (`session.delegation.created`), and the
 *   backend's function calls arrive in `response.event`s; the task waits for their outputs;
 * - an utterance heard while the chain is busy (a call without its output, outputs not yet
 *   continued, a response still streaming) is held: the voice says nothing and delegates
 *   nothing until the chain is idle, then answers it (held ones together, as one);
 * - `response.create` is refused (`function_call_outputs_required`, naming the missing call
 *   ids) while any call of the session has no output; a typed line's item waits meanwhile;
 * - otherwise it starts one response, after any still streaming: it says the results of every
 *   task it continues (not a side effect's, not a cancelled call's), then answers the typed
 *   line, if one waits (`delegation_id: null` for a line alone: the client asked, not the
 *   voice model; assumed); a superseded task's results are never spoken.
 */
import {
  asksToGoOn,
  asksToIntroduce,
  asksToSayGoodbye,
  asksToSayStillWorking,
  goodbye,
  introduction,
  isSideEffect,
  nextAnswerTag,
  plannedCalls,
  replyFor,
  replyWithCalls,
  resultSpeech,
  stillWorking,
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
  // A cap's goodbye, a tool still working: one line of its own, no call (assumed, script.ts;
  // found by the attack: this face read the goodbye's instruction back as a question).
  if (asksToSayGoodbye(text)) return { before: goodbye(nextTag(s)), after: "", calls: [] };
  if (asksToSayStillWorking(text))
    return { before: stillWorking(nextTag(s)), after: "", calls: [] };
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

/** Calls of the session still without an output (a failed response's are dropped, not open). */
export function openCalls(s: LiveSimState): Call[] {
  return s.tasks.flatMap((t) => t.calls).filter((c) => c.summary === null && c.dropped !== true);
}

/** A backend response is still streaming (some of its events are still to go out). */
function streaming(s: LiveSimState): boolean {
  return s.queue.some((due) => due.kind === "send" && due.message.type === "response.event");
}

/**
 * The one chain is busy: a task is not continued yet (a call waits for its output, or its
 * outputs wait for `response.create`), or a backend response is still streaming.
 */
export function chainBusy(s: LiveSimState): boolean {
  return s.tasks.some((t) => !t.continued) || streaming(s);
}

/** Wall time a new backend response starts: after its latency, and after any still streaming. */
function nextResponseAt(ctx: Ctx): number {
  let at = ctx.after(ctx.s.knobs.latencyMs);
  for (const due of ctx.s.queue)
    if (due.kind === "send" && due.message.type === "response.event") at = Math.max(at, due.at);
  return at;
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

/**
 * An utterance that ended at timeline `end`: the voice model answers, delegating its calls.
 * While the chain is busy it is held, unanswered, until the chain is idle (onChainCheck).
 */
export function answerUtterance(ctx: Ctx, text: string, end: number): void {
  const s = ctx.s;
  if (chainBusy(s) || s.held.length > 0) {
    // `holdAck`: the first held line is acknowledged, in a few words of the voice's own.
    if (s.knobs.holdAck && s.held.length === 0)
      speak(ctx, tagged("I'm still looking that up.", nextTag(s)), end + s.knobs.latencyMs, false);
    s.held.push({ text, end });
    return;
  }
  supersede(ctx);
  const { before, after, calls } = plan(ctx, text);
  const said = speak(ctx, before, end + s.knobs.latencyMs);
  if (calls.length === 0) return;
  const delegationId = ctx.id("dlg");
  const responseId = ctx.id("resp");
  // Delegated where its words end on the timeline; the backend's events after its latency.
  const at = Math.max(ctx.now, ctx.after(said.end - ctx.timeline()));
  const announce = {
    type: "session.delegation.created",
    offset_ms: said.end,
    delegation: {
      id: delegationId,
      type: "delegation",
      target: "responses",
      response_id: responseId,
    },
  };
  later(ctx, at, announce);
  const twice = s.knobs.duplicateDelegation;
  if (twice) later(ctx, at, announce);
  const owed = openTask(ctx, delegationId, calls, after);
  // `replayToolsOnly`: a run that only called tools is delivered again, first.
  const replayed = s.unconsumed;
  s.unconsumed = [];
  const { failed } = streamResponse(
    ctx,
    { id: responseId, delegationId, text: "", calls: [...replayed, ...owed], userText: text },
    at + s.knobs.latencyMs * s.knobs.timeScale,
    twice,
  );
  if (failed) s.tasks.at(-1)!.continued = true;
}

/**
 * A backend response's last event went out: if the chain is idle now, the utterances held
 * meanwhile are answered, together, as one (habemus-papadum/pdum_aiui: the held question's
 * delegation came 0.2 to 0.4 s after the earlier task's continuation completed).
 */
export function onChainCheck(ctx: Ctx): void {
  const s = ctx.s;
  if (s.held.length === 0 || chainBusy(s)) return;
  const held = s.held;
  s.held = [];
  const text = held.map((h) => h.text).join(" ");
  answerUtterance(ctx, text, Math.max(ctx.timeline(), held.at(-1)!.end));
}

/**
 * `response.create`: refused while any call of the session has no output (the one chain);
 * else one response: the results of every task it continues, then the answer to the typed
 * lines waiting since the last reply, if any (not an instruction to go on); with neither, the
 * backend answers the conversation as it is (assumed).
 */
export function onResponseCreate(ctx: Ctx): void {
  const s = ctx.s;
  const missing = openCalls(s);
  if (missing.length > 0) {
    // The line's item stays queued for the next run (habemus-papadum/pdum_aiui, run 3).
    const ids = missing.map((c) => c.callId).join(", ");
    ctx.error(
      "function_call_outputs_required",
      `Submit the pending function call outputs before response.create. Missing outputs for call_id: ${ids}.`,
    );
    return;
  }
  const ready = s.tasks.filter((t) => !t.continued);
  // With `supersede`, speech held meanwhile moved the user on: the backend still finishes the
  // task, and the voice does not say it (habemus-papadum/pdum_aiui, run 2: a redirect).
  if (s.knobs.supersede && s.held.length > 0) for (const task of ready) task.superseded = true;
  // An instruction to go on is not a line to answer: the backend says what it owes, or answers
  // the line before it that nothing answered (a seeded conversation's last question), as the
  // OpenAI face's model does (assumed).
  const lines = s.pendingUser.filter((line) => !asksToGoOn(line));
  // Nothing new to answer and nothing owed: the seed's last line, if no reply followed it.
  if (lines.length === 0 && s.tasks.every((t) => t.continued) && s.unansweredSeed !== null)
    lines.push(s.unansweredSeed);
  s.unansweredSeed = null;
  const line = lines.length > 0 ? lines.join(" ") : undefined;
  s.pendingUser = [];
  if (line !== undefined) {
    answerLine(ctx, line, ready);
    return;
  }
  if (ready.length > 0) {
    continueTasks(ctx, ready);
    return;
  }
  backendSays(ctx, null, tagged("Anything else?", nextTag(s)));
}

/** What the backend says of the tasks it continues: their spoken results, in order. */
function resultsOf(ctx: Ctx, tasks: readonly Task[]): string[] {
  const said: string[] = [];
  for (const task of tasks) {
    task.continued = true;
    if (task.superseded) continue;
    for (const c of task.calls) {
      // A side effect's output is not spoken of (assumed: the backend goes on with its reply,
      // as the other faces' models do after a side effect); nor a cancelled call's (assumed:
      // the guides ask for a "cancelled" output for declined calls, which says nothing to tell).
      if (isSideEffect(c.name, ctx.s.knobs) || c.cancelled === true || c.dropped === true) continue;
      said.push(resultSpeech(c.name, c.summary ?? "", nextTag(ctx.s)));
    }
  }
  return said;
}

/**
 * A typed line, answered by the backend after the results of the tasks it continues (the
 * continuation read the queued line too: habemus-papadum/pdum_aiui, run 3): its text
 * (spoken) or its calls (then it waits).
 */
function answerLine(ctx: Ctx, text: string, ready: readonly Task[]): void {
  supersede(ctx);
  const results = resultsOf(ctx, ready);
  const { before, after, calls } = plan(ctx, text);
  const said = [...results, before].join(" ");
  const continuing = ready[0]?.delegationId ?? null;
  if (calls.length === 0) {
    backendSays(ctx, continuing, said);
    return;
  }
  const at = nextResponseAt(ctx);
  const responseId = ctx.id("resp");
  const delegationId = announced(ctx, continuing, at, responseId);
  const owed = openTask(ctx, delegationId, calls, after);
  const { failed } = streamResponse(
    ctx,
    { id: responseId, delegationId, text: said, calls: owed, userText: text },
    at,
    repliesTwice(ctx),
  );
  if (failed) ctx.s.tasks.at(-1)!.continued = true;
  else speak(ctx, said, ctx.timeline() + ctx.s.knobs.latencyMs);
}

/**
 * The tasks' outputs handed to the backend: one response saying their results and the rest of
 * each reply (a superseded task's are never spoken; a reply cut by a cancelled call has no rest).
 */
function continueTasks(ctx: Ctx, tasks: readonly Task[]): void {
  const results = resultsOf(ctx, tasks);
  const rest = tasks
    .filter((t) => !t.superseded && !t.calls.some((c) => c.cancelled === true))
    .flatMap((t) => (t.owed === null ? [] : [t.owed]));
  const said = [...results, ...rest].join(" ").trim();
  // `replayToolsOnly`: a run whose calls it said nothing of is not marked done.
  if (results.length === 0 && ctx.s.knobs.replayToolsOnly)
    ctx.s.unconsumed.push(...tasks.flatMap((t) => t.calls));
  backendSays(ctx, tasks[0]!.delegationId, said);
}

/**
 * The delegation a response liveline asked for comes under: the one it continues (null: none),
 * or, with `announceReplies`, one of its own, announced first (twice, with
 * `duplicateDelegation`: its response is then delivered twice too, `repliesTwice`).
 */
function announced(ctx: Ctx, continuing: string | null, at: number, responseId: string) {
  if (!ctx.s.knobs.announceReplies) return continuing;
  const id = ctx.id("dlg");
  const announce = {
    type: "session.delegation.created",
    offset_ms: ctx.timeline(),
    delegation: { id, type: "delegation", target: "responses", response_id: responseId },
  };
  later(ctx, at, announce);
  if (ctx.s.knobs.duplicateDelegation) later(ctx, at, announce);
  return id;
}

/** An announced reply is delivered twice with `duplicateDelegation`, as the voice's own are. */
const repliesTwice = (ctx: Ctx) => ctx.s.knobs.announceReplies && ctx.s.knobs.duplicateDelegation;

/** A backend response with `text` (after any still streaming); the model says it. */
function backendSays(ctx: Ctx, continuing: string | null, text: string): void {
  const at = nextResponseAt(ctx);
  const id = ctx.id("resp");
  const delegationId = announced(ctx, continuing, at, id);
  const reply = { id, delegationId, text, calls: [], userText: "" };
  const { failed } = streamResponse(ctx, reply, at, repliesTwice(ctx));
  if (!failed) speak(ctx, text, ctx.timeline() + ctx.s.knobs.latencyMs);
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
  const busy =
    speechQueued || taskWaiting || userSpeaking || s.pendingUser.length > 0 || s.held.length > 0;
  if (s.speechEnd !== after || busy) return;
  speak(ctx, tagged("Are you still there?", nextTag(s)), ctx.timeline(), false);
}
