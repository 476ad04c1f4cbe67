/**
 * Client audio the model has not shown it heard, across a replaced connection. The audio sent
 * to a live connection is not in the log: until the model answers it (a generation runs, a
 * turn opens) or signals it (a transcription, its VAD), a connection lost or moved on a
 * goAway takes it along, and the user would hear nothing back and be told nothing. The shell
 * keeps what it sent (bounded: heldAudioMaxBytes, oldest dropped); the core says when that is
 * no longer needed, and when it goes again, in order, to the connection that replaces it.
 *
 * Every decision here is taken in a step and reads only what chunks passing the audio gate
 * never change (the turn, the generation, the connection): the gate's equivalence holds.
 */
import type { StepContext } from "./step-context.js";

/** The shell's kept audio is not needed any more. */
export function forgetSentAudio(ctx: StepContext): void {
  if (ctx.state.sentAudio === "none") return;
  ctx.state.sentAudio = "none";
  ctx.emit({ type: "forget_sent_audio" });
}

/**
 * Before and after every step: audio sent while the model answers (a generation runs) or a
 * turn is open is the turn's (what the user said, barge-in, echo): a lost connection ends
 * that turn, said so. Only audio sent between turns can be lost without a word.
 */
export function forgetAnsweredAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio === "unheard" && (s.turn !== null || s.generation !== null)) forgetSentAudio(ctx);
}

/**
 * The connection goes (lost, or replaced on a goAway or a handoff) and another opens: the
 * audio the model had not shown it heard goes to the next one. Speech it had signalled is
 * said lost instead (carry.ts), and its audio forgotten before this.
 */
export function carrySentAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio !== "unheard") return;
  if (s.config.guards.carryUnheardAudio && !s.speechDetected) s.sentAudio = "carried";
  else forgetSentAudio(ctx);
}

/**
 * The next connection is live (before the outbox goes: the kept audio was sent before it).
 * Resumed or seeded from the log, it has the conversation up to its last turn, not audio that
 * turned into no turn yet (a handle is issued at a turn's end; the simulator's assumptions):
 * it gets the audio again, and it stays kept until it is heard.
 */
export function resendCarriedAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio !== "carried") return;
  s.sentAudio = "unheard";
  s.upstream.handleStale = true;
  ctx.emit({ type: "resend_sent_audio" });
}
