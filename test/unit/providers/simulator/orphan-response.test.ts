import { describe, expect, it } from "vitest";
import { decl, SimDriver } from "./driver.js";

const TOOLS = [decl("suggest_topics", "NON_BLOCKING"), decl("lookup_faq", "BLOCKING")];

const seeded = (turns: unknown[]) => ({ clientContent: { turns, turnComplete: false } });

describe("seeded context with a function response whose call is not in it (ADK 1.32)", () => {
  it("closes 1007 naming the orphan ids, as the real service does", () => {
    const sim = new SimDriver();
    sim.setup({}, TOOLS);
    sim.send(
      seeded([
        { role: "user", parts: [{ text: "hi" }] },
        { role: "model", parts: [{ text: "[called suggest_topics]" }] },
        {
          role: "user",
          parts: [{ functionResponse: { id: "c1-abc", name: "suggest_topics", response: {} } }],
        },
      ]),
    );
    expect(sim.closed?.code).toBe(1007);
    expect(sim.closed?.reason).toContain(
      "No function call event found for function responses ids: c1-abc",
    );
  });

  it("accepts a rebuilt context whose responses follow their calls, and answers the next turn", () => {
    const sim = new SimDriver();
    sim.setup({}, TOOLS);
    sim.send(
      seeded([
        { role: "user", parts: [{ text: "hi" }] },
        {
          role: "model",
          parts: [{ functionCall: { id: "c1-abc", name: "suggest_topics", args: {} } }],
        },
        {
          role: "user",
          parts: [{ functionResponse: { id: "c1-abc", name: "suggest_topics", response: {} } }],
        },
      ]),
    );
    expect(sim.closed).toBeNull();
    sim.user("hello again");
    expect(sim.closed).toBeNull();
    expect(sim.text().length).toBeGreaterThan(0);
  });

  it("a response before its call in the seeded turns is an orphan too; one without an id is not checked", () => {
    const early = new SimDriver();
    early.setup({}, TOOLS);
    early.send(
      seeded([
        {
          role: "user",
          parts: [{ functionResponse: { id: "x1", name: "lookup_faq", response: {} } }],
        },
        { role: "model", parts: [{ functionCall: { id: "x1", name: "lookup_faq", args: {} } }] },
      ]),
    );
    expect(early.closed?.code).toBe(1007);
    const anonymous = new SimDriver();
    anonymous.setup({}, TOOLS);
    anonymous.send(
      seeded([
        { role: "user", parts: [{ functionResponse: { name: "lookup_faq", response: {} } }] },
      ]),
    );
    expect(anonymous.closed).toBeNull();
  });

  it("calls the model issued on this connection count as known", () => {
    const sim = new SimDriver({ calls: null });
    sim.setup({}, TOOLS);
    sim.user("hi");
    const call = sim.frames.find((f) => f.toolCall)?.toolCall?.functionCalls?.[0];
    expect(call?.id).toBeTruthy();
    sim.send(
      seeded([
        {
          role: "user",
          parts: [{ functionResponse: { id: call!.id, name: call!.name, response: {} } }],
        },
      ]),
    );
    expect(sim.closed).toBeNull();
  });
});
