/**
 * The session's subrequests against SUBREQUEST_BUDGET (src/session/subrequests.ts): counted by
 * kind, a row when near (80 %) and one when spent, each once; near it, what can wait (trace
 * batches, progress reports) is shed and counted, while the rest is only counted; attempts
 * waiting for their headers are counted while they wait.
 */
import { describe, expect, it } from "vitest";
import { NEAR_SHARE, SubrequestMeter } from "../../src/session/subrequests.js";

function meter(budget: number) {
  const rows: { kind: string; detail: Record<string, unknown> }[] = [];
  return {
    rows,
    meter: new SubrequestMeter(budget, (kind, detail) => rows.push({ kind, detail })),
  };
}

describe("SubrequestMeter", () => {
  it("counts by kind; says once when the budget is near and once when it is spent", () => {
    const { meter: m, rows } = meter(10);
    for (let i = 0; i < 7; i++) m.count("mcp");
    expect(rows).toEqual([]);
    m.count("model"); // the 8th: 80 %
    expect(rows).toEqual([{ kind: "SUBREQUESTS_NEAR", detail: { count: 8, budget: 10 } }]);
    m.count("usage");
    m.count("traces"); // the 10th: spent
    m.count("mcp");
    expect(rows.map((r) => r.kind)).toEqual(["SUBREQUESTS_NEAR", "SUBREQUESTS_OVER"]);
    expect(m.stats()).toMatchObject({
      budget: 10,
      total: 11,
      byKind: { model: 1, mcp: 8, usage: 1, traces: 1, call: 0, carrier: 0 },
    });
    expect(NEAR_SHARE).toBe(0.8);
  });

  it("sheds what can wait once near (counted), never before; the control: far from the budget, all of it goes", () => {
    const { meter: m } = meter(100);
    for (let i = 0; i < 79; i++) m.count("mcp");
    expect(m.admit("traces")).toBe(true);
    expect(m.admit("progress")).toBe(true);
    m.count("mcp");
    expect(m.admit("traces")).toBe(false);
    expect(m.admit("progress")).toBe(false);
    expect(m.admit("progress")).toBe(false);
    expect(m.stats().shed).toEqual({ traces: 1, progress: 2 });
  });

  it("counts an attempt as waiting until it settles, and the most at once", async () => {
    const { meter: m } = meter(100);
    let answer: (v: string) => void = () => {};
    const first = m.track("model", new Promise<string>((ok) => (answer = ok)));
    const second = m.track("call", Promise.reject(new Error("refused"))).catch(() => "refused");
    expect(m.stats()).toMatchObject({ waiting: 2, mostWaiting: 2 });
    expect(await second).toBe("refused");
    answer("open");
    expect(await first).toBe("open");
    expect(m.stats()).toMatchObject({ waiting: 0, mostWaiting: 2, total: 2 });
    const fetched = m.fetcher("mcp", async () => new Response("ok"));
    await fetched("https://mcp.example/");
    expect(m.stats().byKind.mcp).toBe(1);
  });
});
