/**
 * The simulator's knobs, read from the query string of `GET /simulator/gemini`.
 * Every knob and its default is documented in ./README.md; keep the two in step.
 */

export interface SimulatorKnobs {
  /** Seed of the PRNG behind every random choice (chunking, race, empties, ids). */
  seed: number;
  /** Multiplies every pacing delay (speech, first-chunk latency); 0 = no delay at all. */
  timeScale: number;
  /** Server JSON in binary frames (as the real service) or text frames. */
  frames: "binary" | "text";
  /**
   * Probability, per generation that calls tools, of the fire-and-forget race (O1). null: by
   * the model family of the setup (2.x: 1, turnComplete never waits for results; 3.x: 0).
   */
  race: number | null;
  /** In a race generation, issue the call this many ms of speech before the end (0: after it). */
  midSpeechCall: number;
  /** SILENT on a NON_BLOCKING call is handled as if it had no scheduling (O2). */
  ignoreSilent: boolean;
  /**
   * Gemini 3.1: every call is blocking; no turnComplete until every call is answered (O6).
   * null: by the model family of the setup (on for gemini-3.x).
   */
  syncOnly: boolean | null;
  /**
   * A reply says all its words, then makes its calls: after the results of side effects alone
   * a blocking reply has nothing to add and ends; speak results are still said. Asked to go on
   * with nothing owed, the model answers the user's last line again (its greeting, its calls).
   */
  callsLast: boolean;
  /**
   * What a 3.x model does with `clientContent` after the initial history: "refuse" (close
   * 1007, livekit PR 5251) or "accept" (the sources conflict; refusing is the default).
   */
  midSessionClientContent: "refuse" | "accept";
  /** Probability that a reply answering tool results is empty (only turnComplete). */
  emptyRate: number;
  /** 1-based indexes of replies (of this connection) that are empty, whatever they answer. */
  emptySchedule: number[];
  /** Probability, per generation that calls tools, of delivering each call twice (O5). */
  duplicateCalls: number;
  /** Calls carry no `id` (SDK fixtures, older models); responses are matched by name. */
  noIds: boolean;
  /** Send goAway after this many completed turns (0: never). */
  goAwayAfterTurns: number;
  /** Send goAway this many ms after the connection opened (0: never). */
  goAwayAfterMs: number;
  /** goAway's `timeLeft`; the connection closes that long after the goAway. */
  goAwayMs: number;
  /** Drop the connection abruptly (close 1011, no goAway) after this many ms (0: never). */
  dropAfterMs: number;
  /** Connection length limit: goAway `goAwayMs` before it, close 1011 at it (0: none). */
  maxConnectionMs: number;
  /** A resumption handle is accepted for this long after it was issued. */
  handleTtlMs: number;
  /** Which declared tools each user turn calls; null: the default script (README). */
  calls: CallScript | null;
  /** Side-effect tool names; null: names starting with suggest_/set_/show_/play_. */
  sideEffects: string[] | null;
  /** Speech pacing and audio length per word, in ms (before timeScale). */
  msPerWord: number;
  /**
   * Delay before the first chunk of a reply, in ms (before timeScale): a user turn's answer,
   * and the answer after tool results (both faces).
   */
  latencyMs: number;
  /**
   * The same input gets the same words: no `[#rN]` tag, no varied opening, no greeting turn.
   * A user line's answer is a function of its text alone; a tool result's of the tool's name
   * and the result (both faces). Lines that read the context (repeat, remember) still do.
   */
  repeatAnswers: boolean;
  /**
   * Gemini face: while a reply waits `latencyMs`, a sign of work every 1000 ms of it (before
   * timeScale): a `modelTurn` part `{text, thought: true}`, as thinking models send.
   */
  workSigns: boolean;
  /** Audio of this many ms (16 kHz PCM16) ends an utterance without audioStreamEnd (0: off). */
  utteranceMs: number;
  /**
   * How the faces detect speech in input audio (both faces). "off": every audio byte is speech
   * (an utterance ends at audioStreamEnd/activityEnd or after `utteranceMs` of audio; any audio
   * during a reply barges in). "energy": a 20 ms window is speech when its RMS exceeds
   * `vadThreshold`; an utterance ends after `vadSilenceMs` of non-speech, and only speech barges
   * in (./vad.ts). For continuous audio (phone calls), where silence is sent too.
   */
  vad: "off" | "energy";
  /** `vad=energy`: RMS (of 32768, PCM16) above which a 20 ms window is speech. */
  vadThreshold: number;
  /** `vad=energy`: this many ms of non-speech after speech end an utterance. */
  vadSilenceMs: number;
  /**
   * Real ms before `setupComplete` (the service takes a moment; input meanwhile is buffered).
   * OpenAI face: a `session.update` sent sooner after the open is answered (`session.updated`)
   * that long after it.
   */
  setupMs: number;
  /**
   * Refuse every WebSocket upgrade with this HTTP status and a Google-style error body, as the
   * service refuses a bad key or model (0: never).
   */
  refuseUpgrade: number;
  /**
   * GPT-Live face: probability, per delegated function call, that its `response.event`
   * (`response.output_item.done`) is delivered twice (the guides put exactly-once on the app).
   */
  duplicateDelivery: number;
  /**
   * GPT-Live face: new user input while a delegation waits for its tool results supersedes it:
   * the model moves on, and a late result is taken but never spoken.
   */
  supersede: boolean;
  /**
   * GPT-Live face: the session ends (`session.closed` reason `expired`) this many real ms
   * after its start (default two hours, as measured by aplisay/llm-agent PR #306; 0: never).
   */
  expireAfterMs: number;
  /**
   * GPT-Live face: 1-based indexes of the session's backend responses that fail
   * (`response.failed`): the service drops their calls and refuses their outputs.
   */
  failResponses: number[];
  /**
   * GPT-Live face: the response a client's `response.create` starts is announced as a
   * delegation of its own (`session.delegation.created` first, its events under that id).
   * Which of the two shapes the service uses is not settled by its types or guides.
   */
  announceReplies: boolean;
  /**
   * GPT-Live face: each delegation the voice starts is delivered twice (the announcement and
   * its first response's events again, new Live event ids, the same delegation and call ids);
   * with `announceReplies`, each announced reply too.
   */
  duplicateDelegation: boolean;
  /**
   * GPT-Live face: speech it holds while the chain is busy is acknowledged once, in a few
   * words ("I'm still looking that up."), as habemus-papadum/pdum_aiui's run 2 heard; by
   * default the voice says nothing (its other runs).
   */
  holdAck: boolean;
  /**
   * GPT-Live face: a delegated run that only called tools (its continuation said nothing) is
   * not marked done: the next delegation's response delivers its calls again (the same call
   * ids) before its own, the shape of mindroom-ai/mindroom PR #2004's replayed side effect.
   */
  replayToolsOnly: boolean;
  /**
   * OpenAI face: every response with words opens with a preamble, a message of its own ("Let
   * me check that.") before the one that answers: two message generations in one response,
   * as gpt-realtime-2 and 2.1 send them (livekit/agents #5684, #5768).
   */
  preamble: boolean;
  /**
   * GPT-Live face: after a reply, with nothing new for this many ms of the timeline, the model
   * speaks once on its own ("Are you still there?"; 0: never). Its wire has no turns, so
   * nothing marks such words as unasked: the gateway must deliver them all the same.
   */
  unpromptedAfterMs: number;
}

