import { exports } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateHistory } from "../../src/history/validate.js";
import type { HistoryEvent } from "../../src/vocabulary/log-events.js";
import {
  BASE,
  type Client,
  connect,
  type Frame,
  httpUrl,
  nested,
  withKey,
} from "../support/gateway.js";
import { simulatorSession } from "../support/session-flow.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

/** What a client can throw at the socket boundary, valid or not. */
type Move =
  | { t: "text"; text: string }
  | { t: "answer_pending" }
  | { t: "answer_again" }
  | { t: "answer_unknown" }
  | { t: "answer_both" }
  | { t: "answer_deep"; depth: number }
  | { t: "audio"; frames: number }
  | { t: "audio_end" }
  | { t: "ping" }
  | { t: "raw"; data: string }
  | { t: "oversized" }
  | { t: "wait"; ms: number };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom("hi", "hours?", "refunds?", "tell me a faq")
      .map((text): Move => ({ t: "text", text })),
  },
  { weight: 3, arbitrary: fc.constant<Move>({ t: "answer_pending" }) },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "answer_again" }) },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "answer_unknown" }) },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "answer_both" }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 60, max: 3000 })
      .map((depth): Move => ({ t: "answer_deep", depth })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 120 }).map((frames): Move => ({ t: "audio", frames })),
  },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "audio_end" }) },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "ping" }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        "not json",
        "[]",
        "{}",
        '{"type":7}',
        '{"type":"nope"}',
        '{"type":"text"}',
        '{"type":"text","text":""}',
        '{"type":"tool_result"}',
      )
      .map((data): Move => ({ t: "raw", data })),
  },
  { weight: 1, arbitrary: fc.constant<Move>({ t: "oversized" }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 150 }).map((ms): Move => ({ t: "wait", ms })) },
);

/** Reads every frame that has arrived, answering nothing; returns when quiet for `ms`. */
async function drain(client: Client, seen: Frame[], ms: number): Promise<void> {
  for (;;) {
    const f = await client.next(ms).catch(() => null);
    if (!f) return;
    seen.push(f);
  }
}

async function historyOf(sessionId: string): Promise<HistoryEvent[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: HistoryEvent[] }).events;
}

/** The history once `lines` typed lines are in it and every user turn has its end, or after 10 s. */
async function settledHistory(sessionId: string, lines: number): Promise<HistoryEvent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = await historyOf(sessionId);
    const typed = events.filter((e) => e.kind === "user" && e.source === "text").length;
    const ended = new Set(
      events.flatMap((e) =>
        e.kind === "turn_complete" || e.kind === "interrupted" ? [e.turnId] : [],
      ),
    );
    const open = events.some((e) => e.kind === "user" && !ended.has(e.turnId));
    if ((typed >= lines && !open) || Date.now() > deadline) return events;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function play(moves: Move[]): Promise<void> {
  const { sessionId, wsUrl, client } = await simulatorSession({ seed: 7 });
  const seen: Frame[] = [];
  const calls = () =>
    seen.flatMap((f) => (f.type === "tool_call" && f.runOn === "client" ? [String(f.callId)] : []));
  const answered = new Set<string>();
  for (const move of moves) {
    await drain(client, seen, 5);
    switch (move.t) {
      case "text":
        client.send({ type: "text", text: move.text });
        break;
      case "answer_pending": {
        const id = calls().find((c) => !answered.has(c));
        if (id) {
          answered.add(id);
          client.send({ type: "tool_result", callId: id, result: { shown: true } });
        }
        break;
      }
      case "answer_again": {
        const id = [...answered][0];
        if (id) client.send({ type: "tool_result", callId: id, result: { again: true } });
        break;
      }
      case "answer_unknown":
        client.send({ type: "tool_result", callId: "never-issued", result: {} });
        break;
      case "answer_both": {
        const id = calls()[0] ?? "none";
        client.send({ type: "tool_result", callId: id, result: { a: 1 }, error: "both" });
        break;
      }
      case "answer_deep": {
        const id = calls().find((c) => !answered.has(c)) ?? "none";
        client.send({ type: "tool_result", callId: id, result: nested(move.depth) });
        break;
      }
      case "audio":
        for (let i = 0; i < move.frames; i++) client.send(new ArrayBuffer(640));
        break;
      case "audio_end":
        client.send({ type: "audio_end" });
        break;
      case "ping":
        client.send({ type: "ping" });
        break;
      case "raw":
        client.send(move.data);
        break;
      case "oversized":
        client.send({ type: "text", text: "x".repeat(300_000) });
        break;
      case "wait":
        await new Promise((r) => setTimeout(r, move.ms));
        break;
      default: {
        const unreachable: never = move;
        throw new Error(`unknown move ${JSON.stringify(unreachable)}`);
      }
    }
  }
  // Answer what is still pending, then let the session settle.
  await drain(client, seen, 200);
  for (const id of calls()) {
    if (!answered.has(id)) client.send({ type: "tool_result", callId: id, result: { late: true } });
  }
  await drain(client, seen, 600);

  // The log is valid, every user turn ended exactly once, and it reads back every way. A line
  // sent over the user's audio is held until that speech could have ended (seconds): the
  // session has settled when every line is recorded and every user turn has its end (or
  // never, and the checks below fail).
  const lines = moves.filter((m) => m.t === "text").length;
  const events = await settledHistory(sessionId, lines);
  expect(validateHistory(events)).toEqual([]);
  const ends = new Map<string, number>();
  for (const e of events)
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId, (ends.get(e.turnId) ?? 0) + 1);
  for (const e of events) if (e.kind === "user") expect(ends.get(e.turnId), e.turnId).toBe(1);
  const timeline = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  expect(timeline.status).toBe(200);
  const replay = await connect(`${httpUrl(wsUrl)}&resumeFrom=0`);
  const replayed: Frame[] = [];
  await drain(replay, replayed, 300);
  // (The test client keeps status frames aside.)
  const seqs = [...replayed, ...replay.statuses]
    .flatMap((f) => (typeof f.seq === "number" ? [f.seq] : []))
    .sort((a, b) => a - b);
  expect(seqs).toEqual(events.map((e) => e.seq));
  replay.close();
  client.close();
}

// Issue 9.
describe("the socket boundary under random client frames", () => {
  it(`keeps the log valid, every turn ended once, history and replay answering (${RUNS} sequences)`, {
    timeout: 240_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(moveArb, { minLength: 3, maxLength: 14 }), (moves) => play(moves)),
      { numRuns: RUNS, seed: 9 },
    );
  });
});
