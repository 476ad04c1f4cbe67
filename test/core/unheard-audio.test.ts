/**
 * Found by the black-box attack of 2026-11-29: client audio the model had not shown it heard
 * went with a connection that was replaced (a goAway move at a quiet moment, a drop), and no
 * turn and no error followed. The shell keeps the audio the model has not answered (bounded)
 * and the replacement gets it again, first (core/sent-audio.ts); speech the model had
 * signalled goes too when all of it is kept, else it is said lost. Each test runs the audio through the audio gate, as
 * the shell hands it over; the control switches the carry off.
 */
import { describe, expect, it } from "vitest";
import { ALL_GUARDS } from "../../src/core/session-state.js";
import type { Harness } from "./harness.js";
import { errorCodes, live, userTurns } from "./sessions.js";

/** A chunk whose first byte names it, so the model's copy shows which chunks went, in order. */
const chunkNo = (n: number) => new Uint8Array(640).fill(n, 0, 1);

/** The chunks of user audio sent to the model from `from` on, by their first byte. */
const audioSent = (h: Harness, from = 0) =>
  h.sentToModel.slice(from).flatMap((c) => (c.type === "user_audio" ? [c.pcm[0]] : []));

/** One turn, answered and ended: the model spoke, then a fresh handle (a Gemini turn's end). */
function turnDone(h: Harness): void {
  h.input({ type: "client_text", clientId: "phone", text: "hi" });
  h.model({ type: "text_delta", text: "Hello!" });
  h.model({ type: "turn_complete" });
  h.model({ type: "resumption_update", handle: "h1", resumable: true });
}

function speak(h: Harness, from: number, to: number): void {
  for (let n = from; n <= to; n++) {
    h.now += 20;
    h.clientAudio("phone", chunkNo(n));
  }
}

/** The connection drops, the next one comes up: the user audio it was sent first, by first byte. */
function afterADrop(h: Harness): (number | undefined)[] {
  h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
  h.fireNextTimer();
  const sentBefore = h.sentToModel.length;
  h.model({ type: "setup_complete" });
  return audioSent(h, sentBefore);
}

