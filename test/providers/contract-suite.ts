/**
 * One contract, every provider (hono's runtime-tests pattern): the same scenarios, the same
 * client-visible outcome, run against the simulator's face for each provider's wire. Each
 * provider runs it from its own room (test/providers/<name>/contract.workers.test.ts), so the
 * providers' runs go in parallel. A provider skips a scenario only with a written reason.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, connect, type Frame, httpUrl, withKey } from "../support/gateway.js";
import {
  framesUntilTurnEnds,
  playTurn,
  simulatorSession,
  turnEndsOf,
} from "../support/session-flow.js";

export interface ProviderUnderContract {
  name: string;
  knobs: Record<string, string | number>;
  /** A handoff opens a new connection (its setup is fixed once sent), or updates in place. */
  handoff: "new connection" | "in place";
  /** No turns on the wire: an utterance ends complete; nothing of it can be cut (docs/PROTOCOL-REFERENCE.md). */
  turnless: boolean;
  /** Scenario name → why this provider cannot run it. */
  skips: Record<string, string>;
}

/**
 * The model's words to the client: `text` on a model that writes, `transcript` on a voice
 * model (GPT-Live speaks only). The scenarios read the words, whichever frame carries them.
 */
const isWords = (f: Frame) => f.type === "text" || f.type === "transcript";
const wordsOf = (frames: Frame[]) => frames.filter(isWords).map((f) => f.text as string);
/** A reply generated twice: the same words forwarded twice, or more than one turn end. */
function repeated(frames: Frame[]): boolean {
  const words = wordsOf(frames);
  return new Set(words).size !== words.length || turnEndsOf(frames).length !== 1;
}

interface History {
  events: Record<string, unknown>[];
  turns: { turnId: string; agents: string[] }[];
}

async function fullHistoryOf(sessionId: string): Promise<History> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  return (await res.json()) as History;
}

async function historyOf(sessionId: string): Promise<Record<string, unknown>[]> {
  return (await fullHistoryOf(sessionId)).events;
}

/**
 * A watchdog period of the test's own for one session. MODEL_TIMEOUT_MS is a Worker setting
 * (15 s in this project), with no per-session option: the test sets the session's core config
 * in its running object, after the client joined and before its first turn (no watchdog is
 * armed before a turn opens). It reaches into the object, so a rename there breaks it loudly.
 */
async function setModelTimeout(sessionId: string, ms: number): Promise<void> {
  await setCoreTimes(sessionId, { modelTimeoutMs: ms });
}

/** The session's core config's times, set in its running object (as setModelTimeout does). */
async function setCoreTimes(
  sessionId: string,
  times: { modelTimeoutMs?: number; emptyReplyWaitMs?: number },
): Promise<void> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    const live = (
      instance as {
        running: {
          live: {
            interpreter: {
              state: { config: { modelTimeoutMs: number; emptyReplyWaitMs: number } };
            };
          } | null;
        };
      }
    ).running.live;
    if (!live) throw new Error("the session's object holds no running session");
    Object.assign(live.interpreter.state.config, times);
  });
}

async function timelineKinds(sessionId: string): Promise<string[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
}

/** Frames in a line each, for a failure's message. */
const summary = (frames: Frame[]) =>
  frames
    .map((f) => `${f.type} ${f.turnId ?? ""} ${f.name ?? f.text ?? f.code ?? f.reason ?? ""}`)
    .join("\n");

/**
 * One turn as `playTurn` collected it, checked: its line opened one turn, the model's text for
 * it came before its one end, a `turn_complete`, and no `error` frame came. Its answer's text.
 */
function answeredOnce(frames: Frame[], line: string): string {
  const user = frames.find((f) => f.type === "user" && f.text === line);
  expect(user, JSON.stringify(frames)).toBeDefined();
  const own = frames.filter((f) => f.turnId === user!.turnId);
  expect(
    turnEndsOf(own).map((f) => f.type),
    summary(frames),
  ).toEqual(["turn_complete"]);
  const end = own.findIndex((f) => f.type === "turn_complete");
  const texts = own.flatMap((f, i) => (isWords(f) ? [i] : []));
  expect(texts.length).toBeGreaterThan(0);
  expect(Math.max(...texts)).toBeLessThan(end);
  // Nothing of any turn but this one, and no error at all (repeated_reply, model_slow …).
  expect(
    frames.filter((f) => f.type === "error").map((f) => `${f.code}: ${f.message}`),
    summary(frames),
  ).toEqual([]);
  expect(frames.filter((f) => isWords(f)).every((f) => f.turnId === user!.turnId)).toBe(true);
  return wordsOf(own).join("");
}

