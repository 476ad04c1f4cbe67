/**
 * The simulator a newcomer talks to: the demo agent's questions call its tools by meaning,
 * with arguments drawn from the question; results are said in words; the chips are questions
 * it can answer; nothing internal (answer tags, JSON) in what it says unless a test asks. The
 * greeter's own declarations, as liveline sends them, drive the Gemini face's machine.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { greeter } from "../../examples/greeter/src/agent.js";
import { resolveAgent } from "../../src/agents/define.js";
import { jsonSchemaOf } from "../../src/providers/function-tools.js";
import { declareFunction } from "../../src/providers/gemini/tool-declaration.js";
import { DEFAULT_KNOBS, parseKnobs } from "../../src/simulator/knobs.js";
import { summarise } from "../../src/simulator/script.js";
import { SimDriver } from "./driver.js";

// The greeter imports liveline whole; its Durable Object classes need the runtime's base
// class, which nothing here constructs.
vi.mock("cloudflare:workers", () => ({ DurableObject: class {} }));

const agent = resolveAgent(greeter, {
  sessionId: "s",
  agent: "greeter",
  provider: "simulator",
  metadata: {},
  options: {},
  env: {},
});
const GREETER_TOOLS = agent.tools.map((tool) =>
  declareFunction({
    name: tool.name,
    description: tool.description,
    parameters: jsonSchemaOf(tool.args),
  }),
);
/** The same tools with their descriptions blanked: what the name rule alone would call. */
const NAMES_ONLY = GREETER_TOOLS.map((d) => ({ ...d, description: "" }));

/** A greeter session on the Gemini face, as people meet it (the default knobs: no tags). */
function greeterSession(tools = GREETER_TOOLS, knobs = {}) {
  const sim = new SimDriver({ answerTags: false, race: 0, ...knobs });
  sim.setup({}, tools);
  return sim;
}

const callsOf = (sim: SimDriver, from: number) => sim.calls().slice(from);

