import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  BASE,
  Client,
  connect,
  createSession,
  errorOf,
  type Frame,
  httpUrl,
  upgrade,
  withKey,
} from "../support/gateway.js";
import { inLiveSession, playTurn } from "../support/session-flow.js";

/**
 * Caps end a session gracefully: what is in flight finishes (a tool call gets its outcome,
 * the turn its end), the model says goodbye in a turn of its own, then `session_limit` and
 * the session's end.
 */
async function cappedSession(
  limits: Record<string, number>,
  knobs: Record<string, string | number | boolean> = {},
): Promise<{ sessionId: string; client: Client }> {
  const created = await createSession({
    provider: "simulator",
    metadata: { simulator: { timeScale: 0, ...knobs } },
    limits,
  });
  const client = await connect(httpUrl(created.wsUrl));
  expect((await client.next()).type).toBe("ready");
  return { sessionId: created.sessionId, client };
}

/** Every frame until the socket closes: the goodbye, `session_limit`, the end. */
async function framesUntilClosed(client: Client): Promise<Frame[]> {
  const frames: Frame[] = [];
  let closed = false;
  void client.closed.then(() => {
    closed = true;
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      frames.push(await client.next(200));
    } catch {
      if (closed) return frames;
    }
  }
  throw new Error(`the session did not end: ${JSON.stringify(frames)}`);
}

