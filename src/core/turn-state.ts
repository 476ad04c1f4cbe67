/** A user turn opens with its `user` event and ends once, with its one turn end. */
import type { InterruptReason } from "../vocabulary/log-events.js";
import { repliesMarked, type TurnState } from "./session-state.js";
import type { StepContext } from "./step-context.js";

export function openTurn(
  ctx: StepContext,
  source: "text" | "audio" | "model" | "limit",
  text: string,
  textId?: string,
): TurnState {
  const s = ctx.state;
  s.turnCount++;
  if (source === "limit") s.limitTurns++;
  const turn: TurnState = {
    id: `t${s.turnCount}`,
    userSeq: s.nextSeq,
    source,
    modelEnded: false,
    hasContent: false,
    resultsSinceContent: 0,
    speakSinceContent: false,
    emptyRetries: 0,
    nudges: 0,
    askedAt: ctx.now,
    contentSinceAsk: false,
    optionalSlots: 0,
    said: text,
    inputKey: undefined,
    awaitingFollowUp: false,
    slowWaits: 0,
    waitedAt: 0,
  };
  s.turn = turn;
  s.lastTurnId = turn.id;
  s.speechDetected = false;
  // A voice turn answers the audio before it: only audio after it is speech still to answer
  // (a client that never sends audio_end left a typed line held for the line wait).
  if (source === "audio") s.audioSinceEnd = false;
  s.inputTranscript = "";
  ctx.record(
    textId === undefined
      ? { kind: "user", turnId: turn.id, text, source }
      : { kind: "user", turnId: turn.id, text, source, textId },
  );
  ctx.trace("USER", { turnId: turn.id, source });
  return turn;
}

/** End the open turn with its one turn end; what the model still owes it is dropped. */
export function endTurn(
  ctx: StepContext,
  how: "complete" | { interrupted: InterruptReason; joined?: true },
): void {
  const s = ctx.state;
  const turn = s.turn;
  if (!turn) return;
  s.turn = null;
  if (s.watchdogSet) {
    s.watchdogSet = false;
    ctx.emit({ type: "clear_timer", timer: "watchdog" });
  }
  s.expected = repliesMarked(s)
    ? s.expected.filter((owner) => owner !== turn.id)
    : s.expected.map((owner) => (owner === turn.id ? null : owner));
  if (s.generation?.owner === turn.id && s.config.guards.suppressUnsolicited)
    s.generation.owner = null;
  if (how === "complete") {
    ctx.record({ kind: "turn_complete", turnId: turn.id });
    ctx.trace("TURN_COMPLETE", { turnId: turn.id });
  } else {
    ctx.record(
      how.joined === true
        ? { kind: "interrupted", turnId: turn.id, reason: how.interrupted, joined: true }
        : { kind: "interrupted", turnId: turn.id, reason: how.interrupted },
    );
    ctx.trace("INTERRUPTED", { turnId: turn.id, reason: how.interrupted });
    ctx.cancelRunningCalls(turn.id, how.interrupted);
  }
}

/** The model said something for the turn since it was last asked: it answered. */
export function noteAnswered(turn: TurnState): void {
  turn.hasContent = true;
  turn.contentSinceAsk = true;
  turn.resultsSinceContent = 0;
  turn.speakSinceContent = false;
  turn.emptyRetries = 0;
  turn.slowWaits = 0;
  turn.awaitingFollowUp = false;
}
