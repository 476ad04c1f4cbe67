import { describe, expect, it } from "vitest";
import { DEFAULT_KNOBS, parseKnobs, type SimulatorKnobs } from "../../src/simulator/knobs.js";
import { decl, SimDriver, turnCompletes } from "./driver.js";
import { callIds, OaiDriver, said } from "./openai-driver.js";

/**
 * The `repeatAnswers` knob: a real model with a deterministic tool answers the same question
 * with the same words, and a gateway must not take that honest repeat for a regenerated
 * reply. Without the knob every answer carries a unique `[#rN]` tag and a varied opening, so
 * the simulator never repeats itself and that blind spot cannot be tested.
 */

const Q = "what are your hours?";
const ANSWER = `Sure. You said: “${Q}”. That is a good question, and here is a short answer. Anything else?`;
const faqEveryTurn = { calls: { byTurn: {}, otherwise: ["lookup_faq"] } };

/** One user line on the Gemini face and what the model said for it (tool results answered). */
function askGemini(sim: SimDriver, text: string, result?: unknown): string {
  const from = sim.frames.length;
  const callsBefore = sim.calls().length;
  sim.user(text);
  sim.runTimers();
  if (result !== undefined) {
    for (const c of sim.calls().slice(callsBefore)) {
      sim.respond([{ id: c.id, name: c.name, response: { output: result } }]);
    }
    sim.runTimers();
  }
  return sim.text(from);
}

/** One user line on the OpenAI face: its response, then (with a result) the response after it. */
function askOpenAI(face: OaiDriver, text: string, result?: string): string[] {
  face.user(text);
  const first = [...face.send({ type: "response.create" }), ...face.tick(600_000)];
  const out = [said(first)];
  if (result !== undefined) {
    for (const id of callIds(first)) face.output(id, result);
    out.push(said([...face.send({ type: "response.create" }), ...face.tick(600_000)]));
  }
  return out;
}

describe("the repeatAnswers knob", () => {
  it("is parsed (default off) and refused when malformed", () => {
    expect(DEFAULT_KNOBS.repeatAnswers).toBe(false);
    expect(parseKnobs(new URLSearchParams("repeatAnswers=1")).repeatAnswers).toBe(true);
    expect(parseKnobs(new URLSearchParams("repeatAnswers=off")).repeatAnswers).toBe(false);
    expect(() => parseKnobs(new URLSearchParams("repeatAnswers=sometimes"))).toThrow(
      /repeatAnswers/,
    );
  });
});