/** calls=greeting:a,b;lookup_faq;*:c — per user turn (1-based), and a fallback for the rest. */
export interface CallScript {
  byTurn: Record<number, string[]>;
  otherwise: string[];
}

export const DEFAULT_KNOBS: SimulatorKnobs = {
  seed: 1,
  timeScale: 1,
  frames: "binary",
  race: null,
  midSpeechCall: 0,
  ignoreSilent: false,
  syncOnly: null,
  callsLast: false,
  midSessionClientContent: "refuse",
  emptyRate: 0,
  emptySchedule: [],
  duplicateCalls: 0,
  noIds: false,
  goAwayAfterTurns: 0,
  goAwayAfterMs: 0,
  goAwayMs: 60_000,
  dropAfterMs: 0,
  maxConnectionMs: 600_000,
  handleTtlMs: 2 * 60 * 60 * 1000,
  calls: null,
  sideEffects: null,
  msPerWord: 300,
  latencyMs: 600,
  repeatAnswers: false,
  workSigns: false,
  utteranceMs: 0,
  vad: "off",
  vadThreshold: 500,
  vadSilenceMs: 500,
  setupMs: 0,
  refuseUpgrade: 0,
  duplicateDelivery: 0,
  supersede: false,
  expireAfterMs: 2 * 60 * 60 * 1000,
  failResponses: [],
  announceReplies: false,
  duplicateDelegation: false,
  holdAck: false,
  replayToolsOnly: false,
  preamble: false,
  unpromptedAfterMs: 0,
};

