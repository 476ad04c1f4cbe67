import type { ModelEvent } from "../../../src/vocabulary/model.js";

/** Events with audio reduced to its byte length, so expectations stay readable. */
export type EventSummary =
  | Exclude<ModelEvent, { type: "audio_delta" }>
  | { type: "audio_delta"; bytes: number };

export function summarize(events: ModelEvent[]): EventSummary[] {
  return events.map((e) => (e.type === "audio_delta" ? { type: e.type, bytes: e.pcm.length } : e));
}