/** As framesUntilClosed, answering client calls (each once) and noting every call. */
async function framesUntilClosedAnswering(client: Client, calls: Frame[]): Promise<Frame[]> {
  const frames: Frame[] = [];
  let closed = false;
  void client.closed.then(() => {
    closed = true;
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    let f: Frame;
    try {
      f = await client.next(200);
    } catch {
      if (closed) return frames;
      continue;
    }
    frames.push(f);
    if (f.type === "tool_call") {
      calls.push(f);
      if (f.runOn === "client")
        client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
    }
  }
  throw new Error(`the session did not end: ${JSON.stringify(frames)}`);
}

/** The close after a cap: a goodbye turn with its text, then session_limit, then ended. */
function expectGracefulEnd(client: Client, frames: Frame[], limit: string): Frame {
  const types = frames.map((f) => (f.type === "status" ? `status:${f.state}` : f.type));
  const goodbye = frames.find((f) => f.type === "user" && f.source === "limit");
  expect(goodbye, JSON.stringify(types)).toBeDefined();
  const turnId = goodbye!.turnId;
  // The goodbye was said and its turn ended before the limit and the end.
  const said = frames.findIndex((f) => f.type === "text" && f.turnId === turnId);
  const ended = frames.findIndex((f) => f.type === "turn_complete" && f.turnId === turnId);
  const limitAt = frames.findIndex((f) => f.type === "session_limit");
  expect(said, JSON.stringify(types)).toBeGreaterThan(-1);
  expect(ended).toBeGreaterThan(said);
  expect(limitAt).toBeGreaterThan(ended);
  expect(frames.slice(limitAt + 1).map((f) => f.type)).toEqual([]);
  expect(client.statuses.at(-1)).toMatchObject({ type: "status", state: "ended" });
  const frame = frames[limitAt]!;
  expect(frame.limit).toBe(limit);
  // The goodbye's instruction is the model's only: no client saw it.
  expect(JSON.stringify(frames)).not.toContain("Say a short, friendly goodbye");
  return frame;
}

async function history(sessionId: string): Promise<{ kind: string; [k: string]: unknown }[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return ((await res.json()) as { events: { kind: string }[] }).events;
}

describe("session caps", { timeout: 20_000 }, () => {
  it("maxTurns: the last turn is answered in full, then a goodbye, session_limit and the end", async () => {
    const { sessionId, client } = await cappedSession({ maxTurns: 2 }, { calls: "*:" });
    await playTurn(client, "hi");
    const second = await playTurn(client, "and another thing");
    expect(second.some((f) => f.type === "text")).toBe(true);
    const rest = await framesUntilClosed(client);
    const limit = expectGracefulEnd(client, [...second, ...rest], "turns");
    expect(limit.value).toBe(2);
    expect((await client.closed).code).toBe(1000);
    const events = await history(sessionId);
    expect(events.filter((e) => e.kind === "session_limit")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ kind: "status", state: "ended" });
  });

  /**
   * Found by the attack of 2026-12-02: the last turn maxTurns allows calls a tool; once, its
   * call was refused as past the cap and the refusal read out. Control: the old refusal.
   */
  async function lastTurnWithATool(refuseOpenTurnCalls: boolean): Promise<Frame[]> {
    const { sessionId, client } = await cappedSession(
      { maxTurns: 2 },
      { calls: "2:lookup_faq;*:" },
    );
    if (refuseOpenTurnCalls)
      await inLiveSession<{ interpreter: { state: { config: { guards: object } } } }>(
        sessionId,
        (live) => {
          const { config } = live.interpreter.state;
          config.guards = { ...config.guards, capSparesOpenTurn: false };
        },
      );
    await playTurn(client, "hi");
    const second = await playTurn(client, "what are your opening hours faq");
    const rest = await framesUntilClosed(client);
    expectGracefulEnd(client, [...second, ...rest], "turns");
    return second;
  }

  it("maxTurns: the last turn's own tool call runs and its answer is said (found by the attack)", async () => {
    const second = await lastTurnWithATool(false);
    const result = second.find((f) => f.type === "tool_result" && f.name === "lookup_faq");
    expect(result?.error).toBeUndefined();
    const said = second
      .filter((f) => f.type === "text")
      .map((f) => f.text)
      .join("");
    expect(said).toContain("We are open Monday to Friday");
    expect(said).not.toContain("refused");
  });

  it("control: refusing the open turn's calls too, the refusal is read out instead", async () => {
    const second = await lastTurnWithATool(true);
    const result = second.find((f) => f.type === "tool_result" && f.name === "lookup_faq");
    expect(result?.error).toMatch(/reached its limit/);
    const said = second
      .filter((f) => f.type === "text")
      .map((f) => f.text)
      .join("");
    expect(said).toContain("refused");
  });

  it("maxToolCalls: the call in flight finishes and is spoken before the goodbye", async () => {
    const { sessionId, client } = await cappedSession(
      { maxToolCalls: 1 },
      { calls: "1:get_user_profile;*:" },
    );
    client.send({ type: "text", text: "who am I?" });
    // The client call stays unanswered a while: the cap (reached as it began) waits for it.
    const call = await client.next(10_000).then(async function seek(f): Promise<Frame> {
      return f.type === "tool_call" ? f : seek(await client.next(10_000));
    });
    await new Promise((r) => setTimeout(r, 300));
    client.send({ type: "tool_result", callId: call.callId, result: { name: "Ada", plan: "pro" } });
    const frames = await framesUntilClosed(client);
    const resultAt = frames.findIndex((f) => f.type === "tool_result" && f.callId === call.callId);
    expect(resultAt).toBeGreaterThan(-1);
    expect(frames.findIndex((f) => f.type === "session_limit")).toBeGreaterThan(resultAt);
    const limit = expectGracefulEnd(client, frames, "tool_calls");
    expect(limit.value).toBe(1);
    // One call, one outcome.
    const events = await history(sessionId);
    expect(events.filter((e) => e.kind === "tool_call")).toHaveLength(1);
    expect(events.filter((e) => e.kind === "tool_result")).toHaveLength(1);
  });

  it("maxDurationSeconds: reached mid-call, the call finishes first", async () => {
    const { client } = await cappedSession(
      { maxDurationSeconds: 1 },
      { calls: "1:get_user_profile;*:" },
    );
    client.send({ type: "text", text: "who am I?" });
    const call = await client.next(10_000).then(async function seek(f): Promise<Frame> {
      return f.type === "tool_call" ? f : seek(await client.next(10_000));
    });
    // The duration is up while the call is still the client's to answer.
    await new Promise((r) => setTimeout(r, 1_500));
    client.send({ type: "tool_result", callId: call.callId, result: { name: "Ada", plan: "pro" } });
    const frames = await framesUntilClosed(client);
    expect(frames.findIndex((f) => f.type === "tool_result")).toBeLessThan(
      frames.findIndex((f) => f.type === "session_limit"),
    );
    const limit = expectGracefulEnd(client, frames, "duration");
    expect(limit.value).toBeGreaterThanOrEqual(1);
  });

  it("maxCostUsd: the turn whose usage reached it ends as it would, then the goodbye", async () => {
    const { sessionId, client } = await cappedSession({ maxCostUsd: 0.000001 }, { calls: "*:" });
    const first = await playTurn(client, "hi");
    const rest = await framesUntilClosed(client);
    const limit = expectGracefulEnd(client, [...first, ...rest], "cost");
    expect(limit.value).toBeGreaterThanOrEqual(0.000001);
    const session = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      headers: withKey(),
    });
    const body = (await session.json()) as { connection: string; cost: { usd: number } };
    expect(body.connection).toBe("ended");
    expect(body.cost.usd).toBeGreaterThanOrEqual(0.000001);
  });

  it("a line after the cap is refused with a clear error; the goodbye still comes", async () => {
    const { client } = await cappedSession({ maxToolCalls: 1 }, { calls: "1:get_user_profile;*:" });
    client.send({ type: "text", text: "who am I?" });
    const call = await client.next(10_000).then(async function seek(f): Promise<Frame> {
      return f.type === "tool_call" ? f : seek(await client.next(10_000));
    });
    // The cap was reached as the call began: the session is closing.
    client.send({ type: "text", text: "one more?" });
    const refusal = await client.next(5_000);
    expect(refusal).toMatchObject({ type: "error", code: "session_limit", fatal: false });
    client.send({ type: "tool_result", callId: call.callId, result: { name: "Ada" } });
    const frames = await framesUntilClosed(client);
    expectGracefulEnd(client, frames, "tool_calls");
    expect(frames.filter((f) => f.type === "user").map((f) => f.source)).toEqual(["limit"]);
  });

  it("maxTurns: lines sent while a turn is open never open more turns than the cap (found by the attack)", async () => {
    const { sessionId, client } = await cappedSession(
      { maxTurns: 2 },
      { calls: "*:", timeScale: 0.3 },
    );
    // Five lines at once: two turns, three refusals.
    for (const text of ["line a", "line b", "line c", "line d", "line e"])
      client.send({ type: "text", text });
    const frames = await framesUntilClosed(client);
    const users = frames.filter((f) => f.type === "user");
    expect(users.map((f) => f.source ?? "text")).toEqual(["text", "text", "limit"]);
    expect(frames.filter((f) => f.type === "error" && f.code === "session_limit")).toHaveLength(3);
    expectGracefulEnd(client, frames, "turns");
    const events = await history(sessionId);
    expect(events.find((e) => e.kind === "session_limit")).toMatchObject({ value: 2 });
  });

  it("maxDurationSeconds on a session nobody connects to: it ends at its cap, no goodbye paid for (found by the attack)", async () => {
    const created = await createSession({
      provider: "simulator",
      metadata: { simulator: { timeScale: 0 } },
      limits: { maxDurationSeconds: 1 },
    });
    const stub = env.SESSION.get(env.SESSION.idFromName(created.sessionId));
    // The object's alarm is what wakes it (a read takes no step): it fires at the cap.
    type Body = {
      connection: string;
      closing: { record: { endedBy: string; limit: { limit: string } } };
    };
    let body: Body | undefined;
    for (let i = 0; i < 60 && body?.connection !== "ended"; i++) {
      await new Promise((r) => setTimeout(r, 100));
      // Run at once if the runtime has not yet (it fires alarms itself, on time).
      if (i === 15) await runDurableObjectAlarm(stub);
      const res = await exports.default.fetch(`${BASE}/v1/sessions/${created.sessionId}`, {
        headers: withKey(),
      });
      body = (await res.json()) as Body;
    }
    expect(body!.connection).toBe("ended");
    expect(body!.closing.record).toMatchObject({ endedBy: "limit", limit: { limit: "duration" } });
    // No model connection was opened for a goodbye nobody would hear.
    const events = await history(created.sessionId);
    expect(events.map((e) => e.kind)).toEqual(["session_limit", "status"]);
    const token = await exports.default.fetch(`${BASE}/v1/sessions/${created.sessionId}/token`, {
      method: "POST",
      headers: withKey(),
    });
    expect(token.status).toBe(410);
  });

  it("a call past maxToolCalls is liveline's to answer: no client is asked to run it (found by the attack)", async () => {
    const { sessionId, client } = await cappedSession(
      { maxToolCalls: 1 },
      { calls: "1:suggest_topics,get_user_profile;*:" },
    );
    client.send({ type: "text", text: "hello" });
    const calls: Frame[] = [];
    const frames = await framesUntilClosedAnswering(client, calls);
    const refused = calls.find((f) => f.name === "get_user_profile")!;
    expect(refused.runOn).toBe("server");
    expect(
      frames.find((f) => f.type === "tool_result" && f.callId === refused.callId),
    ).toMatchObject({ error: expect.stringContaining("at most 1 tool calls") });
    const events = await history(sessionId);
    expect(events.filter((e) => e.kind === "tool_result")).toHaveLength(2);
  });

  it("a cap of 0 or below, or one above the agent's, is refused at creation naming it", async () => {
    for (const [limits, named] of [
      [{ maxTurns: 0 }, "limits.maxTurns"],
      [{ maxCostUsd: -1 }, "limits.maxCostUsd"],
      [{ maxDurationSeconds: 0 }, "limits.maxDurationSeconds"],
      [{ maxToolCalls: 1.5 }, "limits.maxToolCalls"],
      [{ maxTurn: 3 }, "maxTurn"],
    ] as const) {
      const res = await exports.default.fetch(`${BASE}/v1/sessions`, {
        method: "POST",
        headers: { ...withKey(), "Content-Type": "application/json" },
        body: JSON.stringify({ provider: "simulator", limits }),
      });
      expect(res.status, JSON.stringify(limits)).toBe(400);
      const error = await errorOf(res);
      expect(error.code).toBe("bad_request");
      expect(error.message).toContain(named);
    }
  });
});

