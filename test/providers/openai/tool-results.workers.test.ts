import { describe, expect, it } from "vitest";
import type { Frame } from "../../support/gateway.js";
import {
  framesUntilTurnEnds,
  inLiveSession,
  simulatorSession,
  switchOffGuard,
  textsOf,
} from "../../support/session-flow.js";

/**
 * Found by the attack of 2026-11-29, on the OpenAI wire with no fault at all: the greeting's
 * chips (suggest_topics, a silent client tool) answered while the next line's answer ran were
 * appended after that answer's words, and the response to its own tool result (lookup_faq,
 * spoken) read them out too. A side effect's result now goes right after its call.
 * Control: the running connection's adapter made to forget its calls' items (the result then
 * goes at the end, as before).
 */
async function nextReplyAfterLateChips(placed: boolean): Promise<string> {
  const { sessionId, client } = await simulatorSession({
    wire: "openai",
    timeScale: 0.2,
    seed: 4,
    calls: "greeting:suggest_topics;2:lookup_faq",
  });
  // The model connection opens on its own after the session is made: its adapter is there
  // only once it has (under load, later than this line).
  for (let patched = placed; !patched; await new Promise((r) => setTimeout(r, 20))) {
    await inLiveSession<{ link: { adapter: { callItems: Map<string, string> } | null } }>(
      sessionId,
      (live) => {
        const adapter = live.link.adapter;
        if (adapter === null) return;
        adapter.callItems.set = function (this: Map<string, string>) {
          return this;
        };
        patched = true;
      },
    );
  }
  client.send({ type: "text", text: "hi" });
  const greeting: Frame[] = [];
  let chips: Frame | undefined;
  for (;;) {
    const f = await client.next(10_000);
    greeting.push(f);
    if (f.type === "tool_call" && f.name === "suggest_topics") chips = f;
    if (f.type === "turn_complete") break;
  }
  expect(chips).toBeDefined();
  // The next line at once; the chips while its answer is under way.
  client.send({ type: "text", text: "what are your opening hours faq" });
  setTimeout(
    () => client.send({ type: "tool_result", callId: chips?.callId, result: { shown: true } }),
    100,
  );
  const next = await framesUntilTurnEnds(client, "t2");
  expect(next.some((f) => f.type === "tool_call" && f.name === "lookup_faq")).toBe(true);
  client.close();
  return textsOf(next).join("");
}

describe("a silent tool's result on the OpenAI wire, answered while the next turn runs", () => {
  it("is not read out with that turn's tool result", { timeout: 30_000 }, async () => {
    const said = await nextReplyAfterLateChips(true);
    expect(said).toContain("Here is what lookup_faq found");
    expect(said).not.toContain("suggest_topics");
  });

  it("control: appended at the end of the conversation, it is", { timeout: 30_000 }, async () => {
    expect(await nextReplyAfterLateChips(false)).toContain("Here is what suggest_topics found");
  });
});

/**
 * Found by the attack of 2026-11-29: a speak tool's result that went to the model just before
 * its connection dropped, with the answer to it still to come. The turn is carried (PROTOCOL,
 * "A turn across a lost model connection") and the rebuilt connection, asked to go on, says
 * the result. Control: without carryTurns the turn ends `upstream_lost`, the result unsaid.
 */
async function speakResultAcrossADrop(carry: boolean): Promise<Frame[]> {
  const { sessionId, client } = await simulatorSession({
    wire: "openai",
    timeScale: 0.2,
    // Each reply 3 s after its input: the result goes at about 6.8 s, its answer would come
    // at about 9.8 s, and the connection drops at 8.3 s, in between.
    latencyMs: 15_000,
    seed: 4,
    calls: "greeting:;2:lookup_faq",
    dropAfterMs: 8300,
  });
  if (!carry) await switchOffGuard(sessionId, "carryTurns");
  client.send({ type: "text", text: "hi" });
  await framesUntilTurnEnds(client, "t1");
  client.send({ type: "text", text: "what are your opening hours faq" });
  const frames = await framesUntilTurnEnds(client, "t2");
  client.close();
  return frames;
}

describe("a speak tool's result when the OpenAI connection drops before the answer to it", () => {
  it("is said by the next connection, in its turn", { timeout: 30_000 }, async () => {
    const frames = await speakResultAcrossADrop(true);
    expect(frames.some((f) => f.type === "tool_result" && f.name === "lookup_faq")).toBe(true);
    expect(textsOf(frames).join("")).toContain("Here is what lookup_faq found");
    expect(frames.at(-1)).toMatchObject({ type: "turn_complete", turnId: "t2" });
  });

  it("control: without carryTurns, the turn ends upstream_lost and the result is unsaid", {
    timeout: 30_000,
  }, async () => {
    const frames = await speakResultAcrossADrop(false);
    expect(frames.some((f) => f.type === "tool_result" && f.name === "lookup_faq")).toBe(true);
    expect(textsOf(frames).join("")).not.toContain("Here is what lookup_faq found");
    expect(frames.at(-1)).toMatchObject({ type: "interrupted", reason: "upstream_lost" });
  });
});
