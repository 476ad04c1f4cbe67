import { describe, expect, it } from "vitest";
import { percentiles, summarise, turnLatencies } from "../../src/metering/latency.js";

describe("turn latencies from the timeline", () => {
  const rows = [
    { ms: 0, kind: "CLIENT_CONNECT" },
    { ms: 100, kind: "USER", detail: { turnId: "t1", source: "text" } },
    { ms: 350, kind: "MODEL_AUDIO", detail: { turnId: "t1" } },
    { ms: 400, kind: "MODEL_TEXT", detail: { turnId: "t1" } },
    { ms: 500, kind: "TOOL_CALL", detail: { turnId: "t1", callId: "c1", name: "lookup" } },
    { ms: 520, kind: "TOOL_CALL", detail: { turnId: "t1", callId: "c2", name: "slow" } },
    { ms: 540, kind: "TOOL_RESPONSE", detail: { callId: "c1", name: "lookup", error: false } },
    { ms: 900, kind: "TURN_COMPLETE", detail: { turnId: "t1" } },
    { ms: 1000, kind: "USER", detail: { turnId: "t2", source: "audio" } },
    { ms: 1000, kind: "MODEL_AUDIO", detail: { turnId: "t2" } },
    { ms: 1500, kind: "TOOL_CANCELLED", detail: { callId: "c2", reason: "barge_in" } },
    { ms: 1600, kind: "INTERRUPTED", detail: { turnId: "t2", reason: "barge_in" } },
    { ms: 2000, kind: "USER", detail: { turnId: "t3", source: "text" } },
  ];

  it("measures from the line to the first byte and the turn's end, and each tool's run", () => {
    expect(turnLatencies(rows)).toEqual([
      {
        turnId: "t1",
        source: "text",
        firstByteMs: 250,
        turnMs: 800,
        tools: [
          { callId: "c1", name: "lookup", ms: 40, outcome: "result" },
          { callId: "c2", name: "slow", ms: 980, outcome: "cancelled" },
        ],
      },
      // A spoken turn opens with the reply: no first-byte figure is made up for it.
      { turnId: "t2", source: "audio", firstByteMs: null, turnMs: 600, tools: [] },
      // Still open.
      { turnId: "t3", source: "text", firstByteMs: null, turnMs: null, tools: [] },
    ]);
  });

  it("summarises p50 / p95 by nearest rank over what was measured", () => {
    expect(percentiles([])).toEqual({ count: 0, p50: null, p95: null });
    expect(percentiles([5])).toEqual({ count: 1, p50: 5, p95: 5 });
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentiles(hundred)).toEqual({ count: 100, p50: 50, p95: 95 });
    expect(summarise(turnLatencies(rows))).toEqual({
      firstByteMs: { count: 1, p50: 250, p95: 250 },
      turnMs: { count: 2, p50: 600, p95: 800 },
      toolMs: { count: 2, p50: 40, p95: 980 },
    });
  });
});