export class KnobError extends Error {}

/** Knobs from a query string; unknown parameters are ignored, malformed ones are refused. */
export function parseKnobs(params: URLSearchParams): SimulatorKnobs {
  const k: SimulatorKnobs = { ...DEFAULT_KNOBS, emptySchedule: [], failResponses: [] };
  const get = (name: string) => {
    const v = params.get(name);
    return v === null || v === "" ? undefined : v;
  };
  const num = (name: string, min: number, max = Number.POSITIVE_INFINITY): number | undefined => {
    const v = get(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new KnobError(`${name} must be a number in [${min}, ${max}], got "${v}"`);
    }
    return n;
  };
  const int = (name: string, min = 0): number | undefined => {
    const n = num(name, min);
    if (n !== undefined && !Number.isInteger(n)) throw new KnobError(`${name} must be an integer`);
    return n;
  };
  const bool = (name: string): boolean | undefined => {
    const v = get(name);
    if (v === undefined) return undefined;
    if (["1", "true", "yes", "on"].includes(v)) return true;
    if (["0", "false", "no", "off"].includes(v)) return false;
    throw new KnobError(`${name} must be true/false or 1/0, got "${v}"`);
  };

  k.seed = int("seed", Number.MIN_SAFE_INTEGER) ?? k.seed;
  k.timeScale = num("timeScale", 0, 100) ?? k.timeScale;
  const frames = get("frames");
  if (frames !== undefined) {
    if (frames !== "binary" && frames !== "text") {
      throw new KnobError(`frames must be "binary" or "text", got "${frames}"`);
    }
    k.frames = frames;
  }
  k.race = num("race", 0, 1) ?? k.race;
  k.midSpeechCall = num("midSpeechCall", 0) ?? k.midSpeechCall;
  k.ignoreSilent = bool("ignoreSilent") ?? k.ignoreSilent;
  k.syncOnly = bool("syncOnly") ?? k.syncOnly;
  k.callsLast = bool("callsLast") ?? k.callsLast;
  const midSession = get("midSessionClientContent");
  if (midSession !== undefined) {
    if (midSession !== "refuse" && midSession !== "accept") {
      throw new KnobError(
        `midSessionClientContent must be "refuse" or "accept", got "${midSession}"`,
      );
    }
    k.midSessionClientContent = midSession;
  }
  k.emptyRate = num("emptyRate", 0, 1) ?? k.emptyRate;
  const indexes = (name: string): number[] | undefined =>
    get(name)
      ?.split(",")
      .map((s) => {
        const n = Number(s.trim());
        if (!Number.isInteger(n) || n < 1) {
          throw new KnobError(`${name} must list reply indexes >= 1, got "${s}"`);
        }
        return n;
      });
  k.emptySchedule = indexes("emptySchedule") ?? k.emptySchedule;
  k.duplicateCalls = num("duplicateCalls", 0, 1) ?? k.duplicateCalls;
  k.noIds = bool("noIds") ?? k.noIds;
  k.goAwayAfterTurns = int("goAwayAfterTurns") ?? k.goAwayAfterTurns;
  k.goAwayAfterMs = num("goAwayAfterMs", 0) ?? k.goAwayAfterMs;
  k.goAwayMs = num("goAwayMs", 0) ?? k.goAwayMs;
  k.dropAfterMs = num("dropAfterMs", 0) ?? k.dropAfterMs;
  k.maxConnectionMs = num("maxConnectionMs", 0) ?? k.maxConnectionMs;
  k.handleTtlMs = num("handleTtlMs", 0) ?? k.handleTtlMs;
  const calls = params.get("calls");
  if (calls !== null) k.calls = parseCallScript(calls);
  const sideEffects = params.get("sideEffects");
  if (sideEffects !== null) k.sideEffects = splitNames(sideEffects);
  k.msPerWord = num("msPerWord", 0) ?? k.msPerWord;
  k.latencyMs = num("latencyMs", 0) ?? k.latencyMs;
  k.repeatAnswers = bool("repeatAnswers") ?? k.repeatAnswers;
  k.workSigns = bool("workSigns") ?? k.workSigns;
  k.utteranceMs = num("utteranceMs", 0) ?? k.utteranceMs;
  const vad = get("vad");
  if (vad !== undefined) {
    if (vad !== "off" && vad !== "energy") {
      throw new KnobError(`vad must be "off" or "energy", got "${vad}"`);
    }
    k.vad = vad;
  }
  k.vadThreshold = num("vadThreshold", 0, 32768) ?? k.vadThreshold;
  k.vadSilenceMs = num("vadSilenceMs", 0, 60_000) ?? k.vadSilenceMs;
  k.setupMs = num("setupMs", 0, 60_000) ?? k.setupMs;
  const refuse = int("refuseUpgrade");
  if (refuse !== undefined && refuse !== 0 && (refuse < 400 || refuse > 599))
    throw new KnobError(
      `refuseUpgrade must be 0 or an HTTP error status (400-599), got "${refuse}"`,
    );
  k.refuseUpgrade = refuse ?? k.refuseUpgrade;
  k.duplicateDelivery = num("duplicateDelivery", 0, 1) ?? k.duplicateDelivery;
  k.supersede = bool("supersede") ?? k.supersede;
  k.expireAfterMs = num("expireAfterMs", 0) ?? k.expireAfterMs;
  k.failResponses = indexes("failResponses") ?? k.failResponses;
  k.announceReplies = bool("announceReplies") ?? k.announceReplies;
  k.duplicateDelegation = bool("duplicateDelegation") ?? k.duplicateDelegation;
  k.holdAck = bool("holdAck") ?? k.holdAck;
  k.replayToolsOnly = bool("replayToolsOnly") ?? k.replayToolsOnly;
  k.preamble = bool("preamble") ?? k.preamble;
  k.unpromptedAfterMs = num("unpromptedAfterMs", 0, 600_000) ?? k.unpromptedAfterMs;
  return k;
}

function splitNames(list: string): string[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * `greeting:suggest_topics,set_preference;lookup_faq;*:lookup_faq`: entries separated by `;`.
 * An entry `KEY:names` applies to turn KEY (`greeting` is turn 1, a number is that turn, `*`
 * is every turn not listed); an entry without a key applies to the turn after the previous
 * entry's. An empty name list means "no calls".
 */
export function parseCallScript(text: string): CallScript {
  const script: CallScript = { byTurn: {}, otherwise: [] };
  let nextTurn = 1;
  for (const raw of text.split(";")) {
    const entry = raw.trim();
    const colon = entry.indexOf(":");
    const key = colon === -1 ? undefined : entry.slice(0, colon).trim();
    const names = splitNames(colon === -1 ? entry : entry.slice(colon + 1));
    if (key === "*") {
      script.otherwise = names;
      continue;
    }
    let turn = nextTurn;
    if (key === "greeting") turn = 1;
    else if (key !== undefined) {
      turn = Number(key);
      if (!Number.isInteger(turn) || turn < 1) {
        throw new KnobError(`calls: "${key}" is not greeting, * or a turn number >= 1`);
      }
    }
    script.byTurn[turn] = names;
    nextTurn = turn + 1;
  }
  return script;
}
