/**
 * The held-line policy: a typed line is taken at once, or held while an answer it would be
 * taken for is still to come (speech the model has not begun to answer, or a turnless model's
 * answer under way); held lines go, in order and as one input, once that answer has its turn,
 * or once their wait (the `speech` timer) is up. Moved as it was from session-core.ts, which
 * calls in here for a typed line, after every step while lines are held, and on the timer.
 */

import { owesSlot, sendInput, setLineWait, withdrawQueuedText } from "./follow-up.js";
import { handoffBeforeInput } from "./handoff.js";
import { setIdle } from "./idle.js";
import type { CoreInput } from "./inputs.js";
import { inputKey } from "./regeneration.js";
import { type CoreState, callsRunning, repliesMarked } from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { supersedeStaleClientCalls } from "./tools.js";
import { endTurn, openTurn } from "./turn-state.js";
import { onModelTurnComplete } from "./turns.js";
import { ensureUpstream, noteUpstreamHealth } from "./upstream.js";
import { utteranceMayHaveEnded } from "./watchdog.js";

/** A line the user typed (`client_text`): taken now, or held (see above). */
export function onClientText(
  ctx: StepContext,
  input: Extract<CoreInput, { type: "client_text" }>,
): void {
  const s = ctx.state;
  // A line sent again (a client that lost its socket before it saw the line's `user`
  // frame) is taken once: it is in the log, or it is the line held now.
  if (
    input.textId !== undefined &&
    (input.recorded === true || s.heldLines.some((l) => l.textId === input.textId))
  ) {
    ctx.trace("TEXT_DUPLICATE", { clientId: input.clientId, textId: input.textId });
    return;
  }
  if (s.limit !== null) {
    ctx.sendError(
      input.clientId,
      "session_limit",
      "this session has reached its limit and is closing",
      false,
    );
    return;
  }
  setIdle(ctx);
  if (speechAwaitsAnswer(ctx) || answerUnderWay(ctx)) {
    // The model's next generation answers the speech, or (a turnless model) the open turn's
    // answer is still to come: were the line sent now, that answer would take the line's
    // place. The line waits (behind any held before it) until that answer opens the voice
    // turn, or the open turn is over.
    s.heldLines = [...s.heldLines, { text: input.text, textId: input.textId }];
    // The wait counts from when the speech reaches the model (onSetupComplete, if it
    // still waits in the outbox for the connection).
    if (s.heldLines.length === 1) setLineWait(ctx);
    ctx.trace("LINE_HELD");
    return;
  }
  releaseLines(ctx);
  takeLine(ctx, { text: input.text, textId: input.textId });
  return;
}

/** After a step, while lines are held: they go if nothing they wait for is still to come. */
export function releaseDueLines(ctx: StepContext): void {
  if (linesMayGo(ctx)) releaseLines(ctx);
}

/**
 * Held lines have waited their bound: they go, unless the open turn's answer is still under
 * way; then, if its words are still being said, they are looked at again where those end.
 */
export function onSpeechTimer(ctx: StepContext): void {
  // A voice that has not begun the reply's words within the wait is not waited on further.
  const gen = ctx.state.generation;
  if (gen?.wordsOwed === true) gen.wordsOwed = undefined;
  if (!turnAnswerUnderWay(ctx)) {
    releaseLines(ctx);
    return;
  }
  const endsAt = ctx.state.speechClock.endsAt;
  if (endsAt > ctx.now) ctx.emit({ type: "set_timer", timer: "speech", at: endsAt });
}

/**
 * A turnless model's utterance is over (quiet, or a line typed after it): as its own turn end
 * would be, and the connection served a turn (a drop after it is no sign of a bad connection).
 */
export function endUtterance(ctx: StepContext): void {
  onModelTurnComplete(ctx);
  noteUpstreamHealth(ctx, true);
}

/**
 * A text turn: it interrupts the open one. `typed`: the user's input now, which opens a
 * connection given up on; a held line is input from before (queued, as in the outbox), so
 * with no connection to take it its turn ends, said so. `before`: lines typed before it that
 * never reached the model (held, or taken back from the outbox): they go with it, in order.
 */
function takeLine(
  ctx: StepContext,
  line: { text: string; textId: string | undefined },
  typed = true,
  before: string[] = [],
): void {
  const s = ctx.state;
  const unsent = [...before];
  // A turnless model's utterance the line comes after is over, not cut (nothing of it can
  // be cut on such a wire): it ends as the model's own end would.
  if (s.turn !== null && utteranceMayHaveEnded(s, s.turn)) endUtterance(ctx);
  if (s.turn) {
    const withdrawn = withdrawQueuedText(ctx, s.turn);
    if (withdrawn !== undefined) unsent.unshift(withdrawn);
    endTurn(ctx, { interrupted: "barge_in", ...(unsent.length > 0 ? { joined: true } : {}) });
  }
  // A transfer answered in the turn just cut short: the new agent takes this line.
  handoffBeforeInput(ctx);
  if (clientCallRunning(s)) supersedeStaleClientCalls(ctx);
  const turn = openTurn(ctx, "text", line.text, line.textId);
  if (!typed && s.upstream.phase === "failed") {
    endTurn(ctx, { interrupted: "upstream_lost" });
    return;
  }
  ensureUpstream(ctx, true);
  const text = [...unsent, line.text].join("\n");
  if (unsent.length > 0) {
    // The model is asked all of them: that is the input the turn's answer answers.
    turn.inputKey = inputKey({ kind: "said", text });
    ctx.trace("LINES_JOINED", { turnId: turn.id, lines: unsent.length + 1 });
  }
  sendInput(ctx, { type: "user_text", text }, turn.id);
}

