/**
 * Client audio the model has not answered, across a replaced connection. The audio sent to a
 * live connection is not in the log: until the model answers it (a generation runs, a turn
 * opens), a connection lost or moved on a goAway takes it along, and the user would hear
 * nothing back (or be asked to say it again). The shell keeps what it sent (bounded:
 * sentAudioMaxBytes, oldest dropped); the core says when that is no longer needed, and when
 * it goes again, in order, to the connection that replaces it.
 *
 * Every decision here is taken in a step and reads only what chunks passing the audio gate
 * never change (the turn, the generation, the connection) or what the step's `passed` sets
 * first (the bytes sent): the gate's equivalence holds.
 */
import type { CoreState } from "./session-state.js";
import type { StepContext } from "./step-context.js";

/** The shell's kept audio is not needed any more. */
export function forgetSentAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio === "none") return;
  s.sentAudio = "none";
  s.sentAudioBytes = 0;
  s.sentAudioEnded = false;
  ctx.emit({ type: "forget_sent_audio" });
}

/**
 * Audio sent now is kept for a replacement connection: no turn is open and no generation
 * runs. Audio sent while the model answers or a turn is open is the turn's (what the user
 * said, barge-in, echo): a lost connection ends that turn, said so. The audio gate's `keep`
 * reads this too, so that what passes it is kept exactly when a step would keep it.
 */
export function audioBetweenTurns(s: CoreState): boolean {
  return s.turn === null && s.generation === null;
}

/** Before and after every step: audio sent during a turn is forgotten (audioBetweenTurns). */
export function forgetAnsweredAudio(ctx: StepContext): void {
  if (ctx.state.sentAudio === "unheard" && !audioBetweenTurns(ctx.state)) forgetSentAudio(ctx);
}

/**
 * The audio the model has not answered can go to the next connection. Speech it signalled
 * (a transcription, its VAD, the client's `audio_end`) goes only if the shell keeps all of
 * it: signalled outside any turn (one spoken over a turn began in the turn's audio, which is
 * not kept) and nothing dropped for the bound since. A tail without its start would be
 * answered as something the user never said, so that is said lost instead (carry.ts).
 */
export function mayCarrySentAudio(s: CoreState): boolean {
  if (s.sentAudio !== "unheard" || !s.config.guards.carryUnheardAudio) return false;
  return !s.speechDetected || (!s.speechOverTurn && s.sentAudioBytes <= s.config.sentAudioMaxBytes);
}

/** The connection goes (lost, or replaced on a goAway or a handoff) and another opens. */
export function carrySentAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio !== "unheard") return;
  if (mayCarrySentAudio(s)) s.sentAudio = "carried";
  else forgetSentAudio(ctx);
}

/**
 * The next connection is live (before the outbox goes: the kept audio was sent before it).
 * Resumed or seeded from the log, it has the conversation up to its last turn, not audio that
 * turned into no turn yet (a handle is issued at a turn's end; the simulator's assumptions):
 * it gets the audio again, and its end if one went after it; it stays kept until answered.
 */
export function resendCarriedAudio(ctx: StepContext): void {
  const s = ctx.state;
  if (s.sentAudio !== "carried") return;
  s.sentAudio = "unheard";
  s.upstream.handleStale = true;
  ctx.emit({ type: "resend_sent_audio" });
  // Held: it all goes in one burst, before the service's voice detection can say it heard it.
  if (s.sentAudioEnded) ctx.sendModel({ type: "audio_end", held: true });
}
