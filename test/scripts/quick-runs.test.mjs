import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/**
 * The quick mode of each measuring command, so they cannot rot: it must start its own
 * `wrangler dev`, print its table and exit 0. Figures are printed, never asserted on, but for
 * repro's GPT-Live rows, whose faults are injected on every trial.
 */
function run(script, args, timeout = 170_000) {
  const res = spawnSync(
    process.execPath,
    [
      "--import",
      "./scripts/lib/ts-resolve.mjs",
      "--experimental-strip-types",
      "--no-warnings",
      `scripts/${script}.mjs`,
      "--quick",
      ...args,
    ],
    { encoding: "utf8", timeout, env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  return { code: res.status, out: `${res.stdout}\n${res.stderr}` };
}

describe("npm run repro / bench / soak, quick", () => {
  it("repro prints its side-by-side table", () => {
    // GPT-Live's turns end after 1.5 s of quiet, which would add about 45 s here: its own
    // rows run in the next test.
    const { code, out } = run("repro", ["--trials", "3", "--providers", "gemini,openai"]);
    expect(out).toContain("| scenario");
    expect(out).toContain("naive relay (control)");
    expect(out).toContain("reconnect after a tool response: session poisoned");
    // A row served by its own wrangler dev (a short MODEL_TIMEOUT_MS).
    expect(out).toContain("a model twice as slow as MODEL_TIMEOUT_MS");
    expect(out).toMatch(/\| openai\s+\|/);
    expect(code, out).toBe(0);
  });

  it("repro's GPT-Live and xAI rows: the naive relay shows each failure, liveline none", () => {
    const { code, out } = run("repro", [
      "--trials",
      "2",
      "--providers",
      "gpt-live,xai",
      "--only",
      "call_delivered_twice,late_result_superseded,call_on_primary_and_sideband,request_refused_call_open,delegation_delivered_twice,bundled_answer_and_call",
    ]);
    // Asserted, unlike the other figures: each fault is injected on every trial (p = 1).
    for (const [label, wire] of [
      ["a function call delivered twice: the tool runs twice", "gpt-live"],
      ["a late tool result after its delegation was superseded: sent to the model", "gpt-live"],
      ["a function call seen on the primary and the sideband: the tool runs twice", "gpt-live"],
      [
        "a line typed while an earlier call waits: the request refused, the line never answered",
        "gpt-live",
      ],
      ["a delegation delivered twice: its call runs twice", "gpt-live"],
      ["an audible answer bundled with a side-effect call: the answer said twice", "xai"],
    ]) {
      expect(out).toMatch(
        new RegExp(`\\| ${label}\\s+\\| ${wire}\\s+\\| 100 % \\(2/2\\)\\s+\\| 0 % \\(0/2\\)`),
      );
    }
    expect(code, out).toBe(0);
  });

  // The bench starts three servers (its own, the idle cost's, the tracing cost's): on a machine
  // loaded to 20 its quick run took over 170 s, and was killed before its last tables.
  it("bench prints latency, phone-call, concurrency, storage, reconnect, long-session, idle, tracing and target tables", {
    timeout: 320_000,
  }, () => {
    const { code, out } = run(
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

  it("soak prints its counts with 0 violations", () => {
    const { code, out } = run("soak", ["--sessions", "8"]);
    expect(out).toMatch(/\| violations\s+\| 0\s+\|/);
    expect(code, out).toBe(0);
  });
});
