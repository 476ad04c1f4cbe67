// The GPT-Live adapter (providers/gpt-live/adapter.ts): what it sends is what the service's
// schema takes; utterances end where the user's speech begins on the timeline; a function
// call delivered twice is one call; a seed is text that fits the service's limits.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  fitSeed,
  GptLiveAdapter,
  MAX_SEED_MESSAGES,
} from "../../../../src/providers/gpt-live/adapter.js";
import {
  type InitialItem,
  readClientEvent,
  SessionStartEvent,
} from "../../../../src/providers/gpt-live/schemas.js";
import type { ModelEvent } from "../../../../src/vocabulary/model.js";

function adapter(audio: "pcm16" | "g711_ulaw" = "pcm16") {
  return new GptLiveAdapter({
    model: "gpt-live-1",
    backendModel: "gpt-5-mini",
    agent: {
      systemInstruction: "Be brief.",
      voice: "marin",
      tools: [
        {
          name: "lookup_order",
          description: "Finds an order",
          args: z.object({ id: z.string() }),
          followUp: "speak",
        },
      ],
    },
    audio,
  });
}

function events(a: GptLiveAdapter, frame: Record<string, unknown>): ModelEvent[] {
  const decoded = a.decode(JSON.stringify(frame));
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.events;
}

const transcript = (kind: "input" | "output", delta: string, start: number, end: number) => ({
  type: `session.${kind}_transcript.delta`,
  event_id: `ev_${kind}_${start}`,
  delta,
  start_ms: start,
  end_ms: end,
});

const functionCall = (callId: string) => ({
  type: "response.event",
  event_id: `ev_${callId}`,
  delegation_id: "del_1",
  event: {
    type: "response.output_item.done",
    output_index: 0,
    item: { type: "function_call", call_id: callId, name: "lookup_order", arguments: '{"id":"7"}' },
  },
});

describe("the session it starts", () => {
  it("is a session.start the service's schema takes: tools delegated to a Responses backend", () => {
    const start = SessionStartEvent.parse(JSON.parse(adapter().setupFrame({ seeded: false })));
    expect(start.session.model).toBe("gpt-live-1");
    expect(start.session.audio).toEqual({
      format: { type: "audio/pcm", rate: 24000 },
      output: { voice: "marin" },
    });
    const delegation = start.session.delegation;
    expect(delegation?.type).toBe("responses");
    if (delegation?.type !== "responses") throw new Error("not responses");
    expect(delegation.responses.model).toBe("gpt-5-mini");
    expect(delegation.responses.tools?.[0]).toMatchObject({
      type: "function",
      name: "lookup_order",
    });
  });

  it("a phone call's session speaks G.711 μ-law at 8 kHz both ways", () => {
    const start = SessionStartEvent.parse(
      JSON.parse(adapter("g711_ulaw").setupFrame({ seeded: false })),
    );
    expect(start.session.audio?.format).toEqual({ type: "audio/pcmu", rate: 8000 });
  });
});

describe("utterances bounded by the timeline", () => {
  it("the user's speech after the model's words ends the utterance (yielded), then is input", () => {
    const a = adapter();
    // Its place on the timeline goes with it: where the speech ends (core/speech-clock.ts).
    expect(events(a, transcript("output", "Hello!", 0, 600))).toEqual([
      { type: "transcript_delta", text: "Hello!", span: { startMs: 0, endMs: 600 } },
    ]);
    expect(events(a, transcript("input", "hi there", 900, 1400))).toEqual([
      { type: "turn_complete", reason: "yielded" },
      { type: "speech_started" },
      { type: "input_transcript", text: "hi there", finished: false },
    ]);
    // More of the same speech: only its words.
    expect(events(a, transcript("input", " again", 1400, 1700))).toEqual([
      { type: "input_transcript", text: " again", finished: false },
    ]);
  });

  it("speech that starts before the model's words end was spoken over them", () => {
    const a = adapter();
    events(a, transcript("output", "Let me tell you", 0, 2000));
    expect(events(a, transcript("input", "wait", 1500, 1800))[0]).toEqual({
      type: "turn_complete",
      reason: "spoken_over",
    });
  });

  it("speech with no words of the model before it ends nothing", () => {
    const a = adapter();
    expect(events(a, transcript("input", "hello", 0, 400))).toEqual([
      { type: "speech_started" },
      { type: "input_transcript", text: "hello", finished: false },
    ]);
  });
});

