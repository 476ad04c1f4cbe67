/**
 * The judgement by opening words that issue 8 removed, put back around the core (never in it)
 * for the controls that show what it did: once a reply's first 12 characters repeat a recent
 * reply's opening, where a regeneration was possible, the reply is taken for one and the rest
 * of its words go nowhere — and with them the honest answers that open alike ("Sure. …").
 */
import { regenerationPossible } from "../../src/core/generations.js";
import { normalizedReply } from "../../src/core/regeneration.js";
import type { Harness } from "./harness.js";

/** Characters of a reply's opening the removed judgement compared. */
const MIN_PREFIX = 12;

/**
 * Puts the judgement in front of `h`'s core: the model's words of a generation judged a
 * regeneration are dropped before they reach it. Returns how many generations it dropped.
 */
export function judgeOpenings(h: Harness): { suppressed(): number } {
  let suppressed = 0;
  let judged = false;
  let dropping = false;
  const input = h.input.bind(h);
  h.input = (given) => {
    if (dropping && given.type === "model" && given.event.type === "text_delta") return [];
    const effects = input(given);
    const s = h.state;
    if (s.generation === null) {
      judged = false;
      dropping = false;
    } else if (!judged && given.type === "model" && regenerationPossible(s, s.generation, h.now)) {
      const soFar = normalizedReply(s.generation.text);
      if (soFar.length >= MIN_PREFIX) {
        judged = true;
        const opening = soFar.slice(0, MIN_PREFIX);
        if (s.recentReplies.some((previous) => previous.startsWith(opening))) {
          dropping = true;
          suppressed++;
        }
      }
    }
    return effects;
  };
  return { suppressed: () => suppressed };
}
