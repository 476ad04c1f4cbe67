/**
 * Gemini Live models and where they are in their life, as the sources say (docs/MODELS.md
 * keeps the same table): a configured model past its shutdown date is named in `/health` and
 * in a new session's answer, with its replacement. A model not listed is not judged.
 */

export interface ModelLifecycle {
  /** The bare model id (no "models/" or Vertex path). */
  model: string;
  status: "stable" | "preview" | "deprecated" | "shut down";
  /** When the service stops serving it: a day (YYYY-MM-DD) or, where only that is said, a month (YYYY-MM). */
  shutdown?: string | undefined;
  /** What the sources name in its place. */
  replacement?: string | undefined;
  source: string;
}

/** The Developer API's default: stable since 2026-09-15, NON_BLOCKING by default. */
export const CURRENT_GEMINI_LIVE_MODEL = "gemini-3.8-live";

export const GEMINI_LIVE_MODELS: readonly ModelLifecycle[] = [
  {
    model: "gemini-3.8-live",
    status: "stable",
    source: "livekit/agents #7302: stable since 2026-09-15, NON_BLOCKING the default",
  },
  {
    model: "gemini-3.1-flash-live-preview",
    status: "preview",
    source: "livekit/agents #5747 (available 2026-05); no shutdown announced in the sources",
  },
  {
    model: "gemini-live-2.5-flash-native-audio",
    status: "stable",
    source:
      "Vertex AI Live API overview (GA); 2.5 models other than stable Live ones shut down in October 2026 (a Firebase page, 2026-08-02)",
  },
  {
    model: "gemini-2.5-flash-native-audio-preview-12-2025",
    status: "preview",
    shutdown: "2026-10",
    replacement: CURRENT_GEMINI_LIVE_MODEL,
    source:
      "Google's deprecations page (the 09-2025 preview's replacement); 2.5 models other than stable Live ones shut down in October 2026 (a Firebase page, 2026-08-02)",
  },
  {
    model: "gemini-2.5-flash-native-audio-preview-09-2025",
    status: "deprecated",
    shutdown: "2026-10",
    replacement: CURRENT_GEMINI_LIVE_MODEL,
    source:
      "deprecated 2026-03-19 (googleapis/python-genai #2117); 2.5 models other than stable Live ones shut down in October 2026 (a Firebase page, 2026-08-02)",
  },
  {
    model: "gemini-live-2.5-flash-preview",
    status: "shut down",
    shutdown: "2025-12-09",
    replacement: CURRENT_GEMINI_LIVE_MODEL,
    source: "Gemini API changelog; Google's notice of 2025-10 (sohzm/cheating-daddy #154)",
  },
  {
    model: "gemini-2.0-flash-live-001",
    status: "shut down",
    shutdown: "2025-12-09",
    replacement: CURRENT_GEMINI_LIVE_MODEL,
    source: "Gemini API changelog; Google's notice of 2025-10 (sohzm/cheating-daddy #154)",
  },
];

/** The first moment a model is no longer served: the day after its day, or its month's end. */
function shutdownAt(shutdown: string): number {
  const [year, month, day] = shutdown.split("-").map(Number);
  return day === undefined
    ? Date.UTC(year!, month!, 1) // the first day of the next month
    : Date.UTC(year!, month! - 1, day + 1);
}

/** Its row, by the bare id of `model` (a "models/…" or Vertex path is read to its end). */
export function lifecycleOf(model: string): ModelLifecycle | undefined {
  const bare = model.slice(model.lastIndexOf("/") + 1);
  return GEMINI_LIVE_MODELS.find((row) => row.model === bare);
}

/**
 * What to tell an operator whose sessions ask for `model` at `now`: that it is past its
 * shutdown date (named, with its replacement and the source), or null.
 */
export function shutdownWarning(model: string, now: number): string | null {
  const row = lifecycleOf(model);
  if (row?.shutdown === undefined || now < shutdownAt(row.shutdown)) return null;
  const instead = row.replacement === undefined ? "" : `; use ${row.replacement}`;
  return `the Gemini model ${row.model} is past its shutdown date (${row.shutdown}: ${row.source})${instead}`;
}
