/**
 * The audio gate: which audio may pass without a core step. Live audio is 50 chunks a second
 * each way; most of them change nothing but a timestamp. After every step the core's state
 * says, through `audioGate`, whether a chunk would — and when it would not, the shell forwards
 * it at once (client audio to the model, the model's audio to the clients) and only notes
 * when it went; the next input's step first sets those timestamps (`step`'s `passed`). The state and every effect are then exactly what stepping each chunk gives
 * (the equivalence is a property test). Any chunk the core must see — the first of a
 * generation, audio before the connection is live, a suppressed generation's audio, audio
 * while a turn's watchdog or a goAway move is pending — goes through the core as before.
 */
import { reactionsOwed } from "./follow-up.js";
import { audioBetweenTurns } from "./sent-audio.js";
import type { CoreState } from "./session-state.js";
import { waitingOnModel } from "./watchdog.js";

export interface AudioGate {
  /** Client audio may go to the model without a step. */
  input: boolean;
  /**
   * Client audio that passes is kept by the shell for a replacement connection (sent-audio.ts):
   * not while a turn is open or a generation runs (the next step would forget it at once, and
   * holding 50 chunks a second for nothing shows in the audio path's tail).
   */
  keep: boolean;
  /** Model audio may go to the clients without a step. */
  output: boolean;
  /**
   * A piece of the user's transcription (or a speech start) changes nothing but the model's
   * last sign of life: it is noted without a step (it comes with the user's speech, as often
   * as a frame a chunk).
   */
  transcript: boolean;
}

export const GATE_CLOSED: AudioGate = {
  input: false,
  keep: false,
  output: false,
  transcript: false,
};

/** What a step taken for any input ends with would leave unchanged (session-core `step`). */
function afterStepIsNoOp(s: CoreState): boolean {
  const up = s.upstream;
  return (
    !s.ended &&
    // A cap reached: client audio is dropped, and the goodbye's first audio opens its turn.
    s.limit === null &&
    up.phase === "live" &&
    // No goAway move waiting for a quiet moment, no held line waiting for its release.
    !up.goingAway &&
    s.heldLines.length === 0 &&
    // A handoff waiting: the next input may have to go to the new agent's connection.
    s.pendingHandoff === null &&
    // The watchdog would not be armed by this step.
    (s.watchdogSet || s.turn === null || s.config.modelTimeoutMs <= 0 || !waitingOnModel(s, s.turn))
  );
}

export function audioGate(s: CoreState): AudioGate {
  if (!afterStepIsNoOp(s)) return GATE_CLOSED;
  const gen = s.generation;
  // client_audio: setIdle (the idle timer is already set), sendModel (live: sent at once),
  // and the generation learns input came after its start (it already knows).
  // The resumption handle a chunk would mark stale is marked by the next step's `passed`
  // (a reply's first audio takes one anyway): the first chunk of an utterance, which follows
  // the handle of the turn before, goes on without a step of its own.
  const input = (s.config.idleTimeoutMs <= 0 || s.idleSet) && (gen === null || gen.inputSinceStart);
  const up = s.upstream;
  const turn = s.turn;
  // What any model event's step does first: the upstream health check (not flapping: nothing
  // to note), and marking the resumption handle stale (it already is: a model audio chunk or
  // transcription would mark it, a speech start would not, and passed says nothing of which
  // it was).
  const modelEventIsNoOp = up.handleStale && (!up.flapping || up.liveSince === null);
  // input_transcript / speech_started: speech while the open turn is answered belongs to that
  // turn (session-core: it returns at once).
  const transcript = modelEventIsNoOp && turn !== null && (gen !== null || !turn.modelEnded);
  // audio_delta: the generation already has content, owes no reaction and is owned by the
  // open turn, whose content bookkeeping is already where a chunk would put it.
  const output =
    modelEventIsNoOp &&
    gen?.hasContent === true &&
    reactionsOwed(gen) === 0 &&
    gen.owner !== null &&
    turn !== null &&
    turn.id === gen.owner &&
    turn.hasContent &&
    turn.contentSinceAsk &&
    turn.resultsSinceContent === 0 &&
    !turn.speakSinceContent &&
    turn.emptyRetries === 0;
  const keep = input && audioBetweenTurns(s) && s.config.guards.carryUnheardAudio;
  return input || output || transcript ? { input, keep, output, transcript } : GATE_CLOSED;
}
