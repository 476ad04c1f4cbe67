import { describe, expect, it } from "vitest";
import { schedulingOf } from "../../src/simulator/gemini/machine.js";
import { DEFAULT_KNOBS, parseKnobs } from "../../src/simulator/knobs.js";
import { decl, SimDriver, T0, tagCounts, turnCompletes } from "./driver.js";

const GREETING_TOOLS = [
  decl("suggest_topics", "NON_BLOCKING"),
  decl("set_preference", "NON_BLOCKING"),
  decl("lookup_faq", "BLOCKING"),
];
/** The field case: a greeting with two fire-and-forget calls (the default script sets nothing on a "hi"). */
const TWO_SIDE_EFFECTS = { byTurn: { 1: ["suggest_topics", "set_preference"] }, otherwise: [] };

describe("connection start", () => {
  it("answers setup with setupComplete {} and nothing else", () => {
    const sim = new SimDriver();
    expect(sim.setup()).toEqual([{ setupComplete: {} }]);
    expect(sim.closed).toBeNull();
  });

  it("closes 1007 when the first message is not setup, is not JSON, or is not a client message", () => {
    for (const frame of [
      JSON.stringify({ clientContent: { turns: [], turnComplete: true } }),
      "not json",
      JSON.stringify({ hello: 1 }),
      JSON.stringify({ setup: { model: "m" }, toolResponse: { functionResponses: [] } }),
    ]) {
      const sim = new SimDriver();
      expect(sim.input({ type: "frame", text: frame })).toEqual([]);
      expect(sim.closed?.code, frame).toBe(1007);
      expect(sim.closed?.reason).toMatch(/invalid argument|Invalid JSON payload/i);
      // Closed is closed: nothing more comes out.
      expect(sim.setup()).toEqual([]);
    }
  });

  it("closes 1007 on a second setup, and takes snake_case top-level keys", () => {
    const sim = new SimDriver();
    sim.setup();
    sim.send({ client_content: { turns: [{ parts: [{ text: "hi" }] }], turnComplete: true } });
    expect(sim.count(turnCompletes)).toBe(1);
    sim.setup();
    expect(sim.closed?.code).toBe(1007);
  });
});

