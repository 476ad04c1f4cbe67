import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Frame } from "./helpers.js";
import { framesUntilTurnEnds, simulatorSession, textsOf } from "./session-flow.js";

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
  if (!placed) {
    const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
    await runInDurableObject(stub, (instance: unknown) => {
      const live = (instance as { live: { link: { adapter: { callItems: Map<string, string> } } } })
        .live;
      live.link.adapter.callItems.set = function (this: Map<string, string>) {
        return this;
      };
    });
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
