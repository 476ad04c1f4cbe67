/**
 * Recognising a regenerated reply. A provider that ignores SILENT (field report O2) or takes
 * a late response as new input says its previous reply again. When that happens just as the
 * user sends new input, the regenerated reply arrives where the answer to that input is
 * expected and cannot be told apart by its framing — only by its words. So, for a short
 * window after a result that could provoke it, a generation whose opening repeats a recent
 * reply's opening is taken as a regeneration and suppressed.
 */

/** Openings shorter than this are never taken for a regeneration ("Sure", "Okay" repeat honestly). */
export const MIN_PREFIX = 12;
const KEPT_OPENINGS = 4;

export function openingOf(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

export function looksRegenerated(opening: string, recent: readonly string[]): boolean {
  if (opening.length === 0) return false;
  return recent.some((previous) => {
    if (previous === opening) return true;
    const [short, long] =
      opening.length <= previous.length ? [opening, previous] : [previous, opening];
    return short.length >= MIN_PREFIX && long.startsWith(short);
  });
}

export function rememberOpening(recent: readonly string[], opening: string): string[] {
  const kept = opening.slice(0, 80);
  if (kept.length === 0) return [...recent];
  return [kept, ...recent.filter((o) => o !== kept)].slice(0, KEPT_OPENINGS);
}