/** The contract's scenarios on one provider's wire (each provider's contract.workers.test.ts). */
export function providerContract(provider: ProviderUnderContract): void {
  const scenario = (name: string, fn: () => Promise<void>, timeout = 30_000) => {
    const reason = provider.skips[name];
    if (reason !== undefined) it.skip(`${name} (skipped: ${reason})`, fn);
    else it(name, { timeout }, fn);
  };
  const session = (knobs: Record<string, string | number> = {}, extra = {}) =>
    simulatorSession({ ...provider.knobs, ...knobs }, extra);

  describe(`the contract on ${provider.name}`, () => {
    scenario("a greeting with side-effect calls: one reply, one turn end", async () => {
      const { client } = await session({ calls: "greeting:suggest_topics" });
      const frames = await playTurn(client, "hi", { settleMs: 150 });
      expect(frames.some((f) => f.type === "tool_call" && f.name === "suggest_topics")).toBe(true);
      expect(wordsOf(frames).length).toBeGreaterThan(0);
      expect(repeated(frames)).toBe(false);
      client.close();
    });

    scenario("control: the naive relay duplicates that greeting", async () => {
      const { client } = await session({ calls: "greeting:suggest_topics" }, { naive: true });
      const frames = await playTurn(client, "hi", { settleMs: 200 });
      expect(repeated(frames)).toBe(true);
      client.close();
    });

    scenario(
      "a speak result after the model ended its turn is spoken once, in that turn",
      async () => {
        const { client } = await session({ calls: "greeting:lookup_faq" });
        const frames = await playTurn(client, "hi", { settleMs: 150 });
        const result = frames.find((f) => f.type === "tool_result");
        expect(result).toMatchObject({ name: "lookup_faq" });
        const after = frames.slice(frames.indexOf(result!) + 1);
        const spoken = wordsOf(after).join("");
        expect(spoken).toContain("lookup_faq found");
        expect(spoken.match(/lookup_faq found/g)).toHaveLength(1);
        expect(after.filter((f) => isWords(f)).every((f) => f.turnId === "t1")).toBe(true);
        expect(turnEndsOf(frames)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        client.close();
      },
    );

    scenario(
      "an empty reply after a tool result is retried invisibly; the result is spoken",
      async () => {
        const { client, sessionId } = await session({
          calls: "greeting:lookup_faq",
          emptySchedule: "2",
        });
        // The wait before an empty reply is retried: 1.5 s, not the 4 s default (the face
        // answers at once at timeScale 0; the rule is the same).
        await setCoreTimes(sessionId, { emptyReplyWaitMs: 1500 });
        const frames = await playTurn(client, "hi", { settleMs: 150 });
        expect(wordsOf(frames).join("")).toContain("lookup_faq found");
        expect(JSON.stringify(frames)).not.toContain("Please continue");
        expect(frames.some((f) => f.type === "error")).toBe(false);
        expect(repeated(frames)).toBe(false);
        client.close();
      },
    );

    scenario(
      "two results for one client call: the first stands, the second is refused",
      async () => {
        const { client } = await session({ calls: "greeting:suggest_topics" });
        const frames = await playTurn(client, "hi", {
          settleMs: 200,
          answer: (call) => {
            client.send({ type: "tool_result", callId: call.callId, result: { chips: ["a"] } });
            client.send({ type: "tool_result", callId: call.callId, result: { chips: ["b"] } });
            return null;
          },
        });
        expect(frames.filter((f) => f.type === "tool_result")).toHaveLength(1);
        expect(frames.filter((f) => f.type === "error").map((f) => f.code)).toEqual([
          "duplicate_result",
        ]);
        expect(repeated(frames)).toBe(false);
        client.close();
      },
    );

    scenario(
      "a speak result answered while the model still speaks is spoken once, in that turn",
      async () => {
        // Paced, and the model waits for the result (race 0): it arrives mid-speech.
        const { client } = await session({
          calls: "greeting:lookup_faq",
          race: 0,
          timeScale: 0.05,
        });
        const frames = await playTurn(client, "hi", { settleMs: 300 });
        const spoken = wordsOf(frames).join("");
        expect(spoken.match(/lookup_faq found/g)).toHaveLength(1);
        expect(turnEndsOf(frames)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        expect(repeated(frames)).toBe(false);
        client.close();
      },
    );

    scenario(
      "a barge-in by text mid-reply: the turn ends once, interrupted (complete if turnless); nothing of it after",
      async () => {
        const { client } = await session({ calls: "greeting:;*:", timeScale: 0.2 });
        client.send({ type: "text", text: "hi" });
        // The first piece of the greeting: the reply is under way.
        for (;;) {
          const f = await client.next(5000);
          if (isWords(f)) break;
        }
        client.send({ type: "text", text: "stop, what are your hours?" });
        const frames = await framesUntilTurnEnds(client, "t2");
        const ends = frames.filter((f) => f.type === "turn_complete" || f.type === "interrupted");
        // A turnless model's utterance ends complete where the line comes: nothing is cut.
        const firstEnd = provider.turnless
          ? { type: "turn_complete", turnId: "t1" }
          : { type: "interrupted", turnId: "t1", reason: "barge_in" };
        expect(ends).toEqual([
          expect.objectContaining(firstEnd),
          expect.objectContaining({ type: "turn_complete", turnId: "t2" }),
        ]);
        const cut = frames.indexOf(ends[0]!);
        expect(frames.slice(cut).some((f) => isWords(f) && f.turnId === "t1")).toBe(false);
        expect(wordsOf(frames).join("")).toContain("stop, what are your hours?");
        client.close();
      },
    );

    scenario(
      "a barge-in while a call is pending: the call is cancelled, its late result refused, the new line answered",
      async () => {
        // get_user_profile runs on the client and is spoken: the turn waits for its result.
        const { client } = await session({ calls: "greeting:get_user_profile;*:" });
        client.send({ type: "text", text: "hi" });
        let call: Frame | undefined;
        while (call === undefined) {
          const f = await client.next(5000);
          if (f.type === "tool_call" && f.name === "get_user_profile") call = f;
        }
        // The app never answers in time: the user moves on.
        client.send({ type: "text", text: "never mind, what are your hours?" });
        const frames = await framesUntilTurnEnds(client, "t2");
        expect(frames.find((f) => f.type === "tool_cancelled")).toMatchObject({
          callId: call.callId,
          turnId: "t1",
          reason: "barge_in",
        });
        expect(turnEndsOf(frames)).toEqual([
          expect.objectContaining({ type: "interrupted", turnId: "t1", reason: "barge_in" }),
          expect.objectContaining({ type: "turn_complete", turnId: "t2" }),
        ]);
        expect(wordsOf(frames).join("")).toContain("never mind, what are your hours?");
        expect(wordsOf(frames).join("")).not.toContain("get_user_profile found");
        // The result arrives after all: refused, and never spoken.
        client.send({ type: "tool_result", callId: call.callId, result: { name: "Ada" } });
        const late = await playTurn(client, "thanks", { settleMs: 100 });
        expect(late.filter((f) => f.type === "error").map((f) => f.code)).toEqual([
          "call_cancelled",
        ]);
        expect(late.some((f) => f.type === "tool_result")).toBe(false);
        expect(wordsOf(late).join("")).not.toContain("get_user_profile");
        client.close();
      },
    );

    scenario(
      "two spoken calls in one reply, their results ready apart: each is spoken once, in that turn",
      async () => {
        // lookup_faq (server) is answered at once; the app answers get_user_profile while the
        // model already speaks what lookup_faq found (found by trying the OpenAI wire by hand:
        // that result was never spoken, its answer suppressed as unsolicited).
        const { client, sessionId } = await session({
          calls: "greeting:lookup_faq,get_user_profile",
          race: 0,
          timeScale: 0.05,
        });
        const frames = await playTurn(client, "hi", {
          settleMs: 600,
          answer: (call) => {
            setTimeout(
              () =>
                client.send({ type: "tool_result", callId: call.callId, result: { name: "Ada" } }),
              120,
            );
            return null;
          },
        });
        const spoken = wordsOf(frames).join("");
        expect(spoken.match(/lookup_faq found/g), spoken).toHaveLength(1);
        expect(spoken.match(/get_user_profile found/g), spoken).toHaveLength(1);
        expect(frames.filter((f) => isWords(f)).every((f) => f.turnId === "t1")).toBe(true);
        expect(turnEndsOf(frames)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        expect(repeated(frames)).toBe(false);
        const timeline = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
          headers: withKey(),
        });
        const { stats } = (await timeline.json()) as {
          stats: { counters: { suppressedGenerations: number } };
        };
        expect(stats.counters.suppressedGenerations).toBe(0);
        client.close();
      },
    );

    scenario(
      "a spoken client result, and a line typed in the same instant: the line gets its own answer",
      async () => {
        // The simulator picks tools by what is asked, as a model would (the attack's setup).
        const { client } = await session({ timeScale: 0.2 });
        await playTurn(client, "hi");
        client.send({ type: "text", text: "what is my profile" });
        for (;;) {
          const f = await client.next(5000);
          if (f.type === "tool_call" && f.name === "get_user_profile") {
            // After the model's response ended at its call (as the attack found it), the
            // result, whose follow-up is asked for, and a line that barges in before it starts.
            await new Promise((r) => setTimeout(r, 30));
            client.send({ type: "tool_result", callId: f.callId, result: { name: "Ada" } });
            client.send({ type: "text", text: "and what about refunds" });
            break;
          }
        }
        // The line's own turn calls the tool too: answered at once.
        const frames = await framesUntilTurnEnds(client, "t3", { name: "Ada" });
        expect(turnEndsOf(frames).at(-1)).toMatchObject({ type: "turn_complete", turnId: "t3" });
        const t3 = frames.filter((f) => isWords(f) && f.turnId === "t3").map((f) => f.text);
        // Its own answer: the refunds entry the lookup found (or the line echoed).
        expect(t3.join("")).toMatch(/refunds/i);
        expect(frames.some((f) => f.type === "error")).toBe(false);
        client.close();
      },
    );

    scenario(
      "lines typed in one burst: each turn ends once, the last line gets its own answer",
      async () => {
        const { client } = await session({ timeScale: 0.2, calls: "greeting:;*:" });
        await playTurn(client, "hi");
        const lines = ["line one", "line two", "line three", "line four"];
        for (const line of lines) client.send({ type: "text", text: line });
        const frames = await framesUntilTurnEnds(client, "t5");
        // A turnless model's answer cannot be cut: the first line is answered in full, and
        // the lines typed over that answer wait for it, then go together.
        expect(turnEndsOf(frames).map((f) => `${f.turnId}:${f.type}`)).toEqual([
          provider.turnless ? "t2:turn_complete" : "t2:interrupted",
          "t3:interrupted",
          "t4:interrupted",
          "t5:turn_complete",
        ]);
        const t5 = frames.filter((f) => isWords(f) && f.turnId === "t5").map((f) => f.text);
        expect(t5.join("")).toContain("line four");
        if (provider.turnless) {
          const t2 = frames.filter((f) => isWords(f) && f.turnId === "t2").map((f) => f.text);
          expect(t2.join("")).toContain("line one");
          expect(t5.join("")).not.toContain("line one");
        }
        client.close();
      },
    );

    scenario(
      "lines typed in one burst, answered at an instant pace: every answer is its own line's",
      async () => {
        // The invariant the attack found broken by hand on the OpenAI wire (wrangler dev,
        // timeScale 0): a response done before its cancel arrived had begun with the later
        // lines in the conversation, its answer to the last line was taken for an earlier
        // line's, and the last line got "Anything else?". Here each line tends to be answered
        // before the next arrives; the race itself is proven by the adapter's unit tests.
        // The greeting's side-effect calls as the attack had them: their results go quietly
        // into the conversation just before the lines.
        const { client } = await session({
          timeScale: 0,
          calls: "greeting:suggest_topics,set_preference;*:",
        });
        client.send({ type: "text", text: "hi" });
        // The lines go the moment the greeting ends, as a quick typist's would.
        await framesUntilTurnEnds(client, "t1", { shown: true });
        const lines = ["line one", "line two", "line three", "line four"];
        for (const line of lines) client.send({ type: "text", text: line });
        const frames = await framesUntilTurnEnds(client, "t5");
        const ends = turnEndsOf(frames).map((f) => f.turnId);
        expect(ends).toEqual(["t2", "t3", "t4", "t5"]);
        lines.forEach((line, i) => {
          const turnId = `t${i + 2}`;
          const said = frames
            .filter((f) => isWords(f) && f.turnId === turnId)
            .map((f) => f.text)
            .join("");
          // What reaches a turn answers that turn's line (or nothing, if it was cut short).
          for (const other of lines) if (other !== line) expect(said).not.toContain(`“${other}”`);
          // A turnless model answers the first line in full; the lines typed over that answer
          // waited for it and went together, answered in the last one's turn.
          const asked = provider.turnless && turnId === "t5" ? lines.slice(1).join("\n") : line;
          if (turnId === "t5") expect(said).toContain(`“${asked}”`);
          if (provider.turnless && turnId === "t2") expect(said).toContain(`“${line}”`);
        });
        client.close();
      },
    );

    scenario(
      "the same question three times, plain: each answered once, in the same words, no error",
      async () => {
        // An honest model answers the same question with the same words (repeatAnswers): the
        // gateway must not take a later answer for a regeneration. The greeting shows the app's
        // chips (a silent result, after which a regeneration is possible for a while: without
        // it the gateway before c8e49f7 judged nothing); then the same plain question, no tool,
        // three times (before c8e49f7 the third ended with repeated_reply, on both wires).
        const { client } = await session({ repeatAnswers: 1, calls: "greeting:suggest_topics;*:" });
        await playTurn(client, "hi", { settleMs: 100 });
        const line = "what are your opening hours on a sunday?";
        const answers: string[] = [];
        for (let i = 0; i < 3; i++) {
          const frames = await playTurn(client, line, { settleMs: 200 });
          answers.push(answeredOnce(frames, line));
        }
        expect(answers[0]).toContain(`You said: “${line}”`);
        expect(answers[0]!.match(/You said:/g)).toHaveLength(1);
        expect(answers).toEqual([answers[0], answers[0], answers[0]]);
        client.close();
      },
    );

    scenario(
      "the same question three times with a spoken and a silent tool: each answered once, no error",
      async () => {
        // Every turn calls lookup_faq (server, spoken) and suggest_topics (the app's chips,
        // silent): on Gemini a silent result makes a regeneration possible, and the answer to
        // the same results is word for word the one before.
        const created = await session({
          repeatAnswers: 1,
          calls: "*:lookup_faq,suggest_topics",
        });
        const { client } = created;
        const line = "what are your hours?";
        const answers: string[] = [];
        for (let i = 0; i < 3; i++) {
          const frames = await playTurn(client, line, { settleMs: 300 });
          const calls = frames.filter((f) => f.type === "tool_call").map((f) => f.name);
          expect(calls.sort(), summary(frames)).toEqual(["lookup_faq", "suggest_topics"]);
          const said = answeredOnce(frames, line);
          expect(said.match(/lookup_faq found/g), said).toHaveLength(1);
          expect(said.match(/You said:/g), said).toHaveLength(1);
          answers.push(said);
        }
        expect(answers).toEqual([answers[0], answers[0], answers[0]]);
        client.close();
      },
    );

    scenario(
      "a model twice as slow as the watchdog: model_slow, then its answer in its turn, no model_timeout",
      async () => {
        // Paced in real time (timeScale 1): the first word 2 periods after the line, then
        // quickly. The watchdog's period is 500 ms for this session (its default is 15 s).
        const period = 500;
        const { client, sessionId } = await session({
          repeatAnswers: 1,
          calls: "*:",
          timeScale: 1,
          latencyMs: 2 * period,
          msPerWord: 5,
        });
        await setModelTimeout(sessionId, period);
        const line = "take your time with this one";
        const started = Date.now();
        const frames = await playTurn(client, line, { settleMs: 2 * period });
        const user = frames.find((f) => f.type === "user")!;
        const own = frames.filter((f) => f.turnId === user.turnId);
        const codes = frames.filter((f) => f.type === "error").map((f) => f.code);
        expect(codes).toContain("model_slow");
        expect(codes).not.toContain("model_timeout");
        expect(codes).not.toContain("late_answer");
        expect(frames.find((f) => f.type === "error")).toMatchObject({ turnId: user.turnId });
        expect(turnEndsOf(frames)).toEqual([
          expect.objectContaining({ type: "turn_complete", turnId: user.turnId }),
        ]);
        const end = own.findIndex((f) => f.type === "turn_complete");
        const said = wordsOf(own.slice(0, end)).join("");
        expect(said).toContain(`You said: “${line}”`);
        expect(said).toContain("Anything else?");
        // The model was slow: the answer took longer than a period.
        expect(Date.now() - started).toBeGreaterThan(period);
        // It was waited for, never asked to go on (a nudge cuts, or collides with, the answer
        // it prepares): PROTOCOL.md nudges only after tool results.
        const kinds = await timelineKinds(sessionId);
        expect(kinds).toContain("WATCHDOG_WAIT");
        expect(kinds).not.toContain("WATCHDOG_NUDGE");
        expect(kinds).not.toContain("MODEL_TIMEOUT");
        client.close();
      },
    );

    scenario(
      "three lines typed while a slow connection opens: all reach the model in order, one answer",
      async () => {
        // The model connection takes 800 ms to be set up; the user types three lines at once.
        const { client } = await session({ setupMs: 800, repeatAnswers: 1, calls: "*:" });
        const lines = [
          "My booking code is ZX41",
          "it is for two adults",
          "what is included in the fare?",
        ];
        for (const text of lines) client.send({ type: "text", text });
        const frames = await framesUntilTurnEnds(client, "t3");
        // Each line opened its turn, all before the connection was live.
        const users = frames.filter((f) => f.type === "user");
        expect(users.map((f) => [f.turnId, f.text])).toEqual([
          ["t1", lines[0]],
          ["t2", lines[1]],
          ["t3", lines[2]],
        ]);
        const live = client.statuses.find((f) => f.state === "live");
        expect(live).toBeDefined();
        for (const u of users) expect(u.seq as number).toBeLessThan(live!.seq as number);
        // What the model received, as its answer echoes it: the three lines, in order, as one
        // input (newline-joined), answered once, in the last line's turn.
        const said = wordsOf(frames.filter((f) => f.turnId === "t3")).join("");
        expect(said).toContain(`You said: “${lines.join("\n")}”`);
        expect(said.match(/You said:/g)).toHaveLength(1);
        expect(turnEndsOf(frames)).toEqual([
          expect.objectContaining({
            type: "interrupted",
            turnId: "t1",
            reason: "barge_in",
            joined: true,
          }),
          expect.objectContaining({
            type: "interrupted",
            turnId: "t2",
            reason: "barge_in",
            joined: true,
          }),
          expect.objectContaining({ type: "turn_complete", turnId: "t3" }),
        ]);
        expect(frames.filter((f) => isWords(f)).every((f) => f.turnId === "t3")).toBe(true);
        expect(frames.filter((f) => f.type === "error").map((f) => f.code)).toEqual([]);
        client.close();
      },
    );

    scenario(
      "a dropped model connection: reconnected (seeded from the log), the next turn answered",
      async () => {
        // Every connection drops that long after it opens: a turnless model's turn lasts its
        // answer and the quiet after it (1.5 s), so its connections live longer.
        const dropAfterMs = provider.turnless ? 3000 : 400;
        const { client } = await session({ dropAfterMs, calls: "greeting:;*:" });
        await playTurn(client, "hi");
        // Wait for the drop and the way back (status frames are kept apart by the client).
        const states = () => client.statuses.map((s) => s.state);
        for (
          let i = 0;
          i < 200 && !(states().includes("reconnecting") && states().at(-1) === "live");
          i++
        ) {
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(states()).toEqual(expect.arrayContaining(["reconnecting", "live"]));
        const frames = await playTurn(client, "what did you say", { settleMs: 100 });
        expect(wordsOf(frames).join("")).toContain("I said:");
        expect(turnEndsOf(frames)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        client.close();
      },
    );

    scenario(
      "a client that resumes gets every durable frame after its seq exactly once",
      async () => {
        const created = await session();
        const first = await playTurn(created.client, "hi");
        created.client.close();
        const lastSeq = Math.max(...first.map((f) => (typeof f.seq === "number" ? f.seq : 0)));
        const again = await connect(`${httpUrl(created.wsUrl)}&resumeFrom=${lastSeq - 2}`);
        const frames = [await again.next(), await again.next(), await again.next()];
        expect(frames[0]).toMatchObject({ type: "ready", resumed: true });
        expect(frames.slice(1).map((f) => f.seq)).toEqual([lastSeq - 1, lastSeq]);
        again.close();
      },
    );

    scenario(
      "a handoff: one call and one result, the specialist's tools next, its answer once, replayed once",
      async () => {
        const created = await session();
        const { client } = created;
        await playTurn(client, "hi");
        const statusesBefore = client.statuses.length;
        // The greeter is offered transfer_to_billing; the simulator calls it when billing is named.
        const handing = await playTurn(client, "I have a question about billing", {
          settleMs: 400,
        });
        const transfer = handing.filter((f) => f.type === "tool_call");
        expect(transfer.map((f) => f.name)).toEqual(["transfer_to_billing"]);
        expect(turnEndsOf(handing)).toEqual([
          expect.objectContaining({ type: "turn_complete", turnId: transfer[0]!.turnId }),
        ]);
        const handoff = handing.filter((f) => f.type === "handoff");
        expect(handoff).toEqual([
          expect.objectContaining({ from: "greeter", to: "billing", turnId: transfer[0]!.turnId }),
        ]);
        // Billing announces itself: one line, in the transfer turn, after the handoff and
        // before that turn's one end; no tool called for it.
        const at = (f: Frame) => handing.indexOf(f);
        const after = handing.slice(at(handoff[0]!));
        expect(wordsOf(after).join("")).toMatch(/^Hello, I am taking over from here/);
        expect(after.filter((f) => f.type === "tool_call")).toEqual([]);
        expect(after.every((f) => f.turnId === undefined || f.turnId === transfer[0]!.turnId)).toBe(
          true,
        );
        expect(repeated(handing)).toBe(false);
        // Gemini's setup and GPT-Live's instructions are fixed: a new connection; OpenAI's
        // session is updated in place.
        const replaced = client.statuses
          .slice(statusesBefore)
          .some((f) => f.state === "reconnecting");
        expect(replaced).toBe(provider.handoff === "new connection");
        // The specialist answers the caller's next question with its own tool, once.
        const answer = await playTurn(client, "what is on my invoice?", { settleMs: 200 });
        expect(answer.filter((f) => f.type === "tool_call").map((f) => f.name)).toEqual([
          "lookup_invoice",
        ]);
        expect(wordsOf(answer).join("")).toMatch(/lookup_invoice found/);
        expect(repeated(answer)).toBe(false);
        expect(turnEndsOf(answer)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        client.close();

        const history = await fullHistoryOf(created.sessionId);
        const events = history.events;
        // Who spoke each turn: the greeter, both in the transfer turn (billing's line), billing.
        expect(history.turns.map((t) => t.agents)).toEqual([
          ["greeter"],
          ["greeter", "billing"],
          ["billing"],
        ]);
        const calls = events.filter(
          (e) => e.kind === "tool_call" && e.name === "transfer_to_billing",
        );
        const results = events.filter(
          (e) => e.kind === "tool_result" && e.name === "transfer_to_billing",
        );
        expect(calls).toHaveLength(1);
        expect(results).toHaveLength(1);
        expect(events.filter((e) => e.kind === "handoff")).toHaveLength(1);

        const replay = await connect(`${httpUrl(created.wsUrl)}&resumeFrom=0`);
        const replayed: Frame[] = [];
        for (;;) {
          const f = await replay.next(1000).catch(() => null);
          if (f === null) break;
          replayed.push(f);
        }
        expect(replayed.filter((f) => f.type === "handoff")).toHaveLength(1);
        replay.close();
      },
    );

    scenario(
      "a handoff to a silent agent: the transfer turn ends first, and the new agent waits for the user",
      async () => {
        const { client } = await session();
        await playTurn(client, "hi");
        await playTurn(client, "I have a question about billing", { settleMs: 400 });
        // Billing hands back to the greeter, whose arrival is silent.
        const back = await playTurn(client, "take me back to the greeter please", {
          settleMs: 600,
        });
        const transfer = back.filter((f) => f.type === "tool_call");
        expect(transfer.map((f) => f.name)).toEqual(["transfer_to_greeter"]);
        const end = back.findIndex((f) => f.type === "turn_complete");
        const handoff = back.findIndex((f) => f.type === "handoff");
        expect(back[handoff]).toMatchObject({ from: "billing", to: "greeter" });
        expect(handoff).toBeGreaterThan(end);
        expect(wordsOf(back.slice(handoff))).toEqual([]);
        // The greeter answers the next line with its own tools.
        const answer = await playTurn(client, "what does the faq say about hours?", {
          settleMs: 200,
        });
        expect(answer.filter((f) => f.type === "tool_call").map((f) => f.name)).toEqual([
          "lookup_faq",
        ]);
        expect(turnEndsOf(answer)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
        client.close();
      },
    );

    scenario(
      "a backend request does not undo a transfer the model made (found by the attack)",
      async () => {
        // Paced (about 100 ms a word): the old agent's follow-up plays for seconds after the
        // transfer's result, long enough for the backend's request to land while it is pending.
        const created = await session({ timeScale: 0.3 });
        const { client } = created;
        await playTurn(client, "hi");
        client.send({ type: "text", text: "I have a question about billing" });
        let f = await client.next(10_000);
        while (!(f.type === "tool_result" && f.name === "transfer_to_billing"))
          f = await client.next(10_000);
        // The old agent still speaks its follow-up: the transfer is pending.
        const res = await exports.default.fetch(
          `${BASE}/v1/sessions/${created.sessionId}/handoff`,
          {
            method: "POST",
            headers: { ...withKey(), "Content-Type": "application/json" },
            body: JSON.stringify({ agent: "greeter" }),
          },
        );
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: { code: "handoff_refused" } });
        while (f.type !== "handoff") f = await client.next(15_000);
        expect(f).toMatchObject({ from: "greeter", to: "billing" });
        client.close();
      },
    );

    scenario(
      "control: the naive relay appends a second result for the handoff call (agent-framework issue 2711)",
      async () => {
        const created = await session({}, { naive: true });
        await playTurn(created.client, "hi");
        await playTurn(created.client, "I have a question about billing", { settleMs: 400 });
        created.client.close();
        const events = await historyOf(created.sessionId);
        const results = events.filter(
          (e) => e.kind === "tool_result" && e.name === "transfer_to_billing",
        );
        expect(new Set(results.map((e) => e.callId)).size).toBe(1);
        expect(results).toHaveLength(2);
      },
    );

    scenario("a handoff from the app's backend: the next turn is the new agent's", async () => {
      const created = await session();
      const { client } = created;
      await playTurn(client, "hi");
      const post = (body: unknown) =>
        exports.default.fetch(`${BASE}/v1/sessions/${created.sessionId}/handoff`, {
          method: "POST",
          headers: { ...withKey(), "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
      expect((await post({ agent: "nobody" })).status).toBe(400);
      expect((await post({ agent: "billing", reason: "asked by the app" })).status).toBe(202);
      // The greeting's chips result may still be on its way; the handoff frame follows.
      let next = await client.next(3000);
      while (next.type !== "handoff") next = await client.next(3000);
      expect(next).toMatchObject({
        type: "handoff",
        from: "greeter",
        to: "billing",
        reason: "asked by the app",
      });
      // The agent is in the log: an object that restarts goes on as billing.
      client.close();
      const restart = await exports.default.fetch(
        `${BASE}/v1/sessions/${created.sessionId}/restart`,
        { method: "POST", headers: withKey() },
      );
      expect(restart.status).toBe(200);
      const again = await connect(httpUrl(created.wsUrl));
      expect((await again.next()).type).toBe("ready");
      const answer = await playTurn(again, "what is on my invoice?", { settleMs: 200 });
      expect(answer.filter((f) => f.type === "tool_call").map((f) => f.name)).toEqual([
        "lookup_invoice",
      ]);
      expect(turnEndsOf(answer)).toEqual([expect.objectContaining({ type: "turn_complete" })]);
      again.close();
    });

    scenario(
      "a line typed right after the transfer call is the new agent's to answer",
      async () => {
        const created = await session({ timeScale: 0.1 });
        const { client } = created;
        await playTurn(client, "hi");
        client.send({ type: "text", text: "I have a question about billing" });
        const frames: Frame[] = [];
        let typed = false;
        let userTurn: unknown = null;
        for (;;) {
          const f = await client.next(8000);
          frames.push(f);
          if (!typed && f.type === "tool_result" && f.name === "transfer_to_billing") {
            typed = true;
            client.send({ type: "text", text: "what is on my invoice?" });
          }
          if (f.type === "user" && f.text === "what is on my invoice?") userTurn = f.turnId;
          if (userTurn !== null && f.type === "turn_complete" && f.turnId === userTurn) break;
        }
        client.close();
        const handoff = frames.findIndex((f) => f.type === "handoff");
        expect(handoff).toBeGreaterThan(-1);
        const own = frames.filter((f) => f.turnId === userTurn);
        expect(own.filter((f) => f.type === "tool_call").map((f) => f.name)).toEqual([
          "lookup_invoice",
        ]);
        // Every word of the answer comes after the handoff.
        const firstText = frames.findIndex((f) => isWords(f) && f.turnId === userTurn);
        expect(firstText).toBeGreaterThan(handoff);
      },
    );

    scenario(
      "a handoff does not wait for an unanswered client call: it is cancelled with the old agent",
      async () => {
        const created = await session();
        const { client } = created;
        // The greeting's chips call is left unanswered.
        await playTurn(client, "hi", { answer: () => null });
        const frames = await playTurn(client, "I have a question about billing", {
          settleMs: 400,
        });
        expect(frames.filter((f) => f.type === "handoff")).toHaveLength(1);
        // On GPT-Live's one response chain the line itself cancels it (`superseded`): the
        // backend would take no request while it has no output.
        expect(frames).toContainEqual(
          expect.objectContaining({
            type: "tool_cancelled",
            name: "suggest_topics",
            reason: provider.name === "gpt-live" ? "superseded" : "handoff",
          }),
        );
        client.close();
      },
    );

    scenario("a backend handoff asked for mid-turn survives an object restart", async () => {
      const created = await session({ timeScale: 0.3 });
      const { client } = created;
      await playTurn(client, "hi");
      client.send({ type: "text", text: "tell me something long" });
      for (;;) {
        const f = await client.next(5000);
        if (isWords(f)) break; // the model is speaking: the turn is open
      }
      const at = (path: string, init: RequestInit) =>
        exports.default.fetch(`${BASE}/v1/sessions/${created.sessionId}${path}`, init);
      const asked = await at("/handoff", {
        method: "POST",
        headers: { ...withKey(), "Content-Type": "application/json" },
        body: JSON.stringify({ agent: "billing", reason: "before the restart" }),
      });
      expect(await asked.json()).toMatchObject({ pending: true });
      client.close();
      expect((await at("/restart", { method: "POST", headers: withKey() })).status).toBe(200);
      // Replayed from the start: the handoff took effect after the restart (its turn had ended).
      const again = await connect(`${httpUrl(created.wsUrl)}&resumeFrom=0`);
      let f = await again.next(5000);
      while (f.type !== "handoff") f = await again.next(5000);
      expect(f).toMatchObject({ from: "greeter", to: "billing", reason: "before the restart" });
      const answer = await playTurn(again, "what is on my invoice?", { settleMs: 200 });
      expect(answer.filter((x) => x.type === "tool_call").map((x) => x.name)).toEqual([
        "lookup_invoice",
      ]);
      again.close();
    });
  });
}

/**
 * Models that take only blocking calls (issue 50): Gemini 3.1 (every call blocks, no
 * turnComplete before every result) and any model on Vertex AI, where liveline declares every
 * call BLOCKING. The face says all its words before its calls (`callsLast`): after a silent
 * call's result it has nothing to add and ends the turn, and asked to go on it greets again.
 */
export interface BlockingOnlyModel {
  name: string;
  knobs: Record<string, string | number>;
  controlSkip?: string;
}

/** The old empty-reply rule, switched back on in the session's running object (the control). */
async function nudgeAfterSilentResults(sessionId: string): Promise<void> {
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    const live = (
      instance as {
        running: {
          live: { interpreter: { state: { config: { guards: Record<string, boolean> } } } } | null;
        };
      }
    ).running.live;
    if (!live) throw new Error("the session's object holds no running session");
    const config = live.interpreter.state.config;
    config.guards = { ...config.guards, silentResultsOweNoWords: false };
  });
}

const GREETING = /Hello! I'm the liveline simulator/g;

/** The blocking-only contract on one model (test/providers/gemini/blocking-only.workers.test.ts). */
export function blockingOnlyContract(model: BlockingOnlyModel): void {
  describe(`the contract on ${model.name}`, () => {
    it("a greeting with a silent client tool is said once; no nudge; one end, no error", {
      timeout: 30_000,
    }, async () => {
      const { sessionId, client } = await simulatorSession({
        ...model.knobs,
        calls: "greeting:suggest_topics",
      });
      const frames = await playTurn(client, "Hello", { settleMs: 300 });
      expect(frames.some((f) => f.type === "tool_call" && f.name === "suggest_topics")).toBe(true);
      expect(wordsOf(frames).join("").match(GREETING), summary(frames)).toHaveLength(1);
      expect(turnEndsOf(frames).map((f) => f.type)).toEqual(["turn_complete"]);
      expect(frames.filter((f) => f.type === "error")).toEqual([]);
      const kinds = await timelineKinds(sessionId);
      expect(kinds).not.toContain("RETRY_EMPTY");
      expect(kinds).not.toContain("WATCHDOG_NUDGE");
      client.close();
    });

    const control = "control: with the old empty-reply rule, the greeting is said five times";
    const skip = model.controlSkip;
    (skip === undefined ? it : it.skip)(
      skip === undefined ? control : `${control} (skipped: ${skip})`,
      {
        timeout: 30_000,
      },
      async () => {
        const { sessionId, client } = await simulatorSession({
          ...model.knobs,
          calls: "greeting:suggest_topics",
        });
        await nudgeAfterSilentResults(sessionId);
        const frames = await playTurn(client, "Hello", { settleMs: 300 });
        expect(wordsOf(frames).join("").match(GREETING), summary(frames)).toHaveLength(5);
        expect(frames.filter((f) => f.type === "error").map((f) => f.code)).toEqual([
          "empty_response",
        ]);
        client.close();
      },
    );

    it("a speak result there is still owed its words: spoken once, in the turn", {
      timeout: 30_000,
    }, async () => {
      const { client } = await simulatorSession({ ...model.knobs, calls: "greeting:lookup_faq" });
      const frames = await playTurn(client, "Hello", { settleMs: 300 });
      const said = wordsOf(frames).join("");
      expect(said.match(/lookup_faq found/g), summary(frames)).toHaveLength(1);
      expect(said.match(GREETING)).toHaveLength(1);
      expect(turnEndsOf(frames).map((f) => f.type)).toEqual(["turn_complete"]);
      expect(frames.filter((f) => f.type === "error")).toEqual([]);
      client.close();
    });
  });
}
