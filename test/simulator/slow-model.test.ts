import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeServerFrame } from "../../src/providers/gemini/decode.js";
import type { GeminiServerMessage } from "../../src/providers/gemini/schemas.js";
import { ServerEvent } from "../../src/providers/openai/schemas.js";
import { StrictContent } from "../../src/simulator/gemini/strict-schemas.js";
import { DEFAULT_KNOBS, parseKnobs } from "../../src/simulator/knobs.js";
import { decl, SimDriver, T0 } from "./driver.js";
import { callIds, OaiDriver, types } from "./openai-driver.js";

/**
 * A slow model (`latencyMs`, the time to its first content) on both faces: the wait comes
 * before a turn's answer and before the answer to tool results; what each face sends while
 * it waits; and the Gemini face's opt-in signs of work (`workSigns`): thought parts.
 */

const LOOKUP = { calls: { byTurn: {}, otherwise: ["lookup_faq"] } };
const hasContent = (f: GeminiServerMessage) =>
  (f.serverContent?.modelTurn?.parts ?? []).some((p) => p.thought !== true) ||
  f.serverContent?.outputTranscription !== undefined;
const isThought = (f: GeminiServerMessage) =>
  (f.serverContent?.modelTurn?.parts ?? []).some((p) => p.thought === true);

/** Steps the clock to each wake-up until `pred` holds for a frame sent; returns its time. */
function firstAt(sim: SimDriver, pred: (f: GeminiServerMessage) => boolean): number {
  for (let i = 0; i < 1000 && sim.wakeAt !== null; i++) {
    sim.now = sim.wakeAt;
    if (sim.input({ type: "tick" }).some(pred)) return sim.now;
  }
  throw new Error("never came");
}

describe("Gemini face: latencyMs before a turn's answer and before the answer to tool results", () => {
  it("the first content of a turn comes latencyMs after the line", () => {
    const sim = new SimDriver({ timeScale: 1, latencyMs: 2000, msPerWord: 100 });
    sim.setup();
    expect(sim.user("hi").filter(hasContent)).toEqual([]);
    expect(firstAt(sim, hasContent)).toBe(T0 + 2000);
  });

  it("a blocking call's results: latencyMs again before the model speaks them", () => {
    const sim = new SimDriver({
      timeScale: 1,
      latencyMs: 2000,
      msPerWord: 100,
      race: 0,
      ...LOOKUP,
    });
    sim.setup({}, [decl("lookup_faq", "BLOCKING")]);
    sim.user("what are your hours?");
    sim.runTimers();
    const [call] = sim.calls();
    expect(call).toBeDefined();
    sim.now += 5000;
    const answeredAt = sim.now;
    const out = sim.respond([{ id: call!.id, name: "lookup_faq", response: { output: "9-5" } }]);
    expect(out.filter(hasContent)).toEqual([]);
    expect(firstAt(sim, hasContent)).toBe(answeredAt + 2000);
    sim.runTimers();
    expect(sim.text()).toContain("Here is what lookup_faq found: 9-5.");
  });

  it("3.x (every call blocks): the same wait after the results", () => {
    const sim = new SimDriver({ timeScale: 1, latencyMs: 1500, msPerWord: 100, ...LOOKUP });
    sim.setup({ model: "models/gemini-3.1-flash-live-preview" }, [decl("lookup_faq")]);
    sim.send({ realtimeInput: { text: "what are your hours?" } });
    sim.runTimers();
    const [call] = sim.calls();
    const answeredAt = sim.now;
    sim.respond([{ id: call!.id, name: "lookup_faq", response: { output: "9-5" } }]);
    expect(firstAt(sim, hasContent)).toBe(answeredAt + 1500);
  });

  it("a late result (2.x fire-and-forget) is answered after latencyMs too", () => {
    const sim = new SimDriver({
      timeScale: 1,
      latencyMs: 2000,
      msPerWord: 100,
      race: 1,
      ...LOOKUP,
    });
    sim.setup({}, [decl("lookup_faq", "BLOCKING")]);
    sim.user("what are your hours?");
    sim.runTimers();
    const [call] = sim.calls();
    const answeredAt = sim.now;
    sim.respond([{ id: call!.id, name: "lookup_faq", response: { output: "9-5" } }]);
    expect(firstAt(sim, hasContent)).toBe(answeredAt + 2000);
  });
});