/** The end of a backend response's stream (its calls are all known then). */
const responseCompleted = (delegationId: string | null = "del_1") => ({
  type: "response.event",
  event_id: "ev_done",
  delegation_id: delegationId,
  event: { type: "response.completed", response: { id: "resp_1", status: "completed" } },
});

const lookup = (id: string) => ({ id, name: "lookup_order", args: { id: "7" } });

describe("delegated function calls", () => {
  it("a call delivered twice is handed on once", () => {
    const a = adapter();
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, responseCompleted())).toEqual([
      { type: "tool_call", calls: [lookup("call_1")] },
    ]);
    // Again after its response ended (a late redelivery): still nothing.
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, responseCompleted())).toEqual([]);
  });

  it("a response's calls are handed on together, when it ends: one batch", () => {
    const a = adapter();
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, functionCall("call_2"))).toEqual([]);
    // Another delegation's end hands on nothing of this one's.
    expect(events(a, responseCompleted("del_2"))).toEqual([]);
    expect(events(a, responseCompleted())).toEqual([
      { type: "tool_call", calls: [lookup("call_1"), lookup("call_2")] },
    ]);
  });

  it("results go back as function_call_output items and one response.create", () => {
    const frames = adapter().encode({
      type: "tool_responses",
      responses: [{ callId: "call_1", name: "lookup_order", result: { status: "shipped" } }],
    });
    const read = frames.map((f) => readClientEvent(f));
    expect(read.every((r) => r.ok)).toBe(true);
    expect(frames.map((f) => JSON.parse(f).type)).toEqual([
      "response.item.create",
      "response.create",
    ]);
    expect(JSON.parse(frames[0]!).item).toEqual({
      type: "function_call_output",
      call_id: "call_1",
      output: '{"status":"shipped"}',
    });
  });

  it("a delegation is handed on (the core records it once, and it is a sign of work)", () => {
    const a = adapter();
    expect(
      events(a, {
        type: "session.delegation.created",
        event_id: "ev_d",
        offset_ms: 100,
        delegation: { id: "del_1", target: "responses", type: "delegation" },
      }),
    ).toEqual([{ type: "delegation", id: "del_1", target: "responses" }]);
  });
});

describe("the replies liveline asks for", () => {
  const backend = (type: string, delegationId: string | null, extra = {}) => ({
    type: "response.event",
    event_id: `ev_${type}`,
    delegation_id: delegationId,
    event: { type, ...extra },
  });
  const delegated = (id: string) => ({
    type: "session.delegation.created",
    event_id: `ev_${id}`,
    offset_ms: 100,
    delegation: { id, target: "responses", type: "delegation" },
  });

  it("a response no delegation announced (a line's, results') is ready at its first output, once, and done at its end", () => {
    const a = adapter();
    expect(events(a, backend("response.created", null))).toEqual([{ type: "working" }]);
    expect(events(a, backend("response.output_text.delta", null, { delta: "We" }))).toEqual([
      { type: "reply_ready", words: true },
    ]);
    expect(events(a, backend("response.output_text.delta", null, { delta: " open" }))).toEqual([]);
    expect(events(a, responseCompleted(null))).toEqual([{ type: "reply_done" }]);
  });

  it("the voice's own delegation is no reply asked for; the response after its results is", () => {
    const a = adapter();
    events(a, delegated("del_1"));
    expect(events(a, backend("response.created", "del_1"))).toEqual([{ type: "working" }]);
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, responseCompleted())).toEqual([
      { type: "tool_call", calls: [lookup("call_1")] },
    ]);
    events(a, backend("response.created", "del_1"));
    expect(events(a, backend("response.output_text.delta", "del_1", { delta: "It" }))).toEqual([
      { type: "reply_ready", words: true },
    ]);
  });

  it("each reply names the turn of the request that asked for it, in the order sent; a refused request asks nothing", () => {
    const a = adapter();
    const create = (frames: string[]) => JSON.parse(frames.at(-1)!) as Record<string, unknown>;
    a.encode({ type: "user_text", text: "hours?", turnId: "t1" });
    const refused = create(a.encode({ type: "user_text", text: "and?", turnId: "t2" }));
    a.encode({ type: "nudge", text: "Please continue.", turnId: "t3" });
    expect(refused.type).toBe("response.create");
    events(a, {
      type: "error",
      event_id: "ev_err",
      error: {
        type: "invalid_request_error",
        code: "invalid_value",
        message: "refused",
        client_event_id: refused.event_id,
      },
    });
    const replies: ModelEvent[] = [];
    for (const delta of ["We open at nine.", "Yes."]) {
      events(a, backend("response.created", null));
      replies.push(...events(a, backend("response.output_text.delta", null, { delta })));
      events(a, responseCompleted(null));
    }
    expect(replies).toEqual([
      { type: "reply_ready", turnId: "t1", words: true },
      { type: "reply_ready", turnId: "t3", words: true },
    ]);
  });

  it("a reply with calls only is ready at its end, before its calls (they are its turn's), and done after them", () => {
    const a = adapter();
    events(a, backend("response.created", "del_1"));
    events(a, functionCall("call_1"));
    expect(events(a, responseCompleted())).toEqual([
      { type: "reply_ready", words: false },
      { type: "tool_call", calls: [lookup("call_1")] },
      { type: "reply_done" },
    ]);
  });
});

