import { describe, expect, it } from "vitest";
import { calls, LiveDriver, type Msg, nested, pcm, said, types } from "./driver.js";

const FAQ = { calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } };
type Span = [start: number, end: number];
const ranges = (msgs: Msg[], type: string): Span[] =>
  msgs.filter((m) => m.type === type).map((m): Span => [m.start_ms as number, m.end_ms as number]);

/** Ranges that follow one another without a gap, each non-empty (end exclusive). */
function expectContiguous(spans: Span[]): void {
  for (const [i, [start, end]] of spans.entries()) {
    expect(end).toBeGreaterThan(start);
    if (i > 0) expect(start).toBe(spans[i - 1]![1]);
  }
}

describe("the GPT-Live face: speech on one timeline, tools through the backend", () => {
  it("a typed line: the backend answers (no delegation), then the model speaks it on the timeline", () => {
    const live = new LiveDriver({ repeatAnswers: true });
    live.start();
    const out = live.line("What are your hours?");
    const backend = out.filter((m) => m.type === "response.event");
    expect(backend.every((m) => m.delegation_id === null)).toBe(true);
    expect(nested(out).map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(nested(out).map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(said(out)).toBe(
      "Sure. You said: “What are your hours?”. That is a good question, and here is a short answer. Anything else?",
    );
    const spans = ranges(out, "session.output_transcript.delta");
    expect(spans[0]![0]).toBe(600); // latencyMs after the timeline's start
    expectContiguous(spans);
    // Primary audio carries no range (the SDK: omitted on the primary WebSocket), 24 kHz PCM16.
    const audio = out.filter((m) => m.type === "session.output_audio.delta");
    expect(audio).toHaveLength(spans.length);
    expect(audio.every((m) => m.start_ms === undefined)).toBe(true);
    const bytes = Buffer.from(audio[0]!.delta as string, "base64").length;
    expect(bytes).toBe((spans[0]![1] - spans[0]![0]) * 48);
    // No turn marker: the usage (cumulative) is the last thing.
    expect(out.at(-1)).toMatchObject({
      type: "session.usage.updated",
      usage: { seconds: spans.at(-1)![1] / 1000 },
    });
    const second = live.line("And on Sunday?");
    expect(ranges(second, "session.output_transcript.delta")[0]![0]).toBe(spans.at(-1)![1] + 600);
    expect((second.at(-1)!.usage as { seconds: number }).seconds).toBeGreaterThan(
      spans.at(-1)![1] / 1000,
    );
  });

  it("an utterance: input transcript over the speech, then the reply after it, one timeline", () => {
    const live = new LiveDriver();
    live.start();
    const out = live.send({ type: "session.input_audio.append", audio: pcm(1000, true) });
    expect(out).toEqual([]); // no speech events, no ack
    const end = live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
    const input = ranges(end, "session.input_transcript.delta");
    expect(input[0]![0]).toBe(0);
    expect(input.at(-1)![1]).toBe(1000);
    expectContiguous(input);
    expect(
      end
        .filter((m) => m.type === "session.input_transcript.delta")
        .map((m) => m.delta)
        .join(""),
    ).toBe("What can you do?");
    const output = ranges(end, "session.output_transcript.delta");
    expect(output[0]![0]).toBe(1000 + 600);
    expectContiguous(output);
    // The next utterance is placed after the reply (timeScale 0: all of it went out).
    live.send({ type: "session.input_audio.append", audio: pcm(500, true) });
    const next = live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
    expect(ranges(next, "session.input_transcript.delta")[0]![0]).toBeGreaterThanOrEqual(
      output.at(-1)![1],
    );
  });

  it("a delegated call: delegation.created, the backend's function call, outputs wait for response.create, then the answer", () => {
    const live = new LiveDriver({ ...FAQ, repeatAnswers: true });
    live.start();
    live.send({ type: "session.input_audio.append", audio: pcm(800, true) });
    const out = live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
    const spoken = ranges(out, "session.output_transcript.delta");
    const delegation = out.find((m) => m.type === "session.delegation.created")!;
    expect(delegation.offset_ms).toBe(spoken.at(-1)![1]);
    const d = delegation.delegation as {
      id: string;
      type: string;
      target: string;
      response_id: string;
    };
    expect(d).toMatchObject({ type: "delegation", target: "responses" });
    const wrapped = out.filter((m) => m.type === "response.event");
    expect(wrapped.every((m) => m.delegation_id === d.id)).toBe(true);
    expect(nested(out).map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect((nested(out)[0]!.response as { id: string }).id).toBe(d.response_id);
    const [call] = calls(out);
    expect(call).toMatchObject({
      name: "lookup_faq",
      arguments: JSON.stringify({ question: "What can you do?" }),
    });
    expect(said(out)).toBe(
      "Sure. You said: “What can you do?”. That is a good question, and here is a short answer.",
    );
    // Appending the output alone continues nothing (and has no ack).
    expect(live.output(call!.call_id, JSON.stringify({ answer: "9-5" }))).toEqual([]);
    const answer = live.send({ type: "response.create" });
    expect(
      answer.filter((m) => m.type === "response.event").every((m) => m.delegation_id === d.id),
    ).toBe(true);
    const text = nested(answer).find((e) => e.type === "response.output_text.done")!.text;
    expect(text).toBe("Here is what lookup_faq found: 9-5. Anything else?");
    expect(said(answer)).toBe(text);
    expect(ranges(answer, "session.output_transcript.delta")[0]![0]).toBeGreaterThanOrEqual(
      spoken.at(-1)![1],
    );
  });

  it("a typed line that calls a tool: the backend's text and call in one response (no delegation)", () => {
    const live = new LiveDriver({ ...FAQ, repeatAnswers: true });
    live.start();
    const out = live.line("hours");
    expect(out.some((m) => m.type === "session.delegation.created")).toBe(false);
    const [call] = calls(out);
    expect(call?.name).toBe("lookup_faq");
    expect(said(out)).toBe(
      "Sure. You said: “hours”. That is a good question, and here is a short answer.",
    );
    live.output(call!.call_id, "nine to five");
    expect(said(live.send({ type: "response.create" }))).toBe(
      "Here is what lookup_faq found: nine to five. Anything else?",
    );
  });

  it("the session's audio format both ways: μ-law in is heard, 16 kHz and A-law out", () => {
    const mulaw = new LiveDriver();
    mulaw.start({ audio: { format: { type: "audio/pcmu", rate: 8000 } } });
    // A loud tone in μ-law (0x00/0x80 swing near full scale), then μ-law silence (0xFF).
    const loud = Buffer.from(
      Uint8Array.from({ length: 8000 }, (_, i) => (i % 2 ? 0x00 : 0x80)),
    ).toString("base64");
    const quiet = Buffer.from(new Uint8Array(4800).fill(0xff)).toString("base64");
    mulaw.send({ type: "session.input_audio.append", audio: loud });
    const out = mulaw.send({ type: "session.input_audio.append", audio: quiet });
    const spans = ranges(out, "session.output_transcript.delta");
    const audio = out.find((m) => m.type === "session.output_audio.delta")!;
    expect(Buffer.from(audio.delta as string, "base64").length).toBe(
      (spans[0]![1] - spans[0]![0]) * 8,
    );
    for (const [format, perMs] of [
      [{ type: "audio/pcm", rate: 16000 }, 32],
      [{ type: "audio/pcma", rate: 8000 }, 8],
    ] as const) {
      const live = new LiveDriver();
      live.start({ audio: { format } });
      const said = live.line("hi");
      const [s] = ranges(said, "session.output_transcript.delta");
      const a = said.find((m) => m.type === "session.output_audio.delta")!;
      expect(Buffer.from(a.delta as string, "base64").length, format.type).toBe(
        (s![1] - s![0]) * perMs,
      );
    }
    const odd = new LiveDriver();
    odd.start();
    expect(types(odd.send({ type: "session.input_audio.append", audio: "AAAA" }))).toEqual([
      "error",
    ]);
  });

  it("muted input is not heard; commentary is spoken; thinking is not", () => {
    const live = new LiveDriver();
    live.start();
    expect(types(live.send({ type: "session.input_audio.mute" }))).toEqual([
      "session.input_audio.muted",
    ]);
    live.send({ type: "session.input_audio.append", audio: pcm(800, true) });
    expect(live.send({ type: "session.input_audio.append", audio: pcm(600, false) })).toEqual([]);
    live.send({ type: "session.input_audio.unmute" });
    const thought = live.send({
      type: "session.thinking.append",
      content: "be kind",
      delegation_id: null,
    });
    expect(types(thought)).toEqual(["session.thinking.appended"]);
    const comment = live.send({
      type: "session.commentary.append",
      content: "Your order shipped.",
      delegation_id: null,
    });
    expect(comment[0]?.type).toBe("session.commentary.appended");
    expect(said(comment)).toBe("Your order shipped.");
  });

  it("session.close: session.closed (close_requested) with the snapshot and usage, then the socket closes", () => {
    const live = new LiveDriver();
    live.start();
    live.line("hi");
    const [closed] = live.send({ type: "session.close", event_id: "bye" });
    expect(closed).toMatchObject({
      type: "session.closed",
      reason: "close_requested",
      client_event_id: "bye",
    });
    expect((closed!.usage as { seconds: number }).seconds).toBeGreaterThan(0);
    expect((closed!.session as { id: string }).id).toBe("sess_sim");
    expect(live.closed?.code).toBe(1000);
    expect(live.send({ type: "response.create" })).toEqual([]);
  });
});

describe("the GPT-Live face speaking on its own (unpromptedAfterMs)", () => {
  /** The transcript's spans, with their words. */
  const words = (msgs: Msg[]) =>
    msgs
      .filter((m) => m.type === "session.output_transcript.delta")
      .map((m) => ({
        text: m.delta as string,
        start: m.start_ms as number,
        end: m.end_ms as number,
      }));

  it("after a reply and that long of quiet it asks, once, whether the user is there", () => {
    const live = new LiveDriver({ timeScale: 1, unpromptedAfterMs: 5_000, repeatAnswers: true });
    live.start();
    live.line("What are your hours?");
    const spoken = words([...live.tick(120_000), ...live.tick(120_000)]);
    const own = spoken.findIndex((w) => w.text.startsWith("Are you"));
    expect(own).toBeGreaterThan(0);
    expect(
      spoken
        .slice(own)
        .map((w) => w.text)
        .join(""),
    ).toBe("Are you still there?");
    // Said after the reply's end and that much quiet (the timeline's ms).
    expect(spoken[own]!.start - spoken[own - 1]!.end).toBeGreaterThanOrEqual(5_000);
  });

  it("input within the quiet puts it off: it speaks only after the next reply's quiet", () => {
    const live = new LiveDriver({ timeScale: 1, unpromptedAfterMs: 5_000, repeatAnswers: true });
    live.start();
    live.line("What are your hours?");
    const first = words(live.tick(1_000));
    expect(first.some((w) => w.text.startsWith("Are you"))).toBe(false);
    live.line("And on Sunday?");
    const spoken = words(live.tick(120_000));
    expect(spoken.filter((w) => w.text.startsWith("Are you"))).toHaveLength(1);
    expect(said(live.out)).toMatch(/And on Sunday\?.*Are you still there\?$/);
  });
});

describe("the GPT-Live face asked to go on", () => {
  const item = (role: string, text: string) => ({
    type: "response.item.create",
    item: { type: "message", role, content: [{ type: "input_text", text }] },
  });

  it("answers the seeded conversation's unanswered line, not the instruction (found by the attack)", () => {
    const live = new LiveDriver({ repeatAnswers: true });
    live.start();
    // A new connection seeded with the record: an answered line, then one nothing answered.
    live.send(item("user", "Hello there."));
    live.send(item("assistant", "Hi! How can I help?"));
    live.send(item("user", "What are your hours?"));
    const out = live.line(
      "Please continue: answer the user now, using the tool results you have received.",
    );
    expect(said(out)).toContain("You said: “What are your hours?”");
    expect(said(out)).not.toContain("Please continue");
    expect(said(out)).not.toContain("Hello there");
  });

  it("a new connection seeded with a line no reply followed answers that line when asked to go on (found by the attack)", () => {
    const live = new LiveDriver({ repeatAnswers: true });
    const message = (role: string, text: string) => ({
      type: "message",
      role,
      content: [{ type: role === "user" ? "input_text" : "output_text", text }],
    });
    live.start({
      input: [
        message("user", "Hello there."),
        message("assistant", "Hi! How can I help?"),
        message("user", "Tell me about the lighthouse."),
      ],
    });
    const out = live.line("Please continue: answer the user now.");
    expect(said(out)).toContain("You said: “Tell me about the lighthouse.”");
    // Answered once: asked to go on again, it has nothing left to answer.
    expect(said(live.line("Please continue."))).not.toContain("lighthouse");
  });

  it("a cap's goodbye and a tool still working are said, not read back (found by the attack)", () => {
    const live = new LiveDriver({ repeatAnswers: true });
    live.start();
    const goodbye = live.line(
      "(This conversation has reached its maximum number of turns and ends now. Say a short, friendly goodbye to the user in one sentence. Do not call any tools.)",
    );
    expect(said(goodbye)).toContain("Goodbye!");
    expect(said(goodbye)).not.toContain("You said");
  });

  it("with nothing unanswered and nothing owed, says what it would of the conversation", () => {
    const live = new LiveDriver({ repeatAnswers: true });
    live.start();
    live.send(item("user", "Hello there."));
    live.send(item("assistant", "Hi! How can I help?"));
    const out = live.line("Please continue.");
    expect(said(out)).not.toContain("You said");
  });
});
