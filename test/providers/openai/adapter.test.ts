import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { naiveWire } from "../../../scripts/measurement/naive-wire.js";
import { OpenAIRealtimeAdapter } from "../../../src/providers/openai/adapter.js";
import { openaiProvider } from "../../../src/providers/openai/provider.js";
import {
  ClientEvent,
  KNOWN_SERVER_TYPES,
  ServerEvent,
} from "../../../src/providers/openai/schemas.js";
import type { ModelEvent } from "../../../src/vocabulary/model.js";
import type { DecodeResult } from "../../../src/vocabulary/provider-adapter.js";

const FIXTURE = resolve(process.cwd(), "test/fixtures/openai/realtime-event-examples.json");
const examples = JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<
  string,
  { schema: string; example: string }
>;

/** The reference's examples are JS-ish: comments, trailing commas, several per entry. */
function examplesOf(type: string): Record<string, unknown>[] {
  const raw = examples[type]?.example ?? "";
  const cleaned = raw.replace(/\/\/[^\n]*/g, "").replace(/,(\s*[}\]])/g, "$1");
  const found: Record<string, unknown>[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < cleaned.length; i++) {
    if (cleaned[i] === "{" && depth++ === 0) start = i;
    else if (cleaned[i] === "}" && --depth === 0)
      found.push(JSON.parse(cleaned.slice(start, i + 1)) as Record<string, unknown>);
  }
  return found;
}

const agent = {
  systemInstruction: "Be brief.",
  tools: [
    {
      name: "lookup_faq",
      description: "Look up the FAQ.",
      args: z.object({ topic: z.string() }),
      followUp: "speak" as const,
    },
  ],
};
const OPTIONS = { model: "gpt-realtime", agent };
const adapter = () => new OpenAIRealtimeAdapter(OPTIONS);
const events = (r: DecodeResult): ModelEvent[] => (r.ok ? r.events : []);
const sent = (frames: string[]) => frames.map((f) => (JSON.parse(f) as { type: string }).type);
const server = (a: OpenAIRealtimeAdapter, event: Record<string, unknown>) =>
  a.decode(JSON.stringify(event));
/** A function call's arguments complete (call_1, lookup_faq, in response r1). */
const functionCall = (args: string) => ({
  type: "response.function_call_arguments.done",
  response_id: "r1",
  item_id: "fc1",
  output_index: 0,
  call_id: "call_1",
  name: "lookup_faq",
  arguments: args,
});
const response = (id: string, status = "completed") => ({
  id,
  status,
  status_details: null,
  usage: null,
});

/**
 * Fields the reference documents for an event that its one example leaves out.
 * `previous_item_id` (RealtimeClientEventConversationItemCreate): "The ID of the preceding item
 * after which the new item will be inserted. If not set, the new item will be appended to the
 * end of the conversation."
 */
const DOCUMENTED_BEYOND_EXAMPLE: Record<string, string[]> = {
  "conversation.item.create": ["previous_item_id"],
};

