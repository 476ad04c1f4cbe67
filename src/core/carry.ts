/** A turn across a lost model connection: ended, said so, or carried to the next one. */

import { announceInstruction } from "./arrival.js";
import { sendInput } from "./follow-up.js";
import { normalizedReply, rememberReply } from "./regeneration.js";
import { carrySentAudio, forgetSentAudio, mayCarrySentAudio } from "./sent-audio.js";
import type { CoreState, TurnState } from "./session-state.js";
import type { StepContext } from "./step-context.js";
import { endTurn } from "./turn-state.js";
import { replyIsEmpty } from "./turns.js";

/**
 * The model connection dropped under an open turn: it cannot be finished, say so — unless
 * (`carry`, a connection lost while a new one is opened at once) all the turn still waits
 * for is the model speaking results it already has: those are in the log, so the next
 * connection has them too (resumed, or seeded from the log), and is asked once to go on.
 */
export function closeTurnOnUpstreamLoss(ctx: StepContext, carry = false): void {
  const s = ctx.state;
  // What it said counts as a reply: a resumed model may say it again.
  if (s.generation)
    s.recentReplies = rememberReply(s.recentReplies, normalizedReply(s.generation.text));
  s.generation = null;
  // The line of answers owed goes with the connection, and with it the still-working ask that
  // named its next slot (else the next connection's first answer is taken for that line).
  s.expected = [];
  s.stillWorkingAsked = null;
  if (s.followUpWindow)
    ctx.emit({ type: "clear_timer", timer: `grace:${s.followUpWindow.turnId}` });
  s.followUpWindow = null;
  // Queued and held input belonged to the turn that is now interrupted: the user is told.
  s.held = [];
  ctx.takeOutbox();
  if (s.speechDetected && carry && mayCarrySentAudio(s)) {
    // The model heard speech it had not answered, and all of it is kept: it goes again to
    // the next connection, which transcribes it anew and answers it.
    s.inputTranscript = "";
    ctx.trace("SPEECH_CARRIED");
  } else if (s.speechDetected) {
    // That audio went with the connection, or only its tail is kept. Never silently: the
    // user is asked to say it again.
    s.speechDetected = false;
    s.inputTranscript = "";
    forgetSentAudio(ctx);
    ctx.recordError(
      "speech_lost",
      "the model connection was lost before it answered what was said; please say it again",
    );
  }
  if (s.turn && carry && canCarry(ctx, s.turn)) {
    s.turn.carried = "pending";
    s.turn.modelEnded = true;
    ctx.trace("TURN_CARRIED", { turnId: s.turn.id });
  } else if (s.turn) endTurn(ctx, { interrupted: "upstream_lost" });
  // Audio the model never showed it heard goes to the next connection, if one opens now.
  if (carry) carrySentAudio(ctx);
  else forgetSentAudio(ctx);
  // Calls still running (a finished turn's client chips, say) are unknown to the next
  // connection, whose rebuilt context closes them as cancelled: so they are, here too, and a
  // result that comes later is refused rather than sent as a second answer.
  ctx.cancelRunningCalls(null, "upstream_lost");
}

/**
 * Results delivered and nothing said since (a follow-up owed, or an empty reply to retry),
 * and not carried before (a second loss ends it). Calls still running are cancelled with the
 * connection (the next one's context says so); a result held for its batch is not carried
 * (cancelling its siblings would send it into the dead connection).
 */
function canCarry(ctx: StepContext, turn: TurnState): boolean {
  const s = ctx.state;
  if (!s.config.guards.carryTurns || !s.config.guards.oneTurnComplete) return false;
  // Owed: the results it was sent (nothing said since), or an answer to its input at all.
  if (turn.carried !== undefined || !(replyIsEmpty(s, turn) || !turn.hasContent)) return false;
  return !Object.values(s.calls).some((c) => c.turnId === turn.id && c.held !== undefined);
}

/** What the model is asked when a restart lost the words of what the user had just said. */
export const ASK_AGAIN =
  "The connection dropped while the user was speaking and their words were lost. Ask them, in one short sentence, to say it again.";

/** The new connection is live: the carried turn asks it, once, to speak what it owes. */
export function resumeCarriedTurn(ctx: StepContext): void {
  const s = ctx.state;
  const turn = s.turn;
  if (turn?.carried !== "pending") return;
  if (s.speechDetected) {
    // The user spoke while the connection was replaced (their audio went out just now): the
    // model answers that, not a nudge. The carried turn ends, cut short by it.
    endTurn(ctx, { interrupted: "barge_in" });
    return;
  }
  turn.carried = "asked";
  turn.modelEnded = false;
  if (turn.announce !== undefined) {
    // Handed to an agent that announces itself: it is asked for its one line, in this turn.
    ctx.trace("HANDOFF_ANNOUNCE", { turnId: turn.id, agent: turn.announce.to });
    sendInput(ctx, { type: "nudge", text: announceInstruction(turn.announce) }, turn.id);
    return;
  }
  if (turn.askAgain === true) {
    // Speech lost with a restarted object (its `speech_lost` said so): asked for again, once.
    ctx.trace("RESUME_TURN", { turnId: turn.id, askAgain: true });
    sendInput(ctx, { type: "nudge", text: ASK_AGAIN }, turn.id);
    return;
  }
  // Said durably, as a nudge after a stall is: what comes may repeat what was cut.
  ctx.recordError(
    "turn_resumed",
    "the model connection was replaced while this turn waited; the new one was asked to go on",
    turn.id,
  );
  ctx.trace("RESUME_TURN", { turnId: turn.id });
  sendInput(ctx, { type: "nudge", text: s.config.nudgeText }, turn.id);
}

/**
 * Speech the model heard that no turn answers yet, as the shell keeps it across a restart of
 * the session's object (its words so far; null: none). Read after every step: it changes only
 * in steps (a transcription passing the audio gate is one the open turn's answer already
 * has). A restart carries it over (restore.ts `planRestart`).
 */
export function unansweredSpeech(s: CoreState): string | null {
  if (!s.config.guards.carryTurns || s.turn !== null || !s.speechDetected || s.ended) return null;
  return s.inputTranscript;
}
