import { describe, expect, it } from "vitest";
import { encodeRebuiltContext, encodeSetup } from "../../src/providers/gemini/encode.js";
import { decl, SimDriver, turnCompletes } from "./driver.js";

/**
 * The simulator refuses what the real service refuses (1007), so that a test cannot be green
 * where a real session is red. One test per refusal, each sending the refused message.
 */
const TOOLS = [decl("suggest_topics", "NON_BLOCKING"), decl("lookup_faq", "BLOCKING")];
const GEMINI_31 = { model: "models/gemini-3.1-flash-live-preview" };

const refused = (sim: SimDriver) => {
  expect(sim.closed?.code).toBe(1007);
  return sim.closed!.reason;
};

describe("tool parts in clientContent are refused (pipecat 4926)", () => {
  const cases: Array<[string, unknown]> = [
    ["a functionCall part", { functionCall: { id: "c1", name: "lookup_faq", args: {} } }],
    [
      "an orphan functionResponse",
      { functionResponse: { id: "c1", name: "lookup_faq", response: {} } },
    ],
    ["a functionResponse without id", { functionResponse: { name: "lookup_faq", response: {} } }],
  ];
  for (const [what, part] of cases) {
    for (const turnComplete of [false, true]) {
      it(`${what}, turnComplete ${turnComplete}`, () => {
        const sim = new SimDriver();
        sim.setup({}, TOOLS);
        sim.send({ clientContent: { turns: [{ role: "model", parts: [part] }], turnComplete } });
        expect(refused(sim)).toMatch(/function parts/);
      });
    }
  }

  it("a call and its result, paired and in order, are refused too: only text seeds", () => {
    const sim = new SimDriver();
    sim.setup({}, TOOLS);
    sim.send({
      clientContent: {
        turns: [
          { role: "user", parts: [{ text: "hi" }] },
          { role: "model", parts: [{ functionCall: { id: "a", name: "lookup_faq", args: {} } }] },
          {
            role: "user",
            parts: [{ functionResponse: { id: "a", name: "lookup_faq", response: {} } }],
          },
        ],
        turnComplete: false,
      },
    });
    refused(sim);
  });
});

describe("unknown fields are refused (protobuf JSON is parsed strictly)", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    [
      "a top-level key beside the oneof",
      { setup: { model: "m" }, extra: 1 },
      /Unknown name "extra"/,
    ],
    ["in setup", { setup: { model: "m", voice: "x" } }, /Unknown name "voice" at 'setup'/],
    [
      "in setup.generationConfig",
      { setup: { model: "m", generationConfig: { responseModality: ["AUDIO"] } } },
      /Unknown name "responseModality" at 'setup.generationConfig'/,
    ],
    [
      "in a function declaration",
      {
        setup: {
          model: "m",
          tools: [{ functionDeclarations: [{ name: "f", scheduling: "SILENT" }] }],
        },
      },
      /Unknown name "scheduling"/,
    ],
  ];
  for (const [where, msg, reason] of cases) {
    it(where, () => {
      const sim = new SimDriver();
      sim.send(msg);
      expect(refused(sim)).toMatch(reason);
    });
  }

  const after: Array<[string, unknown, RegExp]> = [
    [
      "in clientContent",
      { clientContent: { turns: [], turnComplete: true, endOfTurn: true } },
      /Unknown name "endOfTurn" at 'clientContent'/,
    ],
    [
      "in a part",
      { clientContent: { turns: [{ role: "user", parts: [{ txt: "hi" }] }], turnComplete: true } },
      /Unknown name "txt"/,
    ],
    [
      "in realtimeInput",
      { realtimeInput: { audioEnd: true } },
      /Unknown name "audioEnd" at 'realtimeInput'/,
    ],
    [
      "in a function response",
      { toolResponse: { functionResponses: [{ id: "x", name: "f", response: {}, silent: true }] } },
      /Unknown name "silent"/,
    ],
  ];
  for (const [where, msg, reason] of after) {
    it(where, () => {
      const sim = new SimDriver();
      sim.setup({}, TOOLS);
      expect(sim.closed).toBeNull();
      sim.send(msg);
      expect(refused(sim)).toMatch(reason);
    });
  }

  it("liveline's own setup, with every option, is accepted", () => {
    const sim = new SimDriver();
    sim.send(
      encodeSetup({
        model: "gemini-2.5-flash-live-preview",
        systemInstruction: "be brief",
        declarations: TOOLS.map((t) => ({ ...t, behavior: t.behavior as "BLOCKING" })),
        voiceName: "Puck",
        contextWindowCompression: { triggerTokens: 100_000, targetTokens: 50_000 },
        initialHistoryInClientContent: true,
        resumptionHandle: undefined,
      }),
    );
    expect(sim.closed).toBeNull();
    expect(sim.frames[0]).toEqual({ setupComplete: {} });
  });
});