describe("audio the model had not shown it heard, when its connection is replaced", () => {
  it("a goAway move at a turn's end as the user begins to speak: the new connection hears it all, in order", () => {
    const h = live();
    turnDone(h);
    h.model({ type: "go_away", timeLeftMs: 10_000 });
    // The handle is fresh and nothing is in flight: the move is on its way.
    expect(h.opens).toBe(2);
    speak(h, 1, 5); // while the new connection opens: queued
    h.model({ type: "setup_complete" });
    // The move went before the audio: nothing of it reached the old connection.
    expect(audioSent(h)).toEqual([1, 2, 3, 4, 5]);
  });

  it("a goAway move while the user speaks, before the model signalled it: the audio goes again, then the rest", () => {
    const h = live();
    turnDone(h);
    speak(h, 1, 5); // to the live connection; the model says nothing yet
    h.model({ type: "go_away", timeLeftMs: 10_000 });
    // The audio made the handle stale: the move waits for the go_away timer.
    h.advance(10_000);
    expect(h.opens).toBe(2);
    speak(h, 6, 7);
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(audioSent(h, sentBefore)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // The answer to it opens its voice turn as usual.
    h.model({ type: "input_transcript", text: "what time is it", finished: true });
    h.model({ type: "text_delta", text: "Noon." });
    h.model({ type: "turn_complete" });
    expect(userTurns(h)).toEqual([
      ["t1", "hi"],
      ["t2", "what time is it"],
    ]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("a drop mid-utterance: the next connection hears what the last one took along", () => {
    const h = live();
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    speak(h, 4, 4);
    h.fireNextTimer(); // the reconnect
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(audioSent(h, sentBefore)).toEqual([1, 2, 3, 4]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("control: without carryUnheardAudio, the audio sent before the drop is lost without a word", () => {
    const h = live({ guards: { ...ALL_GUARDS, carryUnheardAudio: false } });
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    speak(h, 4, 4);
    h.fireNextTimer();
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(audioSent(h, sentBefore)).toEqual([4]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("lost twice before it was heard: it goes again each time", () => {
    const h = live();
    turnDone(h);
    speak(h, 1, 2);
    for (let drop = 0; drop < 2; drop++) {
      h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
      h.fireNextTimer();
      const sentBefore = h.sentToModel.length;
      h.model({ type: "setup_complete" });
      expect(audioSent(h, sentBefore)).toEqual([1, 2]);
    }
  });

  it("bounded: only the newest sentAudioMaxBytes go again", () => {
    const h = live({ sentAudioMaxBytes: 3 * 640 });
    turnDone(h);
    speak(h, 1, 8);
    expect(afterADrop(h)).toEqual([6, 7, 8]);
  });

  it("speech the model signalled and had not answered goes again whole, and its answer opens the voice turn", () => {
    const h = live();
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "input_transcript", text: "what time", finished: false });
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    // A line typed meanwhile waits for the speech's answer, as on a live connection.
    h.input({ type: "client_text", clientId: "phone", text: "and the date?" });
    h.fireNextTimer();
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(audioSent(h, sentBefore)).toEqual([1, 2, 3]);
    expect(h.traces).toContain("SPEECH_CARRIED");
    // The new connection transcribes it anew: the turn has its words once.
    h.model({ type: "input_transcript", text: "what time is it", finished: true });
    h.model({ type: "text_delta", text: "Noon." });
    expect(userTurns(h)).toEqual([
      ["t1", "hi"],
      ["t2", "what time is it"],
      ["t3", "and the date?"],
    ]);
    expect(errorCodes(h)).toEqual([]);
  });

  it("speech the model signalled whose start the bound dropped is said lost (speech_lost), not sent again", () => {
    const h = live({ sentAudioMaxBytes: 2 * 640 });
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "input_transcript", text: "what time", finished: false });
    expect(afterADrop(h)).toEqual([]);
    expect(errorCodes(h)).toEqual(["speech_lost"]);
  });

  it("speech spoken over the answer (a barge-in) began in the turn's audio: its loss is said (speech_lost), never sent again in part", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    h.model({ type: "text_delta", text: "Once upon a time" });
    speak(h, 1, 3); // the user talks over it; the model cuts its answer
    h.model({ type: "interrupted" });
    h.model({ type: "turn_complete" });
    speak(h, 4, 5); // the rest of what they say, after the turn ended
    expect(afterADrop(h)).toEqual([]);
    expect(errorCodes(h)).toEqual(["speech_lost"]);
  });

  it("audio sent while a turn was answered belongs to that turn: its loss ends the turn, said so, and it does not go again", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "tell me a story" });
    h.model({ type: "text_delta", text: "Once upon a time" });
    speak(h, 1, 3); // echo, or the user talking over it
    expect(afterADrop(h)).toEqual([]);
    const ends = h.durableFrames("phone").filter((f) => f.type === "interrupted");
    expect(ends).toMatchObject([{ turnId: "t1", reason: "upstream_lost" }]);
  });

  it("audio from before a turn opened does not go again after it: the turn answered it", () => {
    const h = live();
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "input_transcript", text: "what time is it", finished: true });
    h.model({ type: "text_delta", text: "Noon." });
    h.model({ type: "turn_complete" });
    expect(afterADrop(h)).toEqual([]);
  });

  it("liveline gives up on the connection: nothing is kept for a later one", () => {
    const h = live({ maxReconnectAttempts: 1 });
    turnDone(h);
    speak(h, 1, 3);
    h.model({ type: "upstream_closed", code: 1011, reason: "internal", fatal: false });
    h.fireNextTimer();
    h.input({ type: "upstream_failed", message: "HTTP 503" });
    expect(h.state.upstream.phase).toBe("failed");
    expect(errorCodes(h)).toEqual(["upstream_unavailable"]);
    h.input({ type: "client_text", clientId: "phone", text: "hello?" });
    const sentBefore = h.sentToModel.length;
    h.model({ type: "setup_complete" });
    expect(audioSent(h, sentBefore)).toEqual([]);
  });
});