describe("Gemini face, repeatAnswers: the same line gets the same words", () => {
  it("TEXT: word for word, no tag, no greeting turn, whatever the seed or the turn", () => {
    const sim = new SimDriver({ repeatAnswers: true });
    sim.setup();
    const first = askGemini(sim, Q);
    askGemini(sim, "something else");
    const again = askGemini(sim, Q);
    expect(first).toBe(ANSWER);
    expect(again).toBe(first);
    // Another session, another seed (other chunking), the line asked later: the same words.
    const other = new SimDriver({ repeatAnswers: true, seed: 99 });
    other.setup();
    askGemini(other, "hi");
    expect(askGemini(other, Q)).toBe(ANSWER);
  });

  it("without the knob the same line never gets the same words (the blind spot)", () => {
    const sim = new SimDriver();
    sim.setup();
    askGemini(sim, "hi");
    expect(askGemini(sim, Q)).not.toBe(askGemini(sim, Q));
  });

  it("AUDIO: the output transcription is the same words as the text", () => {
    const sim = new SimDriver({ repeatAnswers: true, msPerWord: 10 });
    sim.setup({
      generationConfig: { responseModalities: ["AUDIO"] },
      outputAudioTranscription: {},
    });
    expect(askGemini(sim, Q)).toBe(ANSWER);
    expect(askGemini(sim, Q)).toBe(ANSWER);
  });

  it("the answer after a tool result is a function of the tool and the result (blocking call)", () => {
    const sim = new SimDriver({ repeatAnswers: true, race: 0, ...faqEveryTurn });
    sim.setup({}, [decl("lookup_faq", "BLOCKING")]);
    const first = askGemini(sim, Q, { hours: "9-5" });
    const again = askGemini(sim, Q, { hours: "9-5" });
    expect(first).toContain("Here is what lookup_faq found: the hours are 9-5.");
    expect(again).toBe(first);
    expect(sim.count(turnCompletes)).toBe(2);
    // Another result, other words.
    expect(askGemini(sim, Q, { hours: "10-4" })).not.toBe(first);
  });

  it("a late result (2.x fire-and-forget) is spoken in the same words each time", () => {
    const sim = new SimDriver({ repeatAnswers: true, race: 1, ...faqEveryTurn });
    sim.setup({}, [decl("lookup_faq", "BLOCKING")]);
    const results: string[] = [];
    for (let i = 0; i < 2; i++) {
      expect(askGemini(sim, Q)).toBe(ANSWER);
      const from = sim.frames.length;
      const call = sim.calls().at(-1)!;
      sim.respond([{ id: call.id, name: call.name, response: { output: { hours: "9-5" } } }]);
      sim.runTimers();
      results.push(sim.text(from));
    }
    expect(results[0]).toBe("Here is what lookup_faq found: the hours are 9-5.");
    expect(results[1]).toBe(results[0]);
  });

  it("a regeneration still happens, word for word the previous reply: text alone cannot tell it", () => {
    // A side-effect result after its turn ended makes the model say its previous reply again
    // (O1); with tags that showed as a tag twice, under repeatAnswers it reads as an honest
    // repeat. What prompted it (a late side-effect result, no new line) is the only evidence.
    const sim = new SimDriver({
      repeatAnswers: true,
      race: 1,
      calls: { byTurn: {}, otherwise: ["set_preference"] },
    });
    sim.setup({}, [decl("set_preference", "NON_BLOCKING")]);
    const reply = askGemini(sim, Q);
    const from = sim.frames.length;
    const call = sim.calls().at(-1)!;
    sim.respond([{ id: call.id, name: call.name, response: { output: "ok" } }]);
    sim.runTimers();
    expect(sim.text(from)).toBe(reply);
  });

  it("lines that read the context still read it, with no tag and no trailing space", () => {
    const sim = new SimDriver({ repeatAnswers: true });
    sim.setup();
    askGemini(sim, Q);
    expect(askGemini(sim, "what did you say?")).toBe(`I said: ${ANSWER}`);
    expect(askGemini(sim, "what do you remember?")).toBe("I remember no tool calls.");
  });
});

describe("OpenAI face, repeatAnswers: the same line gets the same words", () => {
  const knobs: Partial<SimulatorKnobs> = { repeatAnswers: true };

  it("text and audio transcript: word for word, no tag, no greeting turn", () => {
    const face = new OaiDriver(knobs);
    face.setup("text", []);
    const [first] = askOpenAI(face, Q);
    askOpenAI(face, "something else");
    const [again] = askOpenAI(face, Q);
    expect(first).toBe(ANSWER);
    expect(again).toBe(first);
    const audio = new OaiDriver({ ...knobs, seed: 5 });
    audio.setup("audio", []);
    expect(askOpenAI(audio, Q)).toEqual([ANSWER]);
    expect(askOpenAI(audio, Q)).toEqual([ANSWER]);
  });

  it("without the knob the same line never gets the same words", () => {
    const face = new OaiDriver();
    face.setup("text", []);
    askOpenAI(face, "hi");
    expect(askOpenAI(face, Q)).not.toEqual(askOpenAI(face, Q));
  });

  it("the response after a function_call_output is a function of the tool and the output", () => {
    const face = new OaiDriver({ ...knobs, ...faqEveryTurn });
    face.setup("text");
    const first = askOpenAI(face, Q, '{"hours":"9-5"}');
    const again = askOpenAI(face, Q, '{"hours":"9-5"}');
    expect(first).toEqual([
      `Sure. You said: “${Q}”. That is a good question, and here is a short answer.`,
      "Here is what lookup_faq found: the hours are 9-5. Anything else?",
    ]);
    expect(again).toEqual(first);
    expect(askOpenAI(face, Q, '{"hours":"10-4"}')[1]).not.toBe(first[1]);
  });

  it("a response.create with nothing new says the same words each time", () => {
    const face = new OaiDriver(knobs);
    face.setup("text", []);
    askOpenAI(face, Q);
    const once = said([...face.send({ type: "response.create" }), ...face.tick(600_000)]);
    const twice = said([...face.send({ type: "response.create" }), ...face.tick(600_000)]);
    expect(once).toBe("Anything else?");
    expect(twice).toBe(once);
  });
});
