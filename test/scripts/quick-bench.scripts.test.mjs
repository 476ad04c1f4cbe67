import { describe, expect, it } from "vitest";
import { run } from "./quick-run.mjs";

describe("npm run bench, quick", () => {
  // The bench starts three servers (its own, the idle cost's, the tracing cost's): on a machine
  // loaded to 20 its quick run took over 170 s, and was killed before its last tables.
  it("bench prints latency, phone-call, concurrency, storage, reconnect, long-session, idle, tracing and target tables", {
    timeout: 320_000,
  }, async () => {
    const { code, out } = await run(
      "bench",
      ["--frames", "50", "--seconds", "2", "--levels", "1,5", "--long", "60"],
      300_000,
    );
    for (const heading of [
      "bare relay DO",
      "transcoding relay DO",
      "phone relay DO",
      "workerd CPU ms per call-second",
      "Each carrier's audio path",
      "each carrier's audio CPU per 20 ms chunk",
      "First reply",
      "carrier stand-in violations over the calls: 0",
      "Concurrency",
      "knee",
      "&replay=batch",
      "A long session",
      "Storage written per turn",
      "transactions / model event",
      "SQLite database bytes",
      "Reconnect",
      "Idle: a session after its turn",
      "billed per idle session-minute",
      "next turn",
      "Tracing and usage writes on vs off",
      "usage rows written for 5 of 5 ended sessions",
      "the same, client socket hibernatable",
      "worst session",
      "the same, streaming sockets (the default)",
      "Targets, from this run",
    ]) {
      expect(out).toContain(heading);
    }
    expect(code, out).toBe(0);
  });
});
