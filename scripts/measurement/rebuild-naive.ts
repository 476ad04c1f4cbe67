import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import { type ContextItem, type RebuiltContext, toolResponse } from "../../src/vocabulary/model.js";

/**
 * How a framework rebuilds history when it has no validator — kept only to measure the
 * failure liveline prevents (ADK 1.32): a live tool call is stored as text, so after a
 * reconnect the context holds the tool's response without its call, and every later
 * rebuild carries that orphan. Never used outside the naive relay.
 */
export function rebuildContextNaive(events: readonly HistoryEvent[]): RebuiltContext {
  const items: ContextItem[] = [];
  for (const e of events) {
    switch (e.kind) {
      case "user":
        items.push({ role: "user", text: e.text });
        break;
      case "model_text":
      case "transcript":
        items.push({ role: "model", text: e.text });
        break;
      case "tool_call":
        items.push({ role: "model", text: `[called ${e.name}]` });
        break;
      case "tool_result":
        items.push({ role: "tool_results", results: [toolResponse(e.callId, e.name, e)] });
        break;
      default:
        break;
    }
  }
  return { items };
}