describe("generations", () => {
  it("a text turn: text parts, then generationComplete, then turnComplete with usageMetadata in one frame", () => {
    const sim = new SimDriver({ seed: 3 });
    sim.setup();
    const out = sim.user("hello");
    const texts = out.filter((f) => f.serverContent?.modelTurn?.parts?.[0]?.text !== undefined);
    expect(texts.length).toBeGreaterThan(2);
    expect(sim.text()).toMatch(/^Hello! I'm the liveline simulator.*\[#r1\]$/);
    const gc = out.findIndex((f) => f.serverContent?.generationComplete === true);
    const tc = out.findIndex(turnCompletes);
    expect(gc).toBe(out.length - 2);
    expect(tc).toBe(out.length - 1);
    expect(out[tc]!.usageMetadata?.responseTokenCount).toBeGreaterThan(0);
    // The second turn is not a greeting, echoes the user and has the next answer id.
    sim.user("what is liveline?");
    expect(sim.text()).toMatch(/You said: “what is liveline\?”.*\[#r2\]$/);
  });

  it("AUDIO: 24 kHz PCM16 inlineData plus outputTranscription when asked for", () => {
    const sim = new SimDriver({ msPerWord: 10 });
    sim.setup({
      generationConfig: { responseModalities: ["AUDIO"] },
      outputAudioTranscription: {},
    });
    const out = sim.user("hi");
    const audio = out
      .flatMap((f) => f.serverContent?.modelTurn?.parts ?? [])
      .filter((p) => p.inlineData);
    expect(audio.length).toBeGreaterThan(0);
    for (const part of audio) {
      expect(part.inlineData!.mimeType).toBe("audio/pcm;rate=24000");
      const bytes = atob(part.inlineData!.data).length;
      expect(bytes % 480).toBe(0); // whole 10 ms steps of 24 kHz 16-bit samples
    }
    expect(sim.text()).toContain("Hello!");
    expect(sim.events.filter((e) => e.type === "audio_delta").length).toBe(audio.length);
    // Without outputAudioTranscription there is audio but no text.
    const quiet = new SimDriver({ msPerWord: 10 });
    quiet.setup({ generationConfig: { responseModalities: ["AUDIO"] } });
    quiet.user("hi");
    expect(quiet.text()).toBe("");
  });

  it("paces replies by timeScale; timeScale 0 sends the whole reply at once", () => {
    const paced = new SimDriver({ timeScale: 1, latencyMs: 500, msPerWord: 100 });
    paced.setup();
    expect(paced.user("hi")).toEqual([]);
    expect(paced.wakeAt).toBe(T0 + 500);
    paced.runTimers();
    expect(paced.count(turnCompletes)).toBe(1);
    expect(paced.now - T0).toBeGreaterThan(500 + 100 * 10);
    const half = new SimDriver({ timeScale: 0.5, latencyMs: 500 });
    half.setup();
    half.user("hi");
    expect(half.wakeAt).toBe(T0 + 250);
  });

  it("is deterministic: same seed and inputs give the same frames; another seed differs", () => {
    const run = (seed: number) => {
      const sim = new SimDriver({ seed, race: 0.5, duplicateCalls: 0.5, emptyRate: 0.3 });
      sim.setup({}, GREETING_TOOLS);
      for (let i = 0; i < 6; i++) {
        sim.user(`turn ${i} lookup_faq`);
        for (const c of sim.calls())
          sim.respond([{ id: c.id, name: c.name, response: { output: i } }]);
      }
      return JSON.stringify(sim.frames);
    };
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
  });
});

describe("tool calls", () => {
  it("BLOCKING (race=0, assumed): the reply waits for the response, then speaks the result and ends", () => {
    const sim = new SimDriver({ race: 0, calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    const [call] = sim.calls();
    expect(call?.id).toMatch(/^function-call-\d+$/);
    expect(call?.args).toEqual({ topic: "hi" });
    expect(sim.count(turnCompletes)).toBe(0);
    const out = sim.respond([
      { id: call!.id, name: "lookup_faq", response: { output: { answer: 42 } } },
    ]);
    expect(sim.count(turnCompletes)).toBe(1);
    const said = out.map((f) => f.serverContent?.modelTurn?.parts?.[0]?.text ?? "").join("");
    expect(said).toContain("Here is what lookup_faq found: 42.");
    expect(said).toContain("What would you like to talk about today? [#r1]");
  });

  it("race=1: the call after the speech, then generationComplete and turnComplete in the same step", () => {
    const sim = new SimDriver({ race: 1, calls: TWO_SIDE_EFFECTS });
    sim.setup({}, GREETING_TOOLS);
    const out = sim.user("hi");
    const n = out.length;
    expect(out[n - 3]!.toolCall?.functionCalls?.map((c) => c.name)).toEqual([
      "suggest_topics",
      "set_preference",
    ]);
    expect(out[n - 2]!.serverContent?.generationComplete).toBe(true);
    expect(out[n - 1]!.serverContent?.turnComplete).toBe(true);
    expect(out.slice(0, n - 3).every((f) => f.serverContent?.modelTurn?.parts?.[0]?.text)).toBe(
      true,
    );
  });

  it("a late side-effect response without scheduling regenerates the previous reply in full", () => {
    const sim = new SimDriver({ race: 1, calls: TWO_SIDE_EFFECTS });
    sim.setup({}, [decl("suggest_topics"), decl("set_preference")]);
    sim.user("hi");
    const first = sim.text();
    const [a, b] = sim.calls();
    const mark = sim.frames.length;
    sim.respond([{ id: a!.id, name: a!.name, response: { output: "ok" } }]);
    expect(sim.text(mark)).toBe(first);
    expect(tagCounts(sim.text()).get("[#r1]")).toBe(2);
    // Each late response is new input: the second one regenerates again.
    sim.respond([{ id: b!.id, name: b!.name, response: { output: "ok" } }]);
    expect(tagCounts(sim.text()).get("[#r1]")).toBe(3);
  });

  it("a late informational result is spoken once; a second response for the same call is ignored", () => {
    const sim = new SimDriver({ race: 1, calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    const [c] = sim.calls();
    sim.respond([{ id: c!.id, name: "lookup_faq", response: { output: "yes" } }]);
    sim.respond([{ id: c!.id, name: "lookup_faq", response: { output: "yes" } }]);
    sim.respond([{ id: "function-call-never", name: "lookup_faq", response: { output: "x" } }]);
    expect(sim.text().match(/lookup_faq found/g)?.length).toBe(1);
    expect(sim.count(turnCompletes)).toBe(2);
  });

  it("SILENT on a NON_BLOCKING call is quiet, in either placement; ignoreSilent regenerates (O2)", () => {
    for (const placement of ["beside", "inside"] as const) {
      for (const ignoreSilent of [false, true]) {
        const sim = new SimDriver({ race: 1, ignoreSilent });
        sim.setup({}, GREETING_TOOLS);
        sim.user("hi");
        const tc = sim.count(turnCompletes);
        sim.respond(
          sim
            .calls()
            .map((c) =>
              placement === "beside"
                ? { id: c.id, name: c.name, response: { output: "ok" }, scheduling: "SILENT" }
                : { id: c.id, name: c.name, response: { output: "ok", scheduling: "SILENT" } },
            ),
        );
        expect(sim.count(turnCompletes) - tc, `${placement} ${ignoreSilent}`).toBe(
          ignoreSilent ? 1 : 0,
        );
      }
    }
    expect(schedulingOf({ name: "x", response: { scheduling: "WHEN_IDLE" } })).toBe("WHEN_IDLE");
    expect(schedulingOf({ name: "x", scheduling: "SILENT", response: {} })).toBe("SILENT");
  });

  it("SILENT on a BLOCKING call is ignored: the late result regenerates", () => {
    const sim = new SimDriver({ race: 1 });
    sim.setup({}, [decl("suggest_topics", "BLOCKING")]);
    sim.user("hi");
    const [c] = sim.calls();
    sim.respond([{ id: c!.id, name: c!.name, response: {}, scheduling: "SILENT" }]);
    expect(tagCounts(sim.text()).get("[#r1]")).toBe(2);
  });

  it("NON_BLOCKING without race: the reply goes on without waiting", () => {
    const sim = new SimDriver({ calls: TWO_SIDE_EFFECTS });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    expect(sim.calls().length).toBe(2);
    expect(sim.count(turnCompletes)).toBe(1);
  });

  it("syncOnly: no turnComplete until every call is answered, even NON_BLOCKING ones, and no race", () => {
    const sim = new SimDriver({ syncOnly: true, race: 1, calls: TWO_SIDE_EFFECTS });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    const [a, b] = sim.calls();
    expect(sim.count(turnCompletes)).toBe(0);
    sim.respond([{ id: a!.id, name: a!.name, response: {}, scheduling: "SILENT" }]);
    expect(sim.count(turnCompletes)).toBe(0);
    sim.respond([{ id: b!.id, name: b!.name, response: {} }]);
    expect(sim.count(turnCompletes)).toBe(1);
    expect(tagCounts(sim.text()).get("[#r1]")).toBe(1);
  });

  it("midSpeechCall: the call comes before the end of the speech", () => {
    const sim = new SimDriver({ race: 1, midSpeechCall: 1500, msPerWord: 300 });
    sim.setup({}, GREETING_TOOLS);
    const out = sim.user("hi");
    const callAt = out.findIndex((f) => f.toolCall);
    const textAfter = out.slice(callAt).filter((f) => f.serverContent?.modelTurn?.parts?.[0]?.text);
    expect(textAfter.length).toBeGreaterThan(0);
    expect(turnCompletes(out.at(-1)!)).toBe(true);
  });

  it("duplicateCalls: the call as a modelTurn part and as toolCall, one id; the decoder runs it once", () => {
    const sim = new SimDriver({
      duplicateCalls: 1,
      calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] },
    });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    const part = sim.frames
      .flatMap((f) => f.serverContent?.modelTurn?.parts ?? [])
      .find((p) => p.functionCall);
    expect(part?.functionCall?.id).toBe(sim.calls()[0]!.id);
    expect(sim.events.filter((e) => e.type === "tool_call").length).toBe(1);
  });

  it("noIds: calls without ids; responses are matched by name", () => {
    const sim = new SimDriver({
      race: 0,
      noIds: true,
      calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] },
    });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    expect(sim.calls()[0]!.id).toBeUndefined();
    const synthetic = sim.events.find((e) => e.type === "tool_call");
    expect(synthetic?.type === "tool_call" && synthetic.calls[0]!.id).toMatch(/^t-1-lookup_faq$/);
    sim.respond([{ id: "t-1-lookup_faq", name: "lookup_faq", response: { output: "n" } }]);
    expect(sim.count(turnCompletes)).toBe(1);
    expect(sim.text()).toContain("lookup_faq found");
  });

  it("default script: the greeting calls the side-effect tools but the setter; a later turn the informational one it names; a stated preference the setter", () => {
    const sim = new SimDriver();
    sim.setup({}, [...GREETING_TOOLS, decl("show_card", "NON_BLOCKING")]);
    sim.user("hi");
    expect(sim.calls().map((c) => c.name)).toEqual(["suggest_topics", "show_card"]);
    sim.user("check the faq please");
    expect(sim.calls().at(-1)?.name).toBe("lookup_faq");
    sim.user("My favourite colour is blue.");
    expect(sim.calls().at(-1)?.name).toBe("set_preference");
    const custom = new SimDriver({ sideEffects: ["lookup_faq"] });
    custom.setup({}, GREETING_TOOLS);
    custom.user("hi");
    expect(custom.calls().map((c) => c.name)).toEqual(["lookup_faq"]);
  });
});

describe("empty replies", () => {
  /** "hi" calls lookup_faq; the reply after its result comes out empty (what it returns). */
  function emptyAfterLookup(sim: SimDriver, setup: Record<string, unknown> = {}) {
    sim.setup(setup, GREETING_TOOLS);
    sim.user("hi");
    const [c] = sim.calls();
    return sim.respond([{ id: c!.id, name: "lookup_faq", response: { output: "v" } }]);
  }
  const EMPTY_AFTER_LOOKUP = {
    race: 0,
    emptyRate: 1,
    calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] },
  };

  it("emptyRate=1: the reply after tool results is empty; the next clientContent gets the real one", () => {
    const sim = new SimDriver(EMPTY_AFTER_LOOKUP);
    const out = emptyAfterLookup(sim);
    expect(out.map((f) => Object.keys(f.serverContent ?? {}))).toEqual([
      ["generationComplete"],
      ["turnComplete"],
    ]);
    const nudge = sim.user("Please continue.");
    const said = nudge.map((f) => f.serverContent?.modelTurn?.parts?.[0]?.text ?? "").join("");
    expect(said).toContain("lookup_faq found");
    expect(said).toContain("[#r1]");
    // The nudge is not a user turn: the next turn is turn 2, not a repeat of the greeting.
    sim.user("next");
    expect(sim.text()).toContain("You said: “next”");
  });

  it("the reply owed after an empty one survives a resumption (the handle covers it)", () => {
    const first = new SimDriver(EMPTY_AFTER_LOOKUP, "alpha");
    emptyAfterLookup(first, { sessionResumption: {} });
    const [handle, context] = [...first.saved].at(-1)!;
    const second = new SimDriver({}, "beta");
    second.setup({ sessionResumption: { handle } }, GREETING_TOOLS);
    second.input({ type: "resume_context", handle, context });
    second.user("Please continue.");
    expect(second.text()).toContain("lookup_faq found");
  });

  it("emptySchedule names replies of the connection (1-based)", () => {
    const sim = new SimDriver({ emptySchedule: [2, 3] });
    sim.setup();
    sim.user("one");
    sim.user("two");
    sim.user("Please continue.");
    const perTurn = sim.batches.slice(-3).map((b) => b.some((f) => f.serverContent?.modelTurn));
    expect(perTurn).toEqual([true, false, false]);
    // Reply 3 was the nudge for reply 2 (owed), so it stays owed; reply 4 delivers it.
    sim.user("Please continue.");
    expect(sim.text()).toContain("You said: “two”");
  });

  it("after an empty reply a new line gets its own answer, the owed results said first", () => {
    const sim = new SimDriver(EMPTY_AFTER_LOOKUP);
    emptyAfterLookup(sim);
    const before = sim.frames.length;
    sim.user("and refunds?");
    const said = sim.text(before);
    expect(said).toContain("lookup_faq found");
    expect(said).toContain("You said: “and refunds?”");
  });
});

describe("barge-in", () => {
  it("clientContent during a reply with pending calls: interrupted, turnComplete, toolCallCancellation", () => {
    const sim = new SimDriver({
      race: 0,
      timeScale: 1,
      calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] },
    });
    sim.setup({}, GREETING_TOOLS);
    sim.user("hi");
    sim.runTimers();
    const [c] = sim.calls();
    expect(c).toBeDefined();
    const out = sim.user("stop, something else");
    expect(out[0]).toEqual({ serverContent: { interrupted: true } });
    expect(out[1]).toEqual({ serverContent: { turnComplete: true } });
    expect(out[2]).toEqual({ toolCallCancellation: { ids: [c!.id] } });
    // A late response for the cancelled call is ignored.
    sim.runTimers();
    const n = sim.frames.length;
    sim.respond([{ id: c!.id, name: "lookup_faq", response: {} }]);
    expect(sim.frames.length).toBe(n);
  });

  it("audio: speech end gives inputTranscription (finished) and then the reply; audio mid-reply interrupts", () => {
    const sim = new SimDriver({ timeScale: 1 });
    sim.setup();
    const chunk = btoa(String.fromCharCode(...new Uint8Array(3200)));
    sim.send({ realtimeInput: { audio: { data: chunk, mimeType: "audio/pcm;rate=16000" } } });
    const out = sim.send({ realtimeInput: { audioStreamEnd: true } });
    expect(out[0]).toEqual({
      serverContent: { inputTranscription: { text: "What can you do?", finished: true } },
    });
    expect(sim.events.find((e) => e.type === "input_transcript")).toEqual({
      type: "input_transcript",
      text: "What can you do?",
      finished: true,
    });
    sim.now += 1000;
    sim.input({ type: "tick" });
    const barge = sim.send({
      realtimeInput: { audio: { data: chunk, mimeType: "audio/pcm;rate=16000" } },
    });
    expect(barge[0]).toEqual({ serverContent: { interrupted: true } });
    // utteranceMs ends an utterance by amount.
    const auto = new SimDriver({ utteranceMs: 100 });
    auto.setup();
    auto.send({ realtimeInput: { audio: { data: chunk } } });
    expect(auto.count(turnCompletes)).toBe(1);
  });
});