describe("Gemini face: workSigns, a thought part every second while the model waits", () => {
  it("is parsed, default off", () => {
    expect(DEFAULT_KNOBS.workSigns).toBe(false);
    expect(parseKnobs(new URLSearchParams("workSigns=true")).workSigns).toBe(true);
    expect(() => parseKnobs(new URLSearchParams("workSigns=2"))).toThrow(/workSigns/);
  });

  it("at 1 s, 2 s, 3 s of a 3.5 s wait; valid frames the adapter decodes to nothing", () => {
    const sim = new SimDriver({ timeScale: 1, latencyMs: 3500, msPerWord: 100, workSigns: true });
    sim.setup({
      generationConfig: { responseModalities: ["AUDIO"] },
      outputAudioTranscription: {},
    });
    sim.user("hi");
    const signs: number[] = [];
    let contentAt = 0;
    while (sim.wakeAt !== null && contentAt === 0) {
      sim.now = sim.wakeAt;
      for (const f of sim.input({ type: "tick" })) {
        if (isThought(f)) signs.push(sim.now - T0);
        if (hasContent(f) && contentAt === 0) contentAt = sim.now - T0;
      }
    }
    expect(signs).toEqual([1000, 2000, 3000]);
    expect(contentAt).toBe(3500);
    const thoughts = sim.frames.filter(isThought);
    for (const f of thoughts) {
      // Exactly the shape a thinking model sends: serverContent.modelTurn with one text part
      // marked thought (the driver has checked each against ServerMessage and the decoder).
      expect(Object.keys(f)).toEqual(["serverContent"]);
      expect(Object.keys(f.serverContent!)).toEqual(["modelTurn"]);
      expect(StrictContent.safeParse(f.serverContent!.modelTurn).success).toBe(true);
      expect(f.serverContent!.modelTurn!.parts).toEqual([
        { text: expect.any(String), thought: true },
      ]);
      // liveline's adapter takes it, and takes it for reasoning: nothing said, nothing called.
      const decoded = decodeServerFrame(new TextEncoder().encode(JSON.stringify(f)), {
        ...sim.decoder,
      });
      expect(decoded.ok).toBe(true);
      const said = (decoded.ok ? decoded.events : []).filter((e) =>
        ["text_delta", "audio_delta", "transcript_delta", "tool_call"].includes(e.type),
      );
      expect(said).toEqual([]);
    }
    // Thoughts are never speech.
    sim.runTimers();
    expect(sim.text()).not.toMatch(/thinking/i);
  });

  it("also while it waits over tool results; none without the knob", () => {
    const run = (workSigns: boolean) => {
      const sim = new SimDriver({
        timeScale: 1,
        latencyMs: 2500,
        msPerWord: 100,
        race: 0,
        workSigns,
        ...LOOKUP,
      });
      sim.setup({}, [decl("lookup_faq", "BLOCKING")]);
      sim.user("what are your hours?");
      sim.runTimers();
      const before = sim.frames.filter(isThought).length;
      const [call] = sim.calls();
      sim.respond([{ id: call!.id, name: "lookup_faq", response: { output: "9-5" } }]);
      sim.runTimers();
      return [before, sim.frames.filter(isThought).length - before];
    };
    expect(run(true)).toEqual([2, 2]);
    expect(run(false)).toEqual([0, 0]);
  });
});

describe("OpenAI face: what comes before a slow response's first content", () => {
  const FIXTURE = resolve(process.cwd(), "test/fixtures/openai/realtime-event-examples.json");
  const examples = JSON.parse(new TextDecoder().decode(readFileSync(FIXTURE))) as Record<
    string,
    { example: string }
  >;
  const rateLimitsExample = JSON.parse(examples["rate_limits.updated"]!.example) as {
    rate_limits: Record<string, unknown>[];
  };

  it("response.created and rate_limits.updated at once, then nothing until latencyMs", () => {
    const face = new OaiDriver({ timeScale: 1, latencyMs: 2000, msPerWord: 100, ...LOOKUP });
    face.setup("text");
    face.user("what are your hours?");
    const start = face.send({ type: "response.create" });
    expect(types(start)).toEqual(["response.created", "rate_limits.updated"]);
    expect(ServerEvent.safeParse(start[0]).success).toBe(true);
    // Shaped as the API reference's example: the same fields, each limit the same keys.
    const limits = start[1]!.rate_limits as Record<string, unknown>[];
    expect(Object.keys(start[1]!).sort()).toEqual(
      Object.keys({ ...rateLimitsExample, event_id: "" }).sort(),
    );
    expect(limits.map((l) => l.name)).toEqual(rateLimitsExample.rate_limits.map((l) => l.name));
    for (const l of limits) {
      expect(Object.keys(l).sort()).toEqual(Object.keys(rateLimitsExample.rate_limits[0]!).sort());
    }
    expect(face.tick(1999)).toEqual([]);
    expect(types(face.tick(1))[0]).toBe("response.output_item.added");
    const rest = face.tick(600_000);
    // The response after the function_call_output waits latencyMs too.
    const [callId] = callIds(rest);
    face.output(callId!, '{"hours":"9-5"}');
    expect(types(face.send({ type: "response.create" }))).toEqual([
      "response.created",
      "rate_limits.updated",
    ]);
    expect(face.tick(1999)).toEqual([]);
    expect(types(face.tick(1))[0]).toBe("response.output_item.added");
  });

  it("workSigns changes nothing on the OpenAI face (the wire has no sign of work to send)", () => {
    const run = (workSigns: boolean) => {
      const face = new OaiDriver({ timeScale: 1, latencyMs: 3500, workSigns });
      face.setup("text", []);
      face.user("hi");
      face.send({ type: "response.create" });
      return [face.tick(1000), face.tick(1000), face.tick(1000), face.tick(499)];
    };
    expect(run(true)).toEqual([[], [], [], []]);
    expect(run(true)).toEqual(run(false));
  });
});
