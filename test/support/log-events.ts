import type { HistoryEventBody } from "../../src/vocabulary/log-events.js";

/** Log event bodies the history tests build logs from (unit and workerd alike). */
export const call = (callId: string, turnId = "t1"): HistoryEventBody => ({
  kind: "tool_call",
  turnId,
  callId,
  name: "lookup_faq",
  args: { q: "hours" },
  runOn: "server",
});

export const result = (callId: string, turnId = "t1"): HistoryEventBody => ({
  kind: "tool_result",
  turnId,
  callId,
  name: "lookup_faq",
  result: { answer: "9-5" },
});