describe("Gemini 3.1: clientContent only as initial history", () => {
  it("a mid-session clientContent turn is refused by default", () => {
    const sim = new SimDriver();
    sim.setup(GEMINI_31, TOOLS);
    sim.user("hello");
    expect(refused(sim)).toMatch(/initial history/);
  });

  it("midSessionClientContent=accept answers it (the sources conflict)", () => {
    const sim = new SimDriver({
      midSessionClientContent: "accept",
      calls: { byTurn: {}, otherwise: [] },
    });
    sim.setup(GEMINI_31, TOOLS);
    sim.user("hello");
    expect(sim.closed).toBeNull();
    expect(sim.text()).toContain("[#r1]");
  });

  it("realtimeInput.text is a user turn; the seed via historyConfig is accepted", () => {
    const sim = new SimDriver();
    sim.setup({ ...GEMINI_31, historyConfig: { initialHistoryInClientContent: true } }, TOOLS);
    sim.send(
      encodeRebuiltContext({
        items: [
          { role: "user", text: "hi" },
          { role: "model", text: "Hello there." },
        ],
      }),
    );
    sim.send({ realtimeInput: { text: "what did you say" } });
    expect(sim.closed).toBeNull();
    expect(sim.text()).toContain("Hello there.");
  });

  it("withholds turnComplete until every call is answered (O6)", () => {
    const sim = new SimDriver({ calls: { byTurn: { 1: ["suggest_topics"] }, otherwise: [] } });
    sim.setup(GEMINI_31, TOOLS);
    sim.send({ realtimeInput: { text: "hi" } });
    const [call] = sim.calls();
    expect(call).toBeDefined();
    expect(sim.count(turnCompletes)).toBe(0);
    sim.respond([{ id: call!.id, name: call!.name, response: { output: {} } }]);
    expect(sim.count(turnCompletes)).toBe(1);
  });
});

describe("Gemini 2.x timing by default (O1)", () => {
  it("generationComplete and turnComplete follow toolCall at once, without waiting for results", () => {
    const sim = new SimDriver({ calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
    sim.setup({}, TOOLS);
    sim.user("hi");
    const batch = sim.batches.at(-1)!;
    const callAt = batch.findIndex((f) => f.toolCall !== undefined);
    expect(callAt).toBeGreaterThanOrEqual(0);
    expect(batch[callAt + 1]?.serverContent?.generationComplete).toBe(true);
    expect(turnCompletes(batch[callAt + 2]!)).toBe(true);
    // The BLOCKING result, arriving after the turn ended, is new input: spoken in a new reply.
    const [call] = sim.calls();
    const before = sim.frames.length;
    sim.respond([{ id: call!.id, name: "lookup_faq", response: { output: "v" } }]);
    expect(sim.text(before)).toContain("lookup_faq");
    expect(sim.frames.slice(before).filter(turnCompletes).length).toBe(1);
  });
});

describe("initial history (historyConfig.initialHistoryInClientContent)", () => {
  const history = { historyConfig: { initialHistoryInClientContent: true } };
  const seed = encodeRebuiltContext({
    items: [
      { role: "user", text: "What are your hours?" },
      { role: "model_calls", calls: [{ id: "a", name: "lookup_faq", args: { topic: "hours" } }] },
      {
        role: "tool_results",
        results: [{ callId: "a", name: "lookup_faq", result: { answer: "9-5" } }],
      },
      { role: "model", text: "We are open nine to five." },
    ],
  });

  it("the seed (turnComplete true) never produces a generation; the next turn is answered once", () => {
    const sim = new SimDriver();
    sim.setup(history, TOOLS);
    expect(seed.clientContent.turnComplete).toBe(true);
    const out = sim.send(seed);
    expect(sim.closed).toBeNull();
    expect(out).toEqual([]);
    sim.user("what did you say");
    expect(sim.text()).toContain("We are open nine to five.");
    expect(sim.count(turnCompletes)).toBe(1);
  });

  /** A seed whose lookup result came after the model's last words (never spoken), then `after`. */
  const unspokenSeed = (after: Parameters<typeof encodeRebuiltContext>[0]["items"] = []) =>
    encodeRebuiltContext({
      items: [
        { role: "user", text: "What are your hours?" },
        { role: "model", text: "Let me look." },
        { role: "model_calls", calls: [{ id: "a", name: "lookup_faq", args: {} }] },
        {
          role: "tool_results",
          results: [{ callId: "a", name: "lookup_faq", result: { answer: "9-5" } }],
        },
        ...after,
      ],
    });

  it("outcomes the seed shows after the model's last words are owed: said when asked to go on", () => {
    const unspoken = unspokenSeed();
    const sim = new SimDriver();
    sim.setup(history, TOOLS);
    expect(sim.send(unspoken)).toEqual([]); // still never answered by itself
    sim.user("Please continue.");
    expect(sim.text()).toContain("lookup_faq found: 9-5.");
    // A seed whose results were spoken owes nothing: the next input gets its own answer.
    const spoken = new SimDriver();
    spoken.setup(history, TOOLS);
    spoken.send(seed);
    spoken.user("hello");
    expect(spoken.text()).not.toContain("lookup_faq found");
  });

  it("owed outcomes and a last line no model turn followed: asked to go on, it says the outcomes, then answers the line", () => {
    // A line carried across a rebuild: the seed ends with it, after unspoken results (found
    // by the attack: the results alone ended the turn, the line never answered).
    const carried = unspokenSeed([{ role: "user", text: "typed line 0" }]);
    const sim = new SimDriver();
    sim.setup(history, TOOLS);
    expect(sim.send(carried)).toEqual([]);
    sim.user("Please continue.");
    const said = sim.text();
    expect(said).toContain("lookup_faq found: 9-5.");
    expect(said).toContain("typed line 0");
    expect(said.indexOf("lookup_faq found")).toBeLessThan(said.indexOf("typed line 0"));
    expect(sim.count(turnCompletes)).toBe(1);
  });

  it("control: the same seed without historyConfig is a user turn, and is answered", () => {
    const sim = new SimDriver();
    sim.setup({}, TOOLS);
    const out = sim.send(seed);
    expect(out.filter(turnCompletes).length).toBe(1);
  });

  it("only the first clientContent is history: a later one is a user turn", () => {
    const sim = new SimDriver();
    sim.setup(history, TOOLS);
    sim.send(seed);
    sim.user("hello");
    expect(sim.count(turnCompletes)).toBe(1);
  });
});