describe("a duration cap reached during a greeting with tool calls (issue 50)", () => {
  /**
   * One session with `maxDurationSeconds: cap`, one "hi": the greeting speaks past the cap and
   * calls its tools around it. Every durable frame the log holds was offered live, in order;
   * every turn ended once; one `session_limit`, one `ended`.
   */
  async function capDuringGreeting(cap: number): Promise<string[]> {
    const created = await createSession({
      provider: "simulator",
      metadata: { simulator: { timeScale: 1, msPerWord: 300 } },
      limits: { maxDurationSeconds: cap },
    });
    const res = await upgrade(httpUrl(created.wsUrl));
    const client = new Client(res.webSocket!, true);
    const problems: string[] = [];
    const live: Frame[] = [];
    let closed = false;
    void client.closed.then(() => {
      closed = true;
    });
    expect((await client.next()).type).toBe("ready");
    client.send({ type: "text", text: "hi" });
    const deadline = Date.now() + (cap + 20) * 1000;
    while (!closed && Date.now() < deadline) {
      let f: Frame;
      try {
        f = await client.next(250);
      } catch {
        continue;
      }
      live.push(f);
      if (f.type === "tool_call" && f.runOn === "client")
        client.send({ type: "tool_result", callId: f.callId, result: { shown: true } });
      if (f.type === "error") problems.push(`cap ${cap}: error frame ${f.code}`);
    }
    if (!closed) problems.push(`cap ${cap}: the session did not end`);
    const events = await history(created.sessionId);
    const liveSeqs = live.flatMap((f) => (typeof f.seq === "number" ? [f.seq] : []));
    const logSeqs = events.map((e) => e.seq as number);
    if (JSON.stringify(liveSeqs) !== JSON.stringify(logSeqs))
      problems.push(`cap ${cap}: live seqs ${liveSeqs} but the log holds ${logSeqs}`);
    const count = (kind: string, pred: (e: { kind: string; [k: string]: unknown }) => boolean) =>
      events.filter((e) => e.kind === kind && pred(e)).length;
    if (count("session_limit", () => true) !== 1)
      problems.push(`cap ${cap}: ${count("session_limit", () => true)} session_limit`);
    if (count("status", (e) => e.state === "ended") !== 1)
      problems.push(`cap ${cap}: ${count("status", (e) => e.state === "ended")} ended`);
    for (const user of events.filter((e) => e.kind === "user")) {
      const ends = events.filter(
        (e) => (e.kind === "turn_complete" || e.kind === "interrupted") && e.turnId === user.turnId,
      ).length;
      if (ends !== 1) problems.push(`cap ${cap}: turn ${user.turnId} ended ${ends} times`);
    }
    if (problems.length > 0)
      problems.push(
        events
          .map((e) => `${e.seq}:${e.kind}/${e.turnId ?? ""}${e.reason ?? ""}${e.state ?? ""}`)
          .join(" "),
      );
    return problems;
  }

  it("20 sessions, caps at 5, 6 and 7 s: each turn ends once, one session_limit, one ended, every seq live", {
    timeout: 60_000,
  }, async () => {
    const caps = Array.from({ length: 20 }, (_, i) => 5 + (i % 3));
    const problems = (await Promise.all(caps.map((cap) => capDuringGreeting(cap)))).flat();
    expect(problems).toEqual([]);
  });
});
