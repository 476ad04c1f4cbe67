import { describe, expect, it } from "vitest";
import { parseKnobs } from "../../../src/simulator/knobs.js";
import { calls, LiveDriver, pcm, said, types } from "./driver.js";

const FAQ = { calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } };

describe("the GPT-Live face's knobs", () => {
  it("parses them, off by default", () => {
    expect(parseKnobs(new URLSearchParams())).toMatchObject({
      duplicateDelivery: 0,
      supersede: false,
      // Two hours, as measured (aplisay/llm-agent PR #306).
      expireAfterMs: 7_200_000,
      failResponses: [],
      announceReplies: false,
      duplicateDelegation: false,
    });
    expect(
      parseKnobs(
        new URLSearchParams(
          "duplicateDelivery=1&supersede=1&expireAfterMs=5000&failResponses=1,3&announceReplies=1&duplicateDelegation=1",
        ),
      ),
    ).toMatchObject({
      duplicateDelivery: 1,
      supersede: true,
      expireAfterMs: 5000,
      failResponses: [1, 3],
      announceReplies: true,
      duplicateDelegation: true,
    });
    expect(() => parseKnobs(new URLSearchParams("duplicateDelivery=2"))).toThrow();
    expect(() => parseKnobs(new URLSearchParams("failResponses=0"))).toThrow();
  });

  it("duplicateDelivery: the same call's response.event twice (new Live event ids)", () => {
    const live = new LiveDriver({ ...FAQ, duplicateDelivery: 1 });
    live.start();
    const out = live.line("hours");
    const [first, second] = calls(out);
    expect(second).toEqual(first);
    const ids = out
      .filter((m) => m.type === "response.event")
      .filter((m) => (m.event as { type: string }).type === "response.output_item.done")
      .map((m) => m.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    // Answered once, it is spoken once.
    live.output(first!.call_id, '{"hours":"9-5"}');
    expect(said(live.send({ type: "response.create" }))).toContain("lookup_faq found");
  });

  it("supersede: a line typed while a call waits is refused until its output; then answered, the late result never spoken", () => {
    const live = new LiveDriver({ ...FAQ, supersede: true, repeatAnswers: true });
    live.start();
    const [call] = calls(live.line("hours"));
    const refused = live.line("never mind, what's new?");
    expect(types(refused)).toEqual(["error"]);
    expect(live.output(call!.call_id, '{"hours":"9-5"}')).toEqual([]);
    const next = said(live.send({ type: "response.create" }));
    expect(next).toContain("never mind");
    expect(next).not.toContain("lookup_faq found");
  });

  it("without supersede the waiting call's result is spoken first, then the line's answer (one chain)", () => {
    const live = new LiveDriver({ ...FAQ, repeatAnswers: true });
    live.start();
    const [call] = calls(live.line("hours"));
    live.line("never mind");
    live.output(call!.call_id, '{"hours":"9-5"}');
    expect(said(live.send({ type: "response.create" }))).toMatch(
      /^Here is what lookup_faq found: .*never mind/,
    );
  });

  it("supersede applies to a delegation from speech too: held speech moves the user on", () => {
    const live = new LiveDriver({ ...FAQ, supersede: true });
    live.start();
    live.send({ type: "session.input_audio.append", audio: pcm(800, true) });
    const [call] = calls(live.send({ type: "session.input_audio.append", audio: pcm(600, false) }));
    live.send({ type: "session.input_audio.append", audio: pcm(800, true) });
    live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
    live.output(call!.call_id, "{}");
    const after = said(live.send({ type: "response.create" }));
    expect(after).not.toContain("lookup_faq found");
    expect(after).toContain("Tell me something interesting");
  });

  it("expireAfterMs: session.closed (expired) at that real time, then the socket closes", () => {
    const live = new LiveDriver({ expireAfterMs: 5000 });
    const [started] = live.start();
    expect((started!.session as { expires_at: number }).expires_at).toBe(
      Math.floor(live.now / 1000) + 5,
    );
    expect(live.tick(4999)).toEqual([]);
    const [closed] = live.tick(1);
    expect(closed).toMatchObject({
      type: "session.closed",
      reason: "expired",
      usage: { seconds: 0 },
    });
    expect(live.closed?.code).toBe(1000);
  });

  it("paced (timeScale 1): the backend after latencyMs, each chunk when its range begins", () => {
    const live = new LiveDriver({ timeScale: 1, msPerWord: 100 });
    live.start();
    expect(live.line("hi")).toEqual([]);
    const first = live.tick(600);
    expect(types(first)).toContain("response.event");
    const transcript = first.filter((m) => m.type === "session.output_transcript.delta");
    expect(transcript).toHaveLength(1);
    expect(transcript[0]?.start_ms).toBe(600);
    const rest = live.tick(60_000);
    expect(rest.filter((m) => m.type === "session.output_transcript.delta").length).toBeGreaterThan(
      0,
    );
    expect(rest.at(-1)?.type).toBe("session.usage.updated");
  });

  it("paced: the user speaking over the model makes it yield (the rest of its speech never comes)", () => {
    const live = new LiveDriver({ timeScale: 1, msPerWord: 300 });
    live.start();
    live.line("tell me a long story please");
    live.tick(700);
    live.send({ type: "session.input_audio.append", audio: pcm(200, true) });
    const after = live.tick(60_000);
    expect(after.filter((m) => m.type === "session.output_transcript.delta")).toEqual([]);
  });

  it("a sideband sees the delegation and backend events, reflected audio with ranges, and may answer", () => {
    const live = new LiveDriver({ ...FAQ, repeatAnswers: true });
    live.start();
    live.send({ type: "session.input_audio.append", audio: pcm(800, true) });
    live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
    expect(types(live.side)).toContain("session.delegation.created");
    expect(types(live.side)).toContain("session.input_transcript.delta");
    const [call] = calls(live.side);
    expect(call?.name).toBe("lookup_faq");
    const reflected = live.side.filter((m) => m.type === "session.output_audio.delta");
    expect(
      reflected.every((m) => typeof m.start_ms === "number" && typeof m.end_ms === "number"),
    ).toBe(true);
    expect(live.side.some((m) => m.type === "session.started")).toBe(false);
    live.sideband({
      type: "response.item.create",
      item: { type: "function_call_output", call_id: call!.call_id, output: '{"ok":true}' },
    });
    const answer = live.sideband({ type: "response.create" });
    expect(said(answer)).toContain("lookup_faq found: ok.");
  });
});