describe("what it reads and refuses", () => {
  it("an event it does not know is skipped; a known one malformed is a protocol error", () => {
    const a = adapter();
    expect(events(a, { type: "session.future_event", event_id: "x" })).toEqual([]);
    expect(a.ignored).toBe(1);
    const bad = a.decode(JSON.stringify({ type: "session.output_transcript.delta", delta: 3 }));
    expect(bad.ok).toBe(false);
  });

  it("a typed line goes to the backend as a user message and one response.create", () => {
    const frames = adapter().encode({ type: "user_text", text: "Where is my order?" });
    expect(frames.map((f) => readClientEvent(f).ok)).toEqual([true, true]);
    expect(JSON.parse(frames[0]!).item).toEqual({ role: "user", content: "Where is my order?" });
  });

  it("played and audio_end send nothing: nothing to truncate, nothing to commit", () => {
    const a = adapter();
    expect(a.encode({ type: "audio_played", ms: 300 })).toEqual([]);
    expect(a.encode({ type: "audio_end" })).toEqual([]);
  });
});

describe("a seeded session", () => {
  it("carries the conversation as text in session.start, a call and its result as notes", () => {
    const a = adapter();
    expect(
      a.encodeContext({
        items: [
          { role: "user", text: "Where is order 7?" },
          { role: "model_calls", calls: [{ id: "c1", name: "lookup_order", args: { id: "7" } }] },
          {
            role: "tool_results",
            results: [{ callId: "c1", name: "lookup_order", result: { status: "shipped" } }],
          },
          { role: "model", text: "It has shipped." },
        ],
      }),
    ).toEqual([]);
    const start = SessionStartEvent.parse(JSON.parse(a.setupFrame({ seeded: true })));
    expect(start.session.input?.map((i) => i.role)).toEqual([
      "user",
      "developer",
      "developer",
      "assistant",
    ]);
  });

  it("is cut to the service's limits, newest kept", () => {
    const items: InitialItem[] = Array.from({ length: 200 }, (_, i) => ({
      role: "user",
      content: [{ type: "input_text", text: `line ${i}` }],
    }));
    const kept = fitSeed(items);
    expect(kept).toHaveLength(MAX_SEED_MESSAGES);
    expect(kept.at(-1)).toEqual(items.at(-1));
    const long: InitialItem[] = Array.from({ length: 10 }, () => ({
      role: "user",
      content: [{ type: "input_text", text: "x".repeat(8000) }],
    }));
    expect(fitSeed(long)).toHaveLength(4); // 2,000 tokens each of 8,192
  });
});

describe("when the backend is asked to go on", () => {
  const output = (callId: string, scheduling?: "silent" | "when_idle") => ({
    callId,
    name: "lookup_order",
    result: { ok: true },
    ...(scheduling === undefined ? {} : { scheduling }),
  });
  const types = (frames: string[]) => frames.map((f) => JSON.parse(f).type as string);

  it("a silent result is appended only: it prompts nothing", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, responseCompleted());
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_1", "silent")] })),
    ).toEqual(["response.item.create"]);
  });

  it("a side effect's result that lets the reply go on (when_idle) continues its response", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, responseCompleted());
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_1", "when_idle")] })),
    ).toEqual(["response.item.create", "response.create"]);
  });

  it("a spoken result waits for the rest of its response's outputs, then one response.create", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, functionCall("call_2"));
    events(a, responseCompleted());
    // The spoken one first: its response still lacks call_2's output, so nothing goes on yet
    // (the service refuses response.create while an output is missing).
    expect(types(a.encode({ type: "tool_responses", responses: [output("call_1")] }))).toEqual([
      "response.item.create",
    ]);
    // The other completes it while the turn is open (when_idle): the response goes on now.
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_2", "when_idle")] })),
    ).toEqual(["response.item.create", "response.create"]);
  });

  it("a response completed by a silent output (its turn over or cut) does not go on, whatever was asked before", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, functionCall("call_2"));
    events(a, responseCompleted());
    types(a.encode({ type: "tool_responses", responses: [output("call_1", "when_idle")] }));
    // The reply it would give belongs to a turn that is over: it would come in the next one.
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_2", "silent")] })),
    ).toEqual(["response.item.create"]);
  });
});