describe("conformance with the Realtime API reference (test/fixtures/openai)", () => {
  it("every server event type liveline reads parses from the reference's example", () => {
    let checked = 0;
    for (const type of KNOWN_SERVER_TYPES) {
      for (const example of examplesOf(type)) {
        // The reference's example of input_audio_buffer.dtmf_event_received has a stray space
        // in its type (" input_audio_buffer…"): a typo of the page, not of the wire.
        const parsed = ServerEvent.safeParse({ ...example, type: String(example.type).trim() });
        expect(parsed.success, `${type}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });

  it("every client event liveline sends uses only fields the reference's example has", () => {
    const a = adapter();
    a.decode(JSON.stringify(functionCall("{}")));
    const frames = [
      a.setupFrame({ seeded: false }),
      ...a.encode({ type: "user_text", text: "hi" }),
      ...a.encode({ type: "user_audio", pcm: new Uint8Array(640) }),
      ...a.encode({
        type: "tool_responses",
        responses: [{ callId: "c1", name: "lookup_faq", result: { a: 1 } }],
      }),
      ...a.encode({
        type: "tool_responses",
        responses: [{ callId: "call_1", name: "chips", result: {}, scheduling: "silent" }],
      }),
    ];
    for (const frame of frames) {
      const ours = JSON.parse(frame) as Record<string, unknown>;
      const reference = examplesOf(ours.type as string)[0];
      expect(reference, String(ours.type)).toBeDefined();
      const fields = [
        ...Object.keys(reference!),
        ...(DOCUMENTED_BEYOND_EXAMPLE[ours.type as string] ?? []),
      ];
      for (const key of Object.keys(ours)) expect(fields).toContain(key);
    }
  });
});

describe("the OpenAI Realtime adapter", () => {
  it("a session's voice, language and model reach session.update, in the reference's fields", () => {
    const a = new OpenAIRealtimeAdapter({
      model: "gpt-realtime-mini",
      agent: { ...agent, voice: "marin", language: "de-DE" },
    });
    const setup = JSON.parse(a.setupFrame({ seeded: false }));
    expect(setup.session.model).toBe("gpt-realtime-mini");
    expect(setup.session.audio.output.voice).toBe("marin");
    // Transcription takes ISO-639-1: the language part of the BCP-47 code.
    expect(setup.session.audio.input.transcription).toMatchObject({ language: "de" });
    expect(ClientEvent.safeParse(setup).success).toBe(true);
  });

  it("its session.update taking effect is the connection's setup, once", () => {
    const a = adapter();
    expect(events(server(a, { type: "session.created", session: {} }))).toEqual([]);
    expect(events(server(a, { type: "session.updated", session: {} }))).toEqual([
      { type: "setup_complete" },
    ]);
    expect(events(server(a, { type: "session.updated", session: {} }))).toEqual([]);
    const setup = JSON.parse(a.setupFrame({ seeded: false }));
    expect(setup.session.tools[0]).toMatchObject({
      type: "function",
      name: "lookup_faq",
      parameters: { type: "object", properties: { topic: { type: "string" } } },
    });
    expect(setup.session.tools[0].parameters.$schema).toBeUndefined();
  });

  it("response.created is a sign the model works on an answer (a slow model is not a silent one)", () => {
    const a = adapter();
    a.encode({ type: "user_text", text: "think hard" });
    const created = server(a, {
      type: "response.created",
      response: response("r1", "in_progress"),
    });
    expect(events(created)).toEqual([{ type: "working" }]);
  });

  it("never two response.create in flight: a speak result during a response waits for its end, with its item", () => {
    const a = adapter();
    server(a, { type: "response.created", response: response("r1", "in_progress") });
    const frames = a.encode({
      type: "tool_responses",
      responses: [{ callId: "c1", name: "lookup_faq", result: { answer: "9-5" } }],
    });
    expect(sent(frames)).toEqual([]);
    const done = server(a, { type: "response.done", response: response("r1") });
    expect(events(done)).toEqual([{ type: "turn_complete" }]);
    expect(done.ok && sent(done.send ?? [])).toEqual([
      "conversation.item.create",
      "response.create",
    ]);
    // Nothing owed any more: the next response.done sends nothing.
    const again = server(a, { type: "response.done", response: response("r2") });
    expect(again.ok && again.send).toEqual([]);
  });

  it("a handoff's session.update never goes out while a response is active, and precedes the next response.create", () => {
    const a = adapter();
    const billing = { systemInstruction: "You handle invoices.", tools: [], language: "de-DE" };
    // Idle: at once, with the new instructions and tools, the voice and formats left alone.
    const now = a.updateAgent(billing).map((f) => JSON.parse(f) as { session: unknown });
    expect(now).toHaveLength(1);
    expect(now[0]!.session).toEqual({
      type: "realtime",
      instructions: "You handle invoices.",
      tools: [],
      tool_choice: "auto",
      audio: { input: { transcription: { model: "gpt-4o-mini-transcribe", language: "de" } } },
    });
    expect(ClientEvent.safeParse(now[0]).success).toBe(true);
    // A response in progress: held; the new agent's line asked for meanwhile waits too.
    server(a, { type: "response.created", response: response("r1", "in_progress") });
    expect(a.updateAgent(billing)).toEqual([]);
    expect(sent(a.encode({ type: "nudge", text: "Introduce yourself." }))).toEqual([]);
    const done = server(a, { type: "response.done", response: response("r1") });
    expect(done.ok && sent(done.send ?? [])).toEqual([
      "session.update",
      "conversation.item.create",
      "response.create",
    ]);
  });

  it("a silent result is added quietly (no response.create); a speak result prompts exactly one", () => {
    const a = adapter();
    const silent = a.encode({
      type: "tool_responses",
      responses: [{ callId: "c1", name: "chips", result: {}, scheduling: "silent" }],
    });
    expect(sent(silent)).toEqual(["conversation.item.create"]);
    const speak = a.encode({
      type: "tool_responses",
      responses: [
        { callId: "c2", name: "lookup_faq", result: { answer: "x" } },
        { callId: "c3", name: "lookup_faq", error: "timeout" },
      ],
    });
    expect(sent(speak)).toEqual([
      "conversation.item.create",
      "conversation.item.create",
      "response.create",
    ]);
    expect(JSON.parse(speak[1]!).item.output).toBe('{"error":"timeout"}');
  });

  // Found by the attack of 2026-11-29: the greeting's chips, answered while the next turn ran,
  // were appended after that turn's words, and the response to its tool result read them out.
  it("a silent result goes right after its call (previous_item_id); a speak result at the end", () => {
    const a = adapter();
    server(a, { type: "response.created", response: response("r1", "in_progress") });
    server(a, functionCall("{}"));
    server(a, { ...functionCall("{}"), call_id: "call_2", item_id: "fc2" });
    server(a, { type: "response.done", response: response("r1") });
    const silent = a.encode({
      type: "tool_responses",
      responses: [{ callId: "call_1", name: "chips", result: {}, scheduling: "silent" }],
    });
    expect(JSON.parse(silent[0]!)).toMatchObject({ previous_item_id: "fc1" });
    // Control: the same result, to be spoken, goes at the end of the conversation.
    const speak = a.encode({
      type: "tool_responses",
      responses: [{ callId: "call_2", name: "lookup_faq", result: {} }],
    });
    expect(JSON.parse(speak[0]!).previous_item_id).toBeUndefined();
  });

  it("text typed over a running response cancels it and asks again once it is done", () => {
    const a = adapter();
    server(a, { type: "response.created", response: response("r1", "in_progress") });
    // The line's item waits with its response.create: the cancelled response never has it.
    expect(sent(a.encode({ type: "user_text", text: "stop" }))).toEqual(["response.cancel"]);
    const done = server(a, { type: "response.done", response: response("r1", "cancelled") });
    expect(events(done)).toEqual([
      { type: "interrupted" },
      { type: "turn_complete", reason: "cancelled" },
    ]);
    expect(done.ok && sent(done.send ?? [])).toEqual([
      "conversation.item.create",
      "response.create",
    ]);
  });

  it("text typed after a response was asked for but before it was created: cancelled once created, the line answered after (found by the attack)", () => {
    const a = adapter();
    const result = a.encode({
      type: "tool_responses",
      responses: [{ callId: "c1", name: "lookup_faq", result: { answer: "9-5" } }],
    });
    expect(sent(result)).toEqual(["conversation.item.create", "response.create"]);
    // The line comes before the service said response.created: no second response.create,
    // and its item waits too (the response asked for must not begin with the line in it).
    expect(sent(a.encode({ type: "user_text", text: "and pricing?" }))).toEqual([]);
    const created = server(a, {
      type: "response.created",
      response: response("r1", "in_progress"),
    });
    expect(created.ok && sent(created.send ?? [])).toEqual(["response.cancel"]);
    const done = server(a, { type: "response.done", response: response("r1", "cancelled") });
    expect(done.ok && sent(done.send ?? [])).toEqual([
      "conversation.item.create",
      "response.create",
    ]);
    // Exactly one owed: the next response's end sends nothing.
    server(a, { type: "response.created", response: response("r2", "in_progress") });
    const again = server(a, { type: "response.done", response: response("r2") });
    expect(again.ok && again.send).toEqual([]);
  });

  it("lines typed faster than responses start: each gets its own response, all but the last cut short (found by the attack)", () => {
    const a = adapter();
    const first = [...Array(4).keys()].flatMap((i) =>
      sent(a.encode({ type: "user_text", text: `line ${i}` })),
    );
    // One in flight; three owed, each line's item with its own response.create.
    expect(first).toEqual(["conversation.item.create", "response.create"]);
    const outcomes: string[][] = [];
    for (let r = 1; r <= 4; r++) {
      const created = server(a, {
        type: "response.created",
        response: response(`r${r}`, "in_progress"),
      });
      outcomes.push(created.ok ? sent(created.send ?? []) : []);
      const status = r < 4 ? "cancelled" : "completed";
      const done = server(a, { type: "response.done", response: response(`r${r}`, status) });
      outcomes.push(done.ok ? sent(done.send ?? []) : []);
    }
    const next = ["conversation.item.create", "response.create"];
    expect(outcomes).toEqual([
      ["response.cancel"],
      next,
      ["response.cancel"],
      next,
      ["response.cancel"],
      next,
      [], // the last line's response runs to its end
      [],
    ]);
  });

  it("a response's function calls come together when it is done; one delivered twice is one call; arguments that are not JSON reach the tool as none", () => {
    const a = adapter();
    const call = functionCall('{"topic":"hours"}');
    // Held until the response ends: its results go back as one input.
    expect(events(server(a, call))).toEqual([]);
    expect(events(server(a, call))).toEqual([]);
    expect(events(server(a, { ...call, call_id: "call_2", arguments: "{oops" }))).toEqual([]);
    expect(events(server(a, { type: "response.done", response: response("r1") }))).toEqual([
      {
        type: "tool_call",
        calls: [
          { id: "call_1", name: "lookup_faq", args: { topic: "hours" } },
          { id: "call_2", name: "lookup_faq", args: {} },
        ],
      },
      { type: "turn_complete" },
    ]);
    // The next response starts with none.
    expect(events(server(a, { type: "response.done", response: response("r2") }))).toEqual([
      { type: "turn_complete" },
    ]);
  });

  it("the naive relay's arm runs each call the moment it is complete (openai-agents-js)", () => {
    const a = naiveWire.openaiAdapter(OPTIONS);
    expect(events(a.decode(JSON.stringify(functionCall("{}"))))).toEqual([
      { type: "tool_call", calls: [{ id: "call_1", name: "lookup_faq", args: {} }] },
    ]);
  });

  it("deltas, the user's transcript, usage; unknown events are ignored and counted; errors are reported", () => {
    const a = adapter();
    const d = { response_id: "r1", item_id: "i1", output_index: 0, content_index: 0 };
    expect(events(server(a, { type: "response.output_text.delta", ...d, delta: "Hi" }))).toEqual([
      { type: "text_delta", text: "Hi" },
    ]);
    expect(events(server(a, { type: "response.output_audio.delta", ...d, delta: "AAEC" }))).toEqual(
      [{ type: "audio_delta", pcm: new Uint8Array([0, 1, 2]) }],
    );
    expect(
      events(
        server(a, {
          type: "conversation.item.input_audio_transcription.completed",
          item_id: "i0",
          content_index: 0,
          transcript: "hello",
        }),
      ),
    ).toEqual([{ type: "input_transcript", text: "hello", finished: true }]);
    const done = server(a, {
      type: "response.done",
      response: {
        ...response("r1"),
        usage: {
          total_tokens: 10,
          input_tokens: 6,
          output_tokens: 4,
          input_token_details: { text_tokens: 5, audio_tokens: 1, cached_tokens: 2 },
        },
      },
    });
    expect(events(done)[0]).toEqual({
      type: "usage",
      usage: {
        promptTokens: 6,
        responseTokens: 4,
        totalTokens: 10,
        cachedTokens: 2,
        promptByModality: { TEXT: 5, AUDIO: 1 },
      },
    });
    expect(events(server(a, { type: "rate_limits.updated", rate_limits: [] }))).toEqual([]);
    expect(a.ignored).toBe(1);
    const error = server(a, {
      type: "error",
      error: { type: "invalid_request_error", code: "x", message: "bad" },
    });
    // Not a protocol error: the service keeps the session open ("most errors are recoverable").
    expect(events(error)).toEqual([{ type: "service_error", code: "x", message: "bad" }]);
  });

  it("audio_end commits only an utterance the server's VAD is still hearing", () => {
    const a = adapter();
    expect(a.encode({ type: "audio_end" })).toEqual([]);
    server(a, { type: "input_audio_buffer.speech_started", audio_start_ms: 0, item_id: "i" });
    expect(sent(a.encode({ type: "audio_end" }))).toEqual([
      "input_audio_buffer.commit",
      "response.create",
    ]);
    expect(a.encode({ type: "audio_end" })).toEqual([]);
  });

  /** `ms` of 24 kHz PCM16 audio of item `item_id`, as the service sends it. */
  const audioOf = (item_id: string, ms: number) => ({
    type: "response.output_audio.delta",
    response_id: "r1",
    output_index: 0,
    content_index: 0,
    item_id,
    delta: Buffer.alloc(ms * 48).toString("base64"),
  });
  const truncations = (frames: string[]) =>
    frames.map((f) => JSON.parse(f)).map((e) => [e.item_id, e.audio_end_ms]);

  it("what the client played of the latest audio cuts that item (conversation.item.truncate)", () => {
    const a = adapter();
    expect(a.encode({ type: "audio_played", ms: 500 })).toEqual([]);
    server(a, audioOf("msg_9", 1000));
    expect(a.encode({ type: "audio_played", ms: 500 }).map((f) => JSON.parse(f))).toEqual([
      { type: "conversation.item.truncate", item_id: "msg_9", content_index: 0, audio_end_ms: 500 },
    ]);
    // All of it heard: nothing to cut (the service refuses a cut past an item's audio).
    expect(a.encode({ type: "audio_played", ms: 1500 })).toEqual([]);
  });

  it("a reply in two message items (a preamble, then the answer): the cut is counted across them", () => {
    const a = adapter();
    server(a, audioOf("msg_pre", 300));
    server(a, audioOf("msg_answer", 1000));
    // 800 ms heard: all the preamble, 500 ms of the answer.
    expect(truncations(a.encode({ type: "audio_played", ms: 800 }))).toEqual([["msg_answer", 500]]);
    // 200 ms heard: the preamble cut there, the answer never heard.
    expect(truncations(a.encode({ type: "audio_played", ms: 200 }))).toEqual([
      ["msg_pre", 200],
      ["msg_answer", 0],
    ]);
  });

  it("a rebuilt conversation is seeded as items, calls and outputs as their own item types", () => {
    const frames = adapter().encodeContext({
      items: [
        { role: "user", text: "hours?" },
        { role: "model_calls", calls: [{ id: "c1", name: "lookup_faq", args: { topic: "h" } }] },
        { role: "tool_results", results: [{ callId: "c1", name: "lookup_faq", result: { a: 1 } }] },
        { role: "model", text: "Nine to five." },
      ],
    });
    expect(frames.map((f) => JSON.parse(f).item.type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
      "message",
    ]);
    expect(sent(frames).every((t) => t === "conversation.item.create")).toBe(true);
  });

  it("1000 is normal; refused requests are fatal; everything else is retried", () => {
    const a = adapter();
    expect([1000, 1008, 1007, 1011, 1006].map((c) => a.classifyClose(c))).toEqual([
      "normal",
      "fatal",
      "fatal",
      "retry",
      "retry",
    ]);
  });
});

describe("which agents share one OpenAI connection", () => {
  it("one model and voice: the same link (a handoff updates it); another voice or model: a new connection", () => {
    const keyOf = (spec: { voice?: string; model?: string }) =>
      openaiProvider.session({
        vars: { OPENAI_API_KEY: "sk-test" },
        bindings: {},
        sessionId: "s1",
        agent: { ...agent, ...spec },
        metadata: {},
        audio: "pcm16",
        wireArm: null,
      }).sharedConnectionKey;
    expect(keyOf({ voice: "marin" })).toBe(keyOf({ voice: "marin" }));
    // The service refuses a new voice once the session has spoken audio.
    expect(keyOf({ voice: "marin" })).not.toBe(keyOf({ voice: "cedar" }));
    // The model rides in the connection's URL.
    expect(keyOf({ model: "gpt-realtime" })).not.toBe(keyOf({ model: "gpt-realtime-mini" }));
    // The key names no secret.
    expect(keyOf({})).not.toContain("sk-test");
  });
});

describe("16 kHz client audio to the 24 kHz OpenAI takes", () => {
  it("3 samples out for every 2 in over the connection's chunks, a tone kept (src/audio's resampler, its history kept)", () => {
    const a = adapter();
    const rate = 16000;
    // 1 kHz, one second, in 20 ms chunks (and one odd chunk: the count holds over the stream).
    const tone = Int16Array.from({ length: rate }, (_, i) =>
      Math.round(10_000 * Math.sin((2 * Math.PI * 1000 * i) / rate)),
    );
    const sizes = [320, 321, 319];
    const out: number[] = [];
    for (let at = 0, i = 0; at < tone.length; at += sizes[i % 3]!, i++) {
      const chunk = tone.slice(at, at + sizes[i % 3]!);
      const [append] = a.encode({ type: "user_audio", pcm: new Uint8Array(chunk.buffer) });
      const bytes = Uint8Array.from(atob(JSON.parse(append!).audio), (c) => c.charCodeAt(0));
      out.push(...new Int16Array(bytes.buffer));
    }
    expect(out.length).toBe(24000);
    // The tone at 24 kHz: 1 kHz at its level (a DFT bin over 100 whole cycles, past the filter's start).
    const part = out.slice(2400, 4800);
    let re = 0;
    let im = 0;
    for (const [i, x] of part.entries()) {
      re += x * Math.cos((2 * Math.PI * 1000 * i) / 24000);
      im -= x * Math.sin((2 * Math.PI * 1000 * i) / 24000);
    }
    expect((2 * Math.hypot(re, im)) / part.length).toBeCloseTo(10_000, -2);
  });
});

describe("a phone call's audio (g711_ulaw): G.711 μ-law passes through untouched", () => {
  const mulaw = () => new OpenAIRealtimeAdapter({ ...OPTIONS, audio: "g711_ulaw" });
  it("the session is set up with audio/pcmu both ways, a message the service's schema takes", () => {
    const setup = JSON.parse(mulaw().setupFrame({ seeded: false }));
    expect(ClientEvent.safeParse(setup).success).toBe(true);
    expect(setup.session.audio.input.format).toEqual({ type: "audio/pcmu" });
    expect(setup.session.audio.output.format).toEqual({ type: "audio/pcmu" });
    // The default stays PCM16 at 24 kHz.
    const pcm = JSON.parse(adapter().setupFrame({ seeded: false }));
    expect(pcm.session.audio.input.format).toEqual({ type: "audio/pcm", rate: 24000 });
  });

  it("the caller's bytes go out as they came, and the model's come back as they went", () => {
    const a = mulaw();
    const line = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
    const [append] = a.encode({ type: "user_audio", pcm: line });
    const audio = (JSON.parse(append!) as { audio: string }).audio;
    expect(Buffer.from(audio, "base64")).toEqual(Buffer.from(line));
    // PCM16 would have been resampled (16 → 24 kHz: half again as many bytes).
    const [pcmAppend] = adapter().encode({ type: "user_audio", pcm: line });
    expect(Buffer.from((JSON.parse(pcmAppend!) as { audio: string }).audio, "base64").length).toBe(
      240,
    );
    const back = events(
      server(a, {
        type: "response.output_audio.delta",
        response_id: "r1",
        item_id: "i1",
        output_index: 0,
        content_index: 0,
        delta: Buffer.from(line).toString("base64"),
      }),
    );
    expect(back).toEqual([{ type: "audio_delta", pcm: line }]);
  });
});
