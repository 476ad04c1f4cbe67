/**
 * Tools from a remote MCP server: the measurement worker's `desk` agent declares the real MCP
 * server the global setup starts (scripts/lib/mcp-test-server.mjs: the official SDK over
 * Streamable HTTP, on localhost). The simulator calls its tools by their model names
 * (`desk__<tool>`); every call goes through liveline's ledger — recorded once before it runs,
 * one outcome — and liveline's cancellation reaches the server as MCP's.
 */

import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import {
  BASE,
  type Client,
  connect,
  createSession,
  type Frame,
  httpUrl,
  withKey,
} from "../support/gateway.js";
import { framesUntilTurnEnds } from "../support/session-flow.js";

const SERVER = new URL(inject("mcpDeskUrl")).origin;
/** Secrets the server's address and headers carry: never to be seen in a frame or a row. */
const SECRETS = [
  String(env.MCP_DESK_TOKEN),
  new URL(inject("mcpDeskUrl")).searchParams.get("apikey")!,
];
const expectNoSecret = (value: unknown) => {
  for (const secret of SECRETS) expect(JSON.stringify(value)).not.toContain(secret);
};
const stubOf = (sessionId: string) => env.SESSION.get(env.SESSION.idFromName(sessionId));

interface ServerCall {
  id: number;
  name: string;
  args: Record<string, unknown>;
  cancelled: boolean;
  finished: boolean;
  key: string | null;
}

/** What the MCP server saw (its control route). */
async function served(): Promise<{
  calls: ServerCall[];
  effects: { orders: number; notices: number };
  listings: number;
  cancelledRequests: unknown[];
}> {
  return (await (await fetch(`${SERVER}/_test/calls`)).json()) as {
    calls: ServerCall[];
    effects: { orders: number; notices: number };
    listings: number;
    cancelledRequests: unknown[];
  };
}