describe("session resumption and connection limits", () => {
  const resumption = { sessionResumption: {} };

  it("a handle after each idle turn, resumable:false while generating or while calls are pending", () => {
    const sim = new SimDriver({ race: 1 });
    sim.setup(resumption, GREETING_TOOLS);
    sim.user("hi");
    const updates = sim.frames.flatMap((f) =>
      f.sessionResumptionUpdate ? [f.sessionResumptionUpdate] : [],
    );
    expect(updates).toEqual([{ resumable: false }, { resumable: false }]);
    sim.respond(
      sim.calls().map((c) => ({ id: c.id, name: c.name, response: {}, scheduling: "SILENT" })),
    );
    sim.user("next");
    const last = sim.frames.at(-1)!.sessionResumptionUpdate;
    expect(last).toEqual({ newHandle: "s1:c1:1", resumable: true });
    expect(sim.saved.get("s1:c1:1")?.userTurns).toBe(2);
  });

  it("resuming from a known handle restores the context; unknown or expired handles close 1007", () => {
    const first = new SimDriver({}, "alpha");
    first.setup(resumption);
    first.user("hi");
    const [handle, context] = [...first.saved][0]!;
    const second = new SimDriver({}, "beta");
    expect(second.setup({ sessionResumption: { handle } })).toEqual([]);
    expect(second.effects.at(-1)).toEqual({ type: "lookup_handle", handle });
    second.input({ type: "resume_context", handle, context });
    expect(second.frames[0]).toEqual({ setupComplete: {} });
    second.user("please repeat that");
    expect(second.text()).toContain(`I said: ${first.text()}`);
    expect(second.text()).toContain("[#r2]");
    const unknown = new SimDriver();
    unknown.setup({ sessionResumption: { handle: "nope:x:1" } });
    unknown.input({ type: "resume_context", handle: "nope:x:1", context: null });
    expect(unknown.closed?.code).toBe(1007);
    const expired = new SimDriver({ handleTtlMs: 1000 });
    expired.setup({ sessionResumption: { handle } });
    expired.now += 5000;
    expired.input({ type: "resume_context", handle, context });
    expect(expired.closed?.code).toBe(1007);
  });

  it("goAwayAfterTurns: goAway{timeLeft} after N turns, close that long after", () => {
    const sim = new SimDriver({ goAwayAfterTurns: 2, goAwayMs: 1500 });
    sim.setup();
    sim.user("a");
    expect(sim.count((f) => f.goAway !== undefined)).toBe(0);
    sim.user("b");
    expect(sim.frames.at(-1)).toEqual({ goAway: { timeLeft: "1.5s" } });
    expect(sim.wakeAt).toBe(T0 + 1500);
    sim.runTimers();
    expect(sim.closed?.code).toBe(1011);
    expect(sim.now).toBe(T0 + 1500);
  });

  it("dropAfterMs closes 1011 without goAway; maxConnectionMs sends goAway goAwayMs before its close", () => {
    const drop = new SimDriver({ dropAfterMs: 700 });
    drop.setup();
    drop.runTimers();
    expect(drop.closed).toEqual({ code: 1011, reason: "Internal error encountered." });
    expect(drop.now).toBe(T0 + 700);
    expect(drop.count((f) => f.goAway !== undefined)).toBe(0);
    const limit = new SimDriver({ maxConnectionMs: 10_000, goAwayMs: 3000 });
    limit.setup();
    limit.runTimers(7000);
    expect(limit.frames.at(-1)).toEqual({ goAway: { timeLeft: "3s" } });
    limit.runTimers();
    expect(limit.closed?.code).toBe(1011);
    expect(limit.now).toBe(T0 + 10_000);
    const away = new SimDriver({ goAwayAfterMs: 50, goAwayMs: 0 });
    away.runTimers();
    expect(away.frames).toEqual([{ goAway: { timeLeft: "0s" } }]);
    expect(away.closed?.code).toBe(1011);
  });
});