describe("the simulator as a newcomer meets it", () => {
  it("calls the tool that answers the question, by its meaning, with arguments from the question", () => {
    const sim = greeterSession();
    sim.user("hi");
    for (const [question, name] of [
      ["What are your opening hours?", "lookup_faq"],
      ["How much does the team plan cost?", "lookup_faq"],
      ["Can I get my money back?", "lookup_faq"],
      ["What plan am I on?", "get_user_profile"],
    ] as const) {
      const before = sim.calls().length;
      sim.user(question);
      expect(
        callsOf(sim, before).map((c) => c.name),
        question,
      ).toEqual([name]);
      // A lookup's `question` is the question; the profile takes none.
      if (name === "lookup_faq") expect(callsOf(sim, before)[0]!.args).toEqual({ question });
      sim.respond(
        callsOf(sim, before).map((c) => ({ id: c.id!, name: c.name, response: { output: "ok" } })),
      );
    }
    // Control: the same questions against tools with no descriptions call nothing (the old
    // rule, a tool's name in the words, never fires on them).
    const blind = greeterSession(NAMES_ONLY);
    blind.user("hi");
    const before = blind.calls().length;
    blind.user("What are your opening hours?");
    expect(callsOf(blind, before)).toEqual([]);
  });

  it("greets with chips that are questions it can answer, and sets no preference on a greeting", () => {
    for (const opening of ["hi", "(The caller is on the line. Greet them.)"]) {
      const sim = greeterSession();
      sim.user(opening);
      const calls = sim.calls();
      expect(
        calls.map((c) => c.name),
        opening,
      ).toEqual(["suggest_topics"]);
      const topics = calls[0]!.args?.topics as string[];
      expect(topics).toHaveLength(3);
      expect(topics.join(" ")).not.toMatch(/suggestion \d/);
      expect(topics).toContain("What are your opening hours?");
      // Each chip, asked, is answered: a call by meaning, or the "what can you do" answer.
      for (const topic of topics) {
        const at = sim.calls().length;
        const mark = sim.frames.length;
        sim.user(topic);
        const called = callsOf(sim, at);
        expect(called.length > 0 || /I can help with/.test(sim.text(mark)), topic).toBe(true);
        sim.respond(called.map((c) => ({ id: c.id!, name: c.name, response: { output: "ok" } })));
      }
    }
  });

  it("saves a preference only when one is stated, with its key and value", () => {
    const sim = greeterSession();
    sim.user("hi");
    for (const line of ["hi", "What are your opening hours?", "Tell me something interesting."]) {
      const at = sim.calls().length;
      sim.user(line);
      expect(
        callsOf(sim, at).map((c) => c.name),
        line,
      ).not.toContain("set_preference");
      sim.respond(
        callsOf(sim, at).map((c) => ({ id: c.id!, name: c.name, response: { output: "ok" } })),
      );
    }
    for (const [line, args] of [
      ["My favourite colour is blue.", { key: "favourite colour", value: "blue" }],
      ["Please call me Ada.", { key: "name", value: "Ada" }],
      ["I prefer email", { key: "preference", value: "email" }],
    ] as const) {
      const at = sim.calls().length;
      sim.user(line);
      const called = callsOf(sim, at);
      expect(
        called.map((c) => c.name),
        line,
      ).toEqual(["set_preference"]);
      expect(called[0]!.args).toEqual(args);
      sim.respond(called.map((c) => ({ id: c.id!, name: c.name, response: { output: "ok" } })));
    }
  });

  it("draws a thing's name from the question, not the whole sentence", () => {
    const stock = {
      name: "check_stock",
      description: "Check whether an item is in stock.",
      parametersJsonSchema: {
        type: "object",
        properties: { item: { type: "string" }, quantity: { type: "integer" } },
      },
    };
    const sim = greeterSession([stock]);
    sim.user("hi");
    sim.user("Is the blue mug in stock?");
    expect(sim.calls().at(-1)).toMatchObject({
      name: "check_stock",
      args: { item: "blue mug", quantity: 1 },
    });
    sim.respond([{ id: sim.calls().at(-1)!.id!, name: "check_stock", response: { output: "ok" } }]);
    sim.user("Do you have 3 of the red bowl available?");
    expect(sim.calls().at(-1)?.args).toEqual({ item: "red bowl", quantity: 3 });
  });

  it("answers what it can do with what its tools cover", () => {
    const sim = greeterSession();
    sim.user("hi");
    const mark = sim.frames.length;
    sim.user("What can you do?");
    expect(sim.text(mark)).toMatch(
      /^I can help with opening hours, prices, support, refunds and your account\. Try asking: “What are your opening hours\?”/,
    );
  });

  it("says a tool's result in words, never its JSON", () => {
    const sim = greeterSession();
    sim.user("hi");
    sim.user("What are your opening hours?");
    const [call] = sim.calls().slice(-1);
    const mark = sim.frames.length;
    sim.respond([
      {
        id: call!.id!,
        name: "lookup_faq",
        response: { output: { topic: "hours", answer: "We are open 9 to 5." } },
      },
    ]);
    expect(sim.text(mark)).toContain("Here is what lookup_faq found: We are open 9 to 5.");
    expect(summarise({ output: { plan: "team", price: "12 EUR", paid: true } })).toBe(
      "the plan is team, the price is 12 EUR and paid",
    );
    // Whatever shape a tool's result has, no JSON punctuation reaches what is said (the
    // words in it have none of their own).
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.stringMatching(/^[a-z ]{0,8}$/),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie("value"), { maxKeys: 3 }),
      ),
    }));
    fc.assert(
      fc.property(value, (result) => {
        expect(summarise({ output: result })).not.toMatch(/[{}[\]":]/);
      }),
    );
  });

  it("ends answers with [#rN] only under answerTags (on for the tests that count duplicates)", () => {
    expect(DEFAULT_KNOBS.answerTags).toBe(false);
    expect(parseKnobs(new URLSearchParams("answerTags=1")).answerTags).toBe(true);
    const plain = greeterSession();
    plain.user("hi");
    plain.user("Tell me something interesting.");
    expect(plain.text()).not.toContain("[#r");
    // Control: the knob on, the same turns carry their tags.
    const tagged = greeterSession(GREETER_TOOLS, { answerTags: true });
    tagged.user("hi");
    tagged.user("Tell me something interesting.");
    expect(tagged.text()).toMatch(/Anything else\? \[#r\d\]$/);
  });
});
