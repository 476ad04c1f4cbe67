/**
 * Where a turnless model's speech ends, on the session's clock. Such a model says where each
 * piece of its speech sits on its own timeline (GPT-Live: `start_ms`/`end_ms`), and nothing
 * marks the end of what it says: its utterance is over once it stays quiet past the end of
 * its speech, not past the last piece's arrival (a model that sends a piece as it begins to
 * say it would otherwise be cut between pieces).
 *
 * The timeline's pace on this clock is read from the pieces themselves: the wall time between
 * two pieces over the timeline between their starts (a service that speaks in real time: 1;
 * one that sends ahead of its speech: less, down to 0 when pieces come in a burst, whose end is
 * then their arrival). Never above 1: a piece that came late says nothing of the speech.
 */
export interface SpeechClock {
  /** The latest piece: when it came, and where it starts on the timeline (null: none yet). */
  last: { at: number; startMs: number } | null;
  /** Wall ms per timeline ms, as last read (1 until two pieces showed it). */
  pace: number;
  /** When the speech said so far ends, on the session's clock. */
  endsAt: number;
}

export function initialSpeechClock(): SpeechClock {
  return { last: null, pace: 1, endsAt: 0 };
}

/**
 * The clock after a piece of the model's speech over `[startMs, endMs)` of its timeline came
 * just now (a new object: a step never writes the state it was given).
 */
export function noteSpeechSpan(
  clock: SpeechClock,
  now: number,
  span: { startMs: number; endMs: number },
): SpeechClock {
  const last = clock.last;
  const pace =
    last !== null && span.startMs > last.startMs
      ? Math.min(1, (now - last.at) / (span.startMs - last.startMs))
      : clock.pace;
  const endsAt = now + Math.max(0, span.endMs - span.startMs) * pace;
  return { last: { at: now, startMs: span.startMs }, pace, endsAt };
}

/** A new connection is a new timeline: its positions are not comparable with the last one's. */
export function restartSpeechTimeline(clock: SpeechClock): SpeechClock {
  return { ...clock, last: null };
}