async function control(
  route: "listing" | "slow" | "add-tool" | "order-ms",
  body: Record<string, unknown>,
): Promise<void> {
  const res = await fetch(`${SERVER}/_test/${route}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(204);
}

/**
 * A desk session; `tenant` goes in its headers (a per-user key), so a fresh tenant lists the
 * server afresh rather than from a recent listing.
 */
async function deskSession(
  knobs: Record<string, string | number>,
  tenant = "acme",
): Promise<{ sessionId: string; client: Client; wsUrl: string }> {
  const created = await createSession({
    agent: "desk",
    provider: "simulator",
    metadata: { tenant, simulator: { timeScale: 0, ...knobs } },
  });
  const client = await connect(httpUrl(created.wsUrl));
  expect((await client.next()).type).toBe("ready");
  return { sessionId: created.sessionId, client, wsUrl: created.wsUrl };
}

async function historyOf(sessionId: string): Promise<Record<string, unknown>[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return ((await res.json()) as { events: Record<string, unknown>[] }).events;
}

async function timelineOf(
  sessionId: string,
): Promise<{ kind: string; detail?: Record<string, unknown> }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string; detail?: Record<string, unknown> }[] })
    .rows;
}

/** One call and one outcome per id, in the record. */
function expectOneOutcomePerCall(events: Record<string, unknown>[]): void {
  const calls = events.filter((e) => e.kind === "tool_call").map((e) => e.callId);
  expect(new Set(calls).size).toBe(calls.length);
  for (const id of calls)
    expect(
      events.filter(
        (e) => (e.kind === "tool_result" || e.kind === "tool_cancelled") && e.callId === id,
      ),
      String(id),
    ).toHaveLength(1);
}

const since = (before: ServerCall[], after: ServerCall[]) => after.slice(before.length);

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("tools from an MCP server", { timeout: 30_000 }, () => {
  it("are listed at the start and declared as desk__<tool>; a denied tool is not", async () => {
    const { sessionId, client } = await deskSession({ calls: "1:desk__admin_reset" });
    client.send({ type: "text", text: "reset everything" });
    const frames = await framesUntilTurnEnds(client, "t1");
    // admin_reset is the server's, but denied: never declared, so never called.
    expect(frames.filter((f) => f.type === "tool_call")).toEqual([]);
    const rows = await timelineOf(sessionId);
    expect(rows.find((r) => r.kind === "MCP_TOOLS")?.detail).toMatchObject({
      agent: "desk",
      server: "desk",
      tools: 8,
    });
    client.close();
  });

  it("a fast tool is called once, its result recorded once, sent once and spoken", async () => {
    const before = (await served()).calls;
    const { sessionId, client } = await deskSession({ calls: "1:desk__lookup_order" });
    client.send({ type: "text", text: "where is order 42?" });
    const frames = await framesUntilTurnEnds(client, "t1");
    const call = frames.find((f) => f.type === "tool_call")!;
    expect(call).toMatchObject({ name: "desk__lookup_order", runOn: "server" });
    const results = frames.filter((f) => f.type === "tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      callId: call.callId,
      result: {
        text: "Order 42: shipped on Monday.",
        structured: { status: "shipped" },
      },
    });
    // The model spoke the result.
    const said = frames
      .filter((f) => f.type === "text")
      .map((f) => f.text)
      .join("");
    expect(said).toContain("shipped");
    const seen = since(before, (await served()).calls);
    expect(seen.map((c) => c.name)).toEqual(["lookup_order"]);
    expectOneOutcomePerCall(await historyOf(sessionId));
    client.close();
  });

  it("a failing tool: the model hears the server's error (isError, and a tool that throws)", async () => {
    const { sessionId, client } = await deskSession({
      calls: "1:desk__broken_tool;2:desk__crashing_tool;*:",
    });
    client.send({ type: "text", text: "check the warehouse" });
    const first = await framesUntilTurnEnds(client, "t1");
    expect(first.find((f) => f.type === "tool_result")).toMatchObject({
      name: "desk__broken_tool",
      error: "desk__broken_tool failed: the warehouse database is offline",
    });
    expect(
      first
        .filter((f) => f.type === "text")
        .map((f) => f.text)
        .join(""),
    ).toContain("offline");
    client.send({ type: "text", text: "and again" });
    const second = await framesUntilTurnEnds(client, "t2");
    expect(second.find((f) => f.type === "tool_result")).toMatchObject({
      name: "desk__crashing_tool",
      error: expect.stringContaining("crashing_tool exploded"),
    });
    expectOneOutcomePerCall(await historyOf(sessionId));
    client.close();
  });

  it("a result too large to keep is an error the model hears: the call still has its one outcome (found by the attack)", async () => {
    const { sessionId, client } = await deskSession({ calls: "1:desk__huge_result;*:" });
    client.send({ type: "text", text: "the whole catalogue" });
    const frames = await framesUntilTurnEnds(client, "t1");
    expect(frames.find((f) => f.type === "tool_result")).toMatchObject({
      name: "desk__huge_result",
      error: expect.stringMatching(/too large \(\d+ bytes; a result may be at most 262144\)/),
    });
    expectOneOutcomePerCall(await historyOf(sessionId));
    client.close();
  });

  it("what a careless server echoes of its key, in an error, never reaches a frame, the log or the model (found by the attack)", async () => {
    const { sessionId, client } = await deskSession({ calls: "1:desk__echo_auth;*:" });
    client.send({ type: "text", text: "who am I?" });
    const frames = await framesUntilTurnEnds(client, "t1");
    const result = frames.find((f) => f.type === "tool_result")!;
    expect(result.error).toMatch(/refused the request with .*<hidden>/);
    expectNoSecret(frames);
    expectNoSecret(await historyOf(sessionId));
    expectNoSecret(await timelineOf(sessionId));
    client.close();
  });

  it("a tool the MCP schema refuses costs only itself: the server's other tools are declared (found by the attack)", async () => {
    await control("listing", { mode: "bad_tool" });
    try {
      const tenant = `tenant-${crypto.randomUUID()}`;
      const { sessionId, client } = await deskSession({ calls: "1:desk__lookup_order" }, tenant);
      client.send({ type: "text", text: "order 9?" });
      const frames = await framesUntilTurnEnds(client, "t1");
      expect(frames.filter((f) => f.type === "tool_call")).toHaveLength(1);
      const skipped = (await timelineOf(sessionId)).filter((r) => r.kind === "MCP_TOOL_SKIPPED");
      expect(skipped.map((r) => r.detail!.tool).sort()).toEqual(["schemaless_tool", "weird_tool"]);
      for (const row of skipped) expect(String(row.detail!.reason).length).toBeLessThan(250);
      client.close();
    } finally {
      await control("listing", { mode: "ok" });
    }
  });

  it("a session ended mid-call tells the server: MCP's cancellation (found by the attack)", async () => {
    await control("slow", { ms: 2_500 });
    const before = (await served()).calls;
    const { sessionId, client } = await deskSession({ calls: "1:desk__slow_report;*:" });
    client.send({ type: "text", text: "the audit report" });
    await until(served, (s) => since(before, s.calls).length === 1, "the server got the call");
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      method: "DELETE",
      headers: withKey(),
    });
    expect(res.status).toBe(200);
    const seen = await until(
      served,
      (s) => since(before, s.calls)[0]?.cancelled === true,
      "the server saw the cancellation",
    );
    expect(since(before, seen.calls)).toMatchObject([{ name: "slow_report", finished: false }]);
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("a storm of tools/list_changed costs a listing or two, not one each (found by the attack)", async () => {
    const tenant = `tenant-${crypto.randomUUID()}`;
    const { sessionId, client } = await deskSession({ calls: "" }, tenant);
    await until(
      () => timelineOf(sessionId),
      (rs) => rs.some((r) => r.kind === "MCP_TOOLS"),
      "listed",
    );
    for (let i = 0; i < 15; i++)
      await control("add-tool", { name: `storm_${crypto.randomUUID().slice(0, 6)}` });
    await new Promise((r) => setTimeout(r, 2_500));
    const rows = await timelineOf(sessionId);
    expect(rows.filter((r) => r.kind === "MCP_LIST_CHANGED").length).toBeLessThanOrEqual(2);
    expect(rows.filter((r) => r.kind === "MCP_TOOLS").length).toBeLessThanOrEqual(3);
    client.close();
  });

  it("a slow tool cut by a barge-in: the server sees MCP's cancellation, the late result is never sent", async () => {
    await control("slow", { ms: 2_500 });
    const before = (await served()).calls;
    // race 0: the model waits for its blocking call, so speech cuts its reply and cancels it.
    const { sessionId, client } = await deskSession({ calls: "1:desk__slow_report;*:", race: 0 });
    client.send({ type: "text", text: "the quarterly report please" });
    let call: Frame | undefined;
    while (call === undefined) {
      const f = await client.next(5_000);
      if (f.type === "tool_call") call = f;
    }
    await until(served, (s) => since(before, s.calls).length === 1, "the server got the call");
    // The caller speaks over it (loud PCM16, longer than the simulator's barge-in).
    for (let i = 0; i < 20; i++) client.send(new Uint8Array(640).fill(0x7f).buffer);
    const cancelled = await until(
      served,
      (s) => since(before, s.calls)[0]?.cancelled === true,
      "the server saw the cancellation",
    );
    expect(since(before, cancelled.calls)).toMatchObject([
      { name: "slow_report", finished: false },
    ]);
    // Past the tool's own time: no late result, ever.
    await new Promise((r) => setTimeout(r, 3_000));
    const events = await historyOf(sessionId);
    expect(events.filter((e) => e.kind === "tool_result" && e.callId === call!.callId)).toEqual([]);
    expect(
      events.filter((e) => e.kind === "tool_cancelled" && e.callId === call!.callId),
    ).toHaveLength(1);
    expectOneOutcomePerCall(events);
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("a slow tool past its timeout: an error the model hears, and the server sees the cancellation", async () => {
    // slow_report's own timeout is 4 s (the desk agent's policy for it).
    await control("slow", { ms: 6_000 });
    // A session of the tenant lists first: the next one takes its listing and makes its own
    // MCP session at its first call.
    const tenant = `tenant-${crypto.randomUUID()}`;
    const first = await deskSession({ calls: "" }, tenant);
    await until(
      () => timelineOf(first.sessionId),
      (rs) => rs.some((r) => r.kind === "MCP_TOOLS"),
      "listed",
    );
    first.client.close();
    const before = (await served()).calls;
    const { sessionId, client } = await deskSession({ calls: "1:desk__slow_report;*:" }, tenant);
    client.send({ type: "text", text: "the monthly report" });
    const frames = await framesUntilTurnEnds(client, "t1");
    const result = frames.find((f) => f.type === "tool_result")!;
    expect(result).toMatchObject({
      name: "desk__slow_report",
      error: expect.stringMatching(/timed out|timeout/i),
    });
    const seen = await until(
      served,
      (s) => since(before, s.calls)[0]?.cancelled === true,
      "the server saw the cancellation",
    );
    expect(since(before, seen.calls)).toMatchObject([{ name: "slow_report", finished: false }]);
    expectOneOutcomePerCall(await historyOf(sessionId));
    // Only the call was cancelled: never an MCP session's initialize (request 0), answered
    // long before (found by the attack: a call's signal also cancelled its set-up).
    expect(seen.cancelledRequests.length).toBeGreaterThan(0);
    expect(seen.cancelledRequests).not.toContain(0);
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("a call under way when the object restarts is never sent to the server again; its outcome says so", async () => {
    await control("slow", { ms: 2_000 });
    const before = (await served()).calls;
    const { sessionId, client } = await deskSession({ calls: "1:desk__slow_report;*:" });
    client.send({ type: "text", text: "the yearly report" });
    await until(served, (s) => since(before, s.calls).length === 1, "the server got the call");
    await expect(
      runInDurableObject(stubOf(sessionId), (_o, state) => state.abort("simulated crash")),
    ).rejects.toThrow();
    // The next request starts the object again: it closes what the crash left open.
    const events = await until(
      () => historyOf(sessionId),
      (es) => es.some((e) => e.kind === "tool_cancelled"),
      "the interrupted call's outcome",
    );
    expect(events.find((e) => e.kind === "tool_cancelled")).toMatchObject({
      name: "desk__slow_report",
      reason: "restart",
    });
    expectOneOutcomePerCall(events);
    // A reconnected client and a new line: the session goes on; the server got one request.
    const created = (await (
      await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
        method: "POST",
        headers: withKey(),
      })
    ).json()) as { wsUrl: string };
    const again = await connect(httpUrl(created.wsUrl));
    await again.next();
    again.send({ type: "text", text: "thanks" });
    await framesUntilTurnEnds(again, "t2");
    await new Promise((r) => setTimeout(r, 2_500));
    expect(since(before, (await served()).calls).map((c) => c.name)).toEqual(["slow_report"]);
    again.close();
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("progress: clients get tool_progress frames; under progress: say, the model says once it is still working", async () => {
    await control("slow", { ms: 1_800 });
    const { sessionId, client } = await deskSession({ calls: "1:desk__slow_report;*:", race: 1 });
    client.send({ type: "text", text: "the weekly report" });
    const frames = await framesUntilTurnEnds(client, "t1");
    const progress = frames.filter((f) => f.type === "tool_progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({
      name: "desk__slow_report",
      message: expect.stringContaining("still building"),
    });
    const said = frames.filter((f) => f.type === "text").map((f) => String(f.text));
    // Said once, before the result's answer; the result itself once.
    expect(said.join("").match(/still working on that/g)).toHaveLength(1);
    expect(frames.filter((f) => f.type === "tool_result")).toHaveLength(1);
    expect(said.join("")).toContain("report is ready");
    expect(JSON.stringify(frames)).not.toContain("Do not call any tool");
    expectOneOutcomePerCall(await historyOf(sessionId));
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("progress: say: a result that comes while the model says it is still working is still spoken, once", async () => {
    // Paced: the few words take about 2 s to say (8 words, 250 ms each), and the result comes
    // 1.5 s into the call, while they are said (the simulator takes it as new input after them).
    await control("slow", { ms: 1_500 });
    const { sessionId, client } = await deskSession({
      calls: "1:desk__slow_report;*:",
      race: 1,
      timeScale: 1,
      msPerWord: 250,
      latencyMs: 0,
    });
    client.send({ type: "text", text: "the daily report" });
    const frames = await framesUntilTurnEnds(client, "t1");
    const kinds = frames.map((f) => (f.type === "text" ? `text:${String(f.text)}` : f.type));
    const said = frames
      .filter((f) => f.type === "text")
      .map((f) => String(f.text))
      .join("");
    expect(said.match(/still working on that/g), JSON.stringify(kinds)).toHaveLength(1);
    // The result came during those words, and its answer followed them in the same turn.
    const resultAt = frames.findIndex((f) => f.type === "tool_result");
    const stillAt = frames.findIndex(
      (f) => f.type === "text" && /still working/.test(String(f.text)),
    );
    expect(resultAt, JSON.stringify(kinds)).toBeGreaterThan(stillAt);
    expect(said, JSON.stringify(kinds)).toContain("report is ready");
    const events = await historyOf(sessionId);
    expect(events.filter((e) => e.kind === "turn_complete")).toHaveLength(1);
    expectOneOutcomePerCall(events);
    client.close();
    await control("slow", { ms: 3_000 });
  });

  it("a server that says its tools changed is listed again: the new tool is the next session's", async () => {
    const tenant = `tenant-${crypto.randomUUID()}`;
    const { sessionId, client } = await deskSession({ calls: "" }, tenant);
    await until(
      () => timelineOf(sessionId),
      (rs) => rs.some((r) => r.kind === "MCP_TOOLS"),
      "the first listing",
    );
    const name = `report_${crypto.randomUUID().slice(0, 6)}`;
    await control("add-tool", { name });
    const rows = await until(
      () => timelineOf(sessionId),
      (rs) => rs.filter((r) => r.kind === "MCP_TOOLS").length === 2,
      "listed again after list_changed",
    );
    expect(rows.some((r) => r.kind === "MCP_LIST_CHANGED")).toBe(true);
    const [first, second] = rows.filter((r) => r.kind === "MCP_TOOLS");
    expect(Number(second!.detail!.tools)).toBe(Number(first!.detail!.tools) + 1);
    client.close();
    // The tenant's next session lists afresh (the old listing was dropped) and has it.
    const next = await deskSession({ calls: `1:desk__${name}` }, tenant);
    next.client.send({ type: "text", text: "run it" });
    const frames = await framesUntilTurnEnds(next.client, "t1");
    expect(frames.find((f) => f.type === "tool_result")).toMatchObject({
      name: `desk__${name}`,
      result: { text: `${name} done` },
    });
    next.client.close();
  });

  for (const [mode, reason] of [
    ["refuse", /503|down for maintenance/],
    ["malformed", /JSON/],
    ["hang", /in time/],
  ] as const)
    it(`a server that ${mode === "refuse" ? "refuses" : mode === "hang" ? "hangs" : "answers malformed JSON"} at listing costs the session only its tools, with a named row`, async () => {
      await control("listing", { mode });
      try {
        const tenant = `tenant-${crypto.randomUUID()}`;
        const { sessionId, client } = await deskSession({ calls: "1:desk__lookup_order" }, tenant);
        client.send({ type: "text", text: "order 7?" });
        const frames = await framesUntilTurnEnds(client, "t1");
        // The session answered, without the server's tools.
        expect(frames.filter((f) => f.type === "tool_call")).toEqual([]);
        expect(frames.at(-1)).toMatchObject({ type: "turn_complete" });
        const rows = await until(
          () => timelineOf(sessionId),
          (rs) => rs.some((r) => r.kind === "MCP_UNAVAILABLE"),
          "the named row",
        );
        const row = rows.find((r) => r.kind === "MCP_UNAVAILABLE")!;
        expect(row.detail).toMatchObject({ agent: "desk", server: "desk" });
        expect(String(row.detail!.reason)).toMatch(reason);
        // Never the server's URL, its query's key, nor its token.
        expect(JSON.stringify(rows)).not.toContain(SERVER);
        expectNoSecret(rows);
        client.close();
      } finally {
        await control("listing", { mode: "ok" });
      }
      // The next session tries again, and gets the tools.
      const { client } = await deskSession(
        { calls: "1:desk__lookup_order" },
        `tenant-${crypto.randomUUID()}`,
      );
      client.send({ type: "text", text: "order 8?" });
      const frames = await framesUntilTurnEnds(client, "t1");
      expect(frames.filter((f) => f.type === "tool_call")).toHaveLength(1);
      client.close();
    });
});

describe("an MCP call in flight when the session's object restarts", { timeout: 30_000 }, () => {
  /**
   * A desk session calls `tool` (it takes 1.5 s at the server); once the server has the call,
   * the object restarts (the fault injection route: as a deploy resets it); a client comes
   * back and the turn runs its course. What the server saw of that tool since, the side
   * effects it made, and the session's record.
   */
  async function restartMidCall(tool: "place_order" | "send_notice") {
    await control("order-ms", { ms: 1_500 });
    const before = await served();
    const { sessionId, client, wsUrl } = await deskSession({ calls: `1:desk__${tool};*:` });
    client.send({ type: "text", text: "order a pizza" });
    await until(
      () => served(),
      (s) => since(before.calls, s.calls).some((c) => c.name === tool),
      "the server has the call",
    );
    const restarted = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/restart`, {
      method: "POST",
      headers: withKey(),
    });
    expect(restarted.status).toBe(200);
    await client.closed.catch(() => undefined);
    const back = await connect(`${httpUrl(wsUrl)}&resumeFrom=0`);
    const frames = await framesUntilTurnEnds(back, "t1");
    back.close();
    const after = await served();
    return {
      sessionId,
      frames,
      calls: since(before.calls, after.calls).filter((c) => c.name === tool),
      effects: {
        orders: after.effects.orders - before.effects.orders,
        notices: after.effects.notices - before.effects.notices,
      },
      events: await historyOf(sessionId),
    };
  }

  it("idempotent (its server's policy): run again with the same key in _meta, one order placed, its one result spoken", async () => {
    const { sessionId, calls, effects, events, frames } = await restartMidCall("place_order");
    const call = events.find((e) => e.kind === "tool_call")!;
    // Twice at the server, both with the call's own key; one effect.
    expect(calls.map((c) => c.key)).toEqual([
      `${sessionId}:${call.callId}`,
      `${sessionId}:${call.callId}`,
    ]);
    expect(effects.orders).toBe(1);
    expectOneOutcomePerCall(events);
    expect(events.filter((e) => e.kind === "tool_result")).toEqual([
      expect.objectContaining({ callId: call.callId, result: expect.objectContaining({}) }),
    ]);
    expect(events.some((e) => e.kind === "tool_cancelled")).toBe(false);
    const said = frames
      .filter((f) => f.type === "text")
      .map((f) => f.text)
      .join("");
    expect(said).toMatch(/Order A\d+ placed/);
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
  });

  it("not idempotent: not run again, one notice sent; the model hears its outcome is unknown", async () => {
    const { calls, effects, events, frames } = await restartMidCall("send_notice");
    expect(calls).toHaveLength(1);
    expect(effects.notices).toBe(1);
    expectOneOutcomePerCall(events);
    expect(events.filter((e) => e.kind === "tool_cancelled")).toEqual([
      expect.objectContaining({ reason: "restart" }),
    ]);
    const said = frames
      .filter((f) => f.type === "text")
      .map((f) => f.text)
      .join("");
    expect(said).toMatch(/outcome unknown/);
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t1" });
  });
});