/**
 * A client streams audio it has not ended (`audio_end`: "the user stopped speaking"), its
 * latest chunk of speech just now: the user is still speaking, and the model will answer that
 * speech. A phone line's silence is not such a chunk: it streams for the whole call, and a
 * keypad entry would wait out its bound every time (found by the attack: 3.9 s after #).
 */
const SPEAKING_GAP_MS = 1_000;

/** Speech the model will answer: spoken (audio_end, a transcription, VAD), or still under way. */
function speechPending(ctx: StepContext): boolean {
  const s = ctx.state;
  return (
    s.speechDetected ||
    (s.audioSinceEnd &&
      ctx.now -
        (s.config.guards.quietLineIsNoSpeech ? s.lastClientSpeechAt : s.lastClientAudioAt) <=
        SPEAKING_GAP_MS)
  );
}

/**
 * The user spoke (audio_end or a transcription), or is speaking, and the model has not begun
 * to answer: on the live connection, or in the outbox of one being opened (a line queued
 * behind that speech would have its answer taken for the line's).
 */
function speechAwaitsAnswer(ctx: StepContext): boolean {
  const s = ctx.state;
  const phase = s.upstream.phase;
  const heard =
    phase === "live" ||
    ((phase === "connecting" || phase === "reconnecting") &&
      (s.sentAudio === "carried" ||
        s.outbox.some((c) => c.type === "user_audio" || c.type === "audio_end")));
  return (
    s.config.guards.suppressUnsolicited &&
    s.turn === null &&
    speechPending(ctx) &&
    s.generation === null &&
    heard
  );
}

/**
 * Held lines go once the speech they waited for has its turn (or is no longer pending), and
 * no answer they would be taken for is still to come.
 */
function linesMayGo(ctx: StepContext): boolean {
  if (answerUnderWay(ctx)) return false;
  return ctx.state.turn !== null || !speechPending(ctx);
}

/**
 * On a model without turns, an answer a line would be taken for is still to come: the open
 * turn's (below), or a reply liveline asked for that is still on the wire after its turn
 * ended (one that timed out): its words come first, in a turn of their own.
 */
function answerUnderWay(ctx: StepContext): boolean {
  const s = ctx.state;
  if (s.turn === null) return s.replyOpen && holdsLines(s);
  return turnAnswerUnderWay(ctx);
}

/** Lines wait for a turnless model's answers (the guard; off in the naive relay). */
function holdsLines(s: CoreState): boolean {
  return repliesMarked(s) && s.config.guards.answersKeepTheirTurn;
}

/**
 * A model without turns owes the open turn its answer, or is saying it: nothing of that answer
 * can be cut, and what came of it after a line went would be taken for the line's answer (the
 * turn it answers ended as cut). A line waits for that turn to be over. A turn that only
 * waits on its calls, with nothing owed, is cut as on any model: the user moved on, and the
 * backend says nothing more of it unless asked.
 */
function turnAnswerUnderWay(ctx: StepContext): boolean {
  const s = ctx.state;
  const turn = s.turn;
  // A turn whose input still waits for the connection has no answer under way: a line
  // takes its input back and goes with it (takeLine).
  if (turn === null || !holdsLines(s) || s.upstream.phase !== "live") return false;
  // Its input waits for a follow-up window to close (follow-up.ts): its answer is to come.
  if (owesSlot(s, turn) || s.held.some((input) => input.owner === turn.id)) return true;
  const gen = s.generation;
  if (gen === null || gen.owner !== turn.id || gen.interrupted) return false;
  // Its words are still to be said or being said, or its reply is still on the wire: calls
  // running or not, nothing of that can be cut (what came after the line would land in the
  // line's turn).
  if (gen.wordsOwed === true || ctx.now < s.speechClock.endsAt || s.replyOpen) return true;
  return !callsRunning(s, turn.id);
}

/**
 * The held lines go, in order, each cutting the turn before it; their words reach the model
 * together, with the last (one input: the model answers what the user's screen shows, and
 * nothing the user typed is lost on the way).
 */
function releaseLines(ctx: StepContext): void {
  const s = ctx.state;
  const lines = s.heldLines;
  const last = lines.at(-1);
  if (last === undefined) return;
  s.heldLines = [];
  ctx.emit({ type: "clear_timer", timer: "speech" });
  if (s.ended) return;
  const before: string[] = [];
  for (const line of lines.slice(0, -1)) {
    if (s.turn) {
      const withdrawn = withdrawQueuedText(ctx, s.turn);
      if (withdrawn !== undefined) before.push(withdrawn);
      const joined = withdrawn !== undefined || before.length > 0;
      endTurn(ctx, { interrupted: "barge_in", ...(joined ? { joined: true } : {}) });
    }
    openTurn(ctx, "text", line.text, line.textId);
    before.push(line.text);
  }
  takeLine(ctx, last, false, before);
}

/**
 * A client's call is running (a stale one may be superseded by new input). Read here, so that
 * a line's path enters tools.ts only when there is one (the text path's file ratchet).
 */
export function clientCallRunning(s: CoreState): boolean {
  for (const call of Object.values(s.calls))
    if (call.status === "running" && call.runOn === "client") return true;
  return false;
}