describe("usage, billed by the active second", () => {
  const updated = (seconds: number) => ({
    type: "session.usage.updated",
    event_id: `ev_usage_${seconds}`,
    usage: { seconds },
  });
  const secondsOf = (evs: ModelEvent[]) =>
    evs.flatMap((e) => (e.type === "usage" ? [e.usage.seconds] : []));

  it("the cumulative seconds become what each update added, never summed twice", () => {
    const a = adapter();
    expect(secondsOf(events(a, updated(1.5)))).toEqual([1.5]);
    // The same total again adds nothing.
    expect(secondsOf(events(a, updated(1.5)))).toEqual([]);
    expect(secondsOf(events(a, updated(4)))).toEqual([2.5]);
    const closed = events(a, {
      type: "session.closed",
      event_id: "ev_closed",
      reason: "expired",
      session: { id: "sess_1", expires_at: 0, model: "gpt-live-1" },
      usage: { seconds: 5 },
    });
    expect(secondsOf(closed)).toEqual([1]);
    const usage = closed.find((e) => e.type === "usage");
    expect(usage).toMatchObject({ usage: { promptTokens: 0, totalTokens: 0, seconds: 1 } });
  });

  it("the backend's tokens come with the end of each of its responses", () => {
    const a = adapter();
    const ended = (usage: unknown) => ({
      ...responseCompleted(null),
      event: { type: "response.completed", response: { id: "resp_2", usage } },
    });
    expect(
      events(
        a,
        ended({
          input_tokens: 40,
          output_tokens: 12,
          total_tokens: 52,
          input_tokens_details: { cached_tokens: 8 },
        }),
      ),
    ).toEqual([
      {
        type: "usage",
        usage: { promptTokens: 40, responseTokens: 12, totalTokens: 52, cachedTokens: 8 },
      },
    ]);
    // A snapshot whose usage cannot be read costs the usage, nothing else.
    expect(events(a, ended({ input_tokens: "many" }))).toEqual([]);
    expect(events(a, ended(null))).toEqual([]);
  });

  it("a new connection is a new service session: its seconds count from 0", () => {
    const first = adapter();
    events(first, updated(30));
    expect(secondsOf(events(adapter(), updated(2)))).toEqual([2]);
  });
});

describe("a direct call's sideband, attached", () => {
  const sent = (frames: string[]) => frames.map((f) => JSON.parse(f) as Record<string, unknown>);

  it("gives the call the agent's tools (the one setting a running session lets change)", () => {
    const frames = adapter().attachFrames({ handedOff: false });
    expect(frames.every((f) => readClientEvent(f).ok)).toBe(true);
    const [update] = sent(frames);
    expect(frames).toHaveLength(1);
    expect(update).toMatchObject({
      type: "session.update",
      session: {
        delegation: { type: "responses", responses: { tools: [{ name: "lookup_order" }] } },
      },
    });
    // Instructions and voice are fixed once a session started: a sideband never sends them.
    expect(JSON.stringify(update)).not.toMatch(/"instructions"|"voice"/);
  });

  it("after a handoff, appends the new agent's instructions too, cut to what one append carries", () => {
    const long = new GptLiveAdapter({
      model: "gpt-live-1",
      backendModel: "gpt-5-mini",
      agent: { systemInstruction: "Answer billing questions. ".repeat(200), tools: [] },
    });
    const frames = long.attachFrames({ handedOff: true });
    expect(frames.every((f) => readClientEvent(f).ok)).toBe(true);
    const append = sent(frames)[1]!;
    expect(append).toMatchObject({ type: "session.instructions.append", delegation_id: null });
    expect(String(append.content)).toMatch(/^From now on, follow these instructions/);
    expect(String(append.content).length).toBeLessThanOrEqual(2000);
    expect(String(append.content)).toMatch(/\[…cut to fit\]$/);
  });
});
