/**
 * Recognising a regenerated reply, on evidence an honest answer cannot give.
 *
 * A model that ignores SILENT although its capability record says it honours it (field
 * report O2) answers a late side-effect result by saying its previous reply again. Where no
 * input owes a generation it is simply unsolicited and suppressed whole. The hard case is a
 * regeneration that starts just after the user sent new input: it takes the slot of the
 * answer. Its opening proves nothing (honest answers open alike: "Sure…", "Okay, so…"), so
 * nothing is held back or dropped on its words: the reply is delivered as it streams, and
 * only once it has ended is it compared, whole, with the recent replies. A word-for-word
 * repeat gives the slot back, so the real answer that follows still belongs to the turn; if
 * none comes, the turn watchdog ends the turn. A misjudged honest answer therefore costs a
 * late turn end, never a lost answer.
 */

/** Replies remembered for the comparison, and the characters kept of each. */
const KEPT_REPLIES = 8;
const KEPT_CHARS = 2000;

export function normalizedReply(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim().slice(0, KEPT_CHARS);
}

/** The whole reply says again, word for word, one of the recent replies. */
export function repeatsRecentReply(reply: string, recent: readonly string[]): boolean {
  return reply.length > 0 && recent.includes(reply);
}

export function rememberReply(recent: readonly string[], reply: string): string[] {
  if (reply.length === 0) return [...recent];
  return [reply, ...recent.filter((r) => r !== reply)].slice(0, KEPT_REPLIES);
}

/** The answers remembered with their inputs: the newest first, one per input. */
export function rememberAnswer(
  recent: readonly { input: string; reply: string }[],
  input: string,
  reply: string,
): { input: string; reply: string }[] {
  if (reply.length === 0) return [...recent];
  return [{ input, reply }, ...recent.filter((a) => a.input !== input)].slice(0, KEPT_REPLIES);
}

/**
 * An input as it is compared with earlier ones: a line or a transcription by its words, a
 * batch of results by each tool's name and outcome.
 */
export function inputKey(
  input:
    | { kind: "said"; text: string }
    | {
        kind: "results";
        results: readonly { name: string; result?: unknown; error?: string | undefined }[];
      },
): string {
  if (input.kind === "said") return `said:${normalizedReply(input.text)}`;
  const outcomes = input.results.map((r) => [r.name, r.error ?? r.result ?? null]);
  return `results:${JSON.stringify(outcomes).slice(0, KEPT_CHARS)}`;
}