describe("knobs", () => {
  it("defaults, parsing and refusals", () => {
    expect(parseKnobs(new URLSearchParams())).toEqual(DEFAULT_KNOBS);
    const k = parseKnobs(
      new URLSearchParams(
        "seed=9&timeScale=0&frames=text&race=0.5&ignoreSilent=1&emptySchedule=2,4&calls=greeting:suggest_topics,set_preference;lookup_faq;*:x&sideEffects=a,b",
      ),
    );
    expect(k).toMatchObject({
      seed: 9,
      timeScale: 0,
      frames: "text",
      race: 0.5,
      ignoreSilent: true,
    });
    expect(k.emptySchedule).toEqual([2, 4]);
    expect(k.calls).toEqual({
      byTurn: { 1: ["suggest_topics", "set_preference"], 2: ["lookup_faq"] },
      otherwise: ["x"],
    });
    expect(k.sideEffects).toEqual(["a", "b"]);
    for (const bad of [
      "race=2",
      "frames=xml",
      "emptySchedule=0",
      "seed=1.5",
      "calls=x:y",
      "noIds=maybe",
    ]) {
      expect(() => parseKnobs(new URLSearchParams(bad)), bad).toThrow();
    }
  });
});

// Found by the attack: the nudge was echoed.
describe("asked to go on with nothing owed, after a seed", () => {
  it("answers the seed's last unanswered line, not the instruction", () => {
    const sim = new SimDriver({ seed: 2 });
    sim.setup();
    sim.send({
      clientContent: {
        turns: [
          { role: "user", parts: [{ text: "hi" }] },
          { role: "model", parts: [{ text: "Hello!" }] },
          { role: "user", parts: [{ text: "what are your hours?" }] },
        ],
        turnComplete: false,
      },
    });
    const from = sim.text().length;
    sim.user("Please continue: answer the user now, using the tool results you have received.");
    expect(sim.text(from)).toContain("what are your hours?");
    expect(sim.text(from)).not.toContain("Please continue");
  });
});
