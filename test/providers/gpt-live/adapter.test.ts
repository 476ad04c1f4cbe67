// The GPT-Live adapter (providers/gpt-live/adapter.ts): what it sends is what the service's
// schema takes; utterances end where the user's speech begins on the timeline; a function
// call delivered twice is one call; the backend is one response chain (one request at a time,
// none while a call is open, every reply paired with its request); a seed is text that fits
// the service's limits and never parts a call from its result.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  fitSeed,
  GptLiveAdapter,
  MAX_SEED_MESSAGES,
} from "../../../src/providers/gpt-live/adapter.js";
import {
  type InitialItem,
  readClientEvent,
  SessionStartEvent,
} from "../../../src/providers/gpt-live/schemas.js";
import type { ModelEvent } from "../../../src/vocabulary/model.js";

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
      // 16 kHz, the clients' own: their audio goes as it is (bluejay mivas-bench PR #56).
      format: { type: "audio/pcm", rate: 16000 },
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

let responseIds = 0;
/** The end of a backend response's stream (its calls are all known then). */
const responseCompleted = (
  delegationId: string | null = "del_1",
  status: "completed" | "failed" = "completed",
) => ({
  type: "response.event",
  event_id: "ev_done",
  delegation_id: delegationId,
  event: { type: `response.${status}`, response: { id: `resp_${++responseIds}`, status } },
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

const backend = (type: string, delegationId: string | null, extra = {}) => ({
  type: "response.event",
  event_id: `ev_${type}`,
  delegation_id: delegationId,
  event: { type, ...extra },
});
const delegated = (id: string, clientEventId?: string) => ({
  type: "session.delegation.created",
  event_id: `ev_${id}`,
  offset_ms: 100,
  delegation: { id, target: "responses", type: "delegation" },
  ...(clientEventId === undefined ? {} : { client_event_id: clientEventId }),
});
const sentTypes = (frames: string[]) => frames.map((f) => JSON.parse(f).type as string);
/** The `event_id` of the response.create among `frames`. */
const requestId = (frames: readonly string[]) =>
  frames.map((f) => JSON.parse(f)).find((e) => e.type === "response.create")?.event_id as string;

describe("the replies liveline asks for", () => {
  it("the reply to a line is ready at its first output, once, names the line's turn, and is done at its end", () => {
    const a = adapter();
    a.encode({ type: "user_text", text: "hours?", turnId: "t1" });
    expect(events(a, backend("response.created", null))).toEqual([{ type: "working" }]);
    expect(events(a, backend("response.output_text.delta", null, { delta: "We" }))).toEqual([
      { type: "reply_ready", turnId: "t1", words: true },
    ]);
    expect(events(a, backend("response.output_text.delta", null, { delta: " open" }))).toEqual([]);
    expect(events(a, responseCompleted(null))).toEqual([{ type: "reply_done" }]);
  });

  it("the voice's own delegation is no reply asked for; the continuation of its results is", () => {
    const a = adapter();
    events(a, delegated("del_1"));
    expect(events(a, backend("response.created", "del_1"))).toEqual([{ type: "working" }]);
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, responseCompleted())).toEqual([
      { type: "tool_call", calls: [lookup("call_1")] },
    ]);
    a.encode({
      type: "tool_responses",
      responses: [{ callId: "call_1", name: "lookup_order", result: {} }],
      turnId: "t1",
    });
    events(a, backend("response.created", "del_1"));
    expect(events(a, backend("response.output_text.delta", "del_1", { delta: "It" }))).toEqual([
      { type: "reply_ready", turnId: "t1", words: true },
    ]);
  });

  it("one request at a time: a line asked while a reply is awaited goes once that reply has ended, and each reply names its own turn", () => {
    const a = adapter();
    expect(sentTypes(a.encode({ type: "user_text", text: "hours?", turnId: "t1" }))).toEqual([
      "response.item.create",
      "response.create",
    ]);
    // The item goes at once (the backend reads it on its next run); the request waits.
    expect(
      sentTypes(a.encode({ type: "user_text", text: "and on Sunday?", turnId: "t2" })),
    ).toEqual(["response.item.create"]);
    const replies: ModelEvent[] = [];
    events(a, backend("response.created", null));
    replies.push(...events(a, backend("response.output_text.delta", null, { delta: "Nine." })));
    const end = a.decode(JSON.stringify(responseCompleted(null)));
    if (!end.ok) throw new Error("not read");
    expect(sentTypes(end.send ?? [])).toEqual(["response.create"]);
    events(a, backend("response.created", null));
    replies.push(...events(a, backend("response.output_text.delta", null, { delta: "Closed." })));
    expect(replies).toEqual([
      { type: "reply_ready", turnId: "t1", words: true },
      { type: "reply_ready", turnId: "t2", words: true },
    ]);
  });

  it("nothing is asked while any call of the session is open, across delegations; then one request for all", () => {
    const a = adapter();
    events(a, delegated("del_1"));
    events(a, backend("response.created", "del_1"));
    events(a, functionCall("call_1"));
    events(a, responseCompleted("del_1"));
    events(a, delegated("del_2"));
    events(a, backend("response.created", "del_2"));
    events(a, { ...functionCall("call_2"), delegation_id: "del_2" });
    events(a, responseCompleted("del_2"));
    const out = (callId: string) => ({
      type: "tool_responses" as const,
      responses: [{ callId, name: "lookup_order", result: {} }],
      turnId: "t1",
    });
    // del_2's call is answered first: del_1's still waits, so no request (the service would
    // refuse it, function_call_outputs_required, and a per-response gate stalled on that).
    expect(sentTypes(a.encode(out("call_2")))).toEqual(["response.item.create"]);
    expect(sentTypes(a.encode(out("call_1")))).toEqual(["response.item.create", "response.create"]);
  });

  it("a refused request is asked again once the calls it names are answered; one liveline never heard of is answered as cancelled", () => {
    const a = adapter();
    const id = requestId(a.encode({ type: "user_text", text: "hours?", turnId: "t1" }));
    const refused = a.decode(
      JSON.stringify({
        type: "error",
        event_id: "ev_err",
        error: {
          type: "invalid_request_error",
          code: "function_call_outputs_required",
          message: `Submit the pending function call outputs before response.create. Missing: call_9.`,
          client_event_id: id,
        },
      }),
    );
    if (!refused.ok) throw new Error("not read");
    expect(refused.events).toEqual([
      expect.objectContaining({ type: "service_error", code: "function_call_outputs_required" }),
    ]);
    const [output, again] = (refused.send ?? []).map((f) => JSON.parse(f));
    expect(output.item).toMatchObject({ type: "function_call_output", call_id: "call_9" });
    expect(JSON.parse(output.item.output)).toMatchObject({ status: "cancelled" });
    expect(again.type).toBe("response.create");
    expect(again.event_id).not.toBe(id);
    // Its reply names the line's turn.
    events(a, backend("response.created", null));
    expect(events(a, backend("response.output_text.delta", null, { delta: "Nine." }))).toEqual([
      { type: "reply_ready", turnId: "t1", words: true },
    ]);
  });

  it("a request refused for another reason is not asked again: its turn is told no reply comes", () => {
    const a = adapter();
    const id = requestId(a.encode({ type: "user_text", text: "hours?", turnId: "t1" }));
    expect(
      events(a, {
        type: "error",
        event_id: "ev_err",
        error: {
          type: "invalid_request_error",
          code: "invalid_value",
          message: "no",
          client_event_id: id,
        },
      }),
    ).toEqual([
      { type: "service_error", code: "invalid_value", message: "no" },
      { type: "reply_ready", turnId: "t1", words: false },
      { type: "reply_done" },
    ]);
  });

  it("the reply to liveline's request is paired whether or not the service announces it as a delegation first", () => {
    for (const announce of [false, true]) {
      const a = adapter();
      a.encode({ type: "user_text", text: "hours?", turnId: "t1" });
      // Announced after the request went: that request's reply (the chain is busy with it).
      if (announce) events(a, delegated("del_9"));
      const key = announce ? "del_9" : null;
      events(a, backend("response.created", key));
      expect(events(a, backend("response.output_text.delta", key, { delta: "Nine." }))).toEqual([
        { type: "reply_ready", turnId: "t1", words: true },
      ]);
    }
    // A voice delegation announced before any request stays the voice's own.
    const b = adapter();
    events(b, delegated("del_1"));
    events(b, backend("response.created", "del_1"));
    expect(events(b, backend("response.output_text.delta", "del_1", { delta: "Hm." }))).toEqual([]);
  });

  it("a reply with calls only is ready at its end, before its calls (they are its turn's), and done after them", () => {
    const a = adapter();
    a.encode({ type: "user_text", text: "order 7?", turnId: "t1" });
    events(a, backend("response.created", "del_1"));
    events(a, functionCall("call_1"));
    expect(events(a, responseCompleted())).toEqual([
      { type: "reply_ready", turnId: "t1", words: false },
      { type: "tool_call", calls: [lookup("call_1")] },
      { type: "reply_done" },
    ]);
  });

  it("a reply with no words and no calls is over at its end (an empty reply: its utterance ends)", () => {
    const a = adapter();
    a.encode({ type: "user_text", text: "hm", turnId: "t1" });
    events(a, backend("response.created", null));
    expect(events(a, responseCompleted(null))).toEqual([
      { type: "reply_ready", turnId: "t1", words: false },
      { type: "reply_done" },
      { type: "turn_complete", reason: "empty_reply" },
    ]);
  });

  it("once every word of the reply is said, the voice's next words are another utterance", () => {
    const a = adapter();
    a.encode({ type: "user_text", text: "hours?", turnId: "t1" });
    events(a, backend("response.created", null));
    events(a, backend("response.output_text.delta", null, { delta: "We open at nine." }));
    events(a, responseCompleted(null));
    expect(events(a, transcript("output", "We open ", 0, 500)).map((e) => e.type)).toEqual([
      "transcript_delta",
    ]);
    expect(events(a, transcript("output", "at nine.", 500, 900)).map((e) => e.type)).toEqual([
      "transcript_delta",
    ]);
    expect(
      events(a, transcript("output", "Anything else?", 1500, 2000)).map((e) => e.type),
    ).toEqual(["turn_complete", "transcript_delta"]);
  });

  it("a failed response's calls are handed on dropped (never run), and their outputs are not sent", () => {
    const a = adapter();
    events(a, delegated("del_1"));
    events(a, backend("response.created", "del_1"));
    events(a, functionCall("call_1"));
    expect(events(a, responseCompleted("del_1", "failed"))).toEqual([
      { type: "tool_call", calls: [lookup("call_1")], dropped: "response_failed" },
      { type: "service_error", code: "response_failed", message: "del_1" },
    ]);
    expect(
      a.encode({
        type: "tool_responses",
        responses: [
          { callId: "call_1", name: "lookup_order", error: "cancelled: response_failed" },
        ],
      }),
    ).toEqual([]);
  });

  it("a response delivered again (the same id) hands on nothing new", () => {
    const a = adapter();
    const created = backend("response.created", "del_1", { response: { id: "resp_x" } });
    const done = backend("response.completed", "del_1", { response: { id: "resp_x" } });
    events(a, delegated("del_1"));
    events(a, created);
    events(a, functionCall("call_1"));
    expect(events(a, done)).toEqual([{ type: "tool_call", calls: [lookup("call_1")] }]);
    expect(events(a, created)).toEqual([]);
    expect(events(a, functionCall("call_1"))).toEqual([]);
    expect(events(a, done)).toEqual([]);
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
    // The call and its result: one note, so that no trim parts them.
    expect(start.session.input?.map((i) => i.role)).toEqual(["user", "developer", "assistant"]);
    expect(start.session.input?.[1]?.content[0]?.text).toBe(
      'You called lookup_order({"id":"7"}): lookup_order (c1) returned {"status":"shipped"}.',
    );
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

  it("results go back as function_call_output items and one response.create", () => {
    const frames = adapter().encode({
      type: "tool_responses",
      responses: [{ callId: "call_1", name: "lookup_order", result: { status: "shipped" } }],
    });
    expect(frames.map((f) => readClientEvent(f).ok)).toEqual([true, true]);
    expect(types(frames)).toEqual(["response.item.create", "response.create"]);
    expect(JSON.parse(frames[0]!).item).toEqual({
      type: "function_call_output",
      call_id: "call_1",
      output: '{"status":"shipped"}',
    });
  });

  it("every finished response is continued, a silent output's too (the service answers speech it holds only then)", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, responseCompleted());
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_1", "silent")] })),
    ).toEqual(["response.item.create", "response.create"]);
  });

  it("a response's outputs go as they come; the one request once the last is in", () => {
    const a = adapter();
    events(a, functionCall("call_1"));
    events(a, functionCall("call_2"));
    events(a, responseCompleted());
    expect(types(a.encode({ type: "tool_responses", responses: [output("call_1")] }))).toEqual([
      "response.item.create",
    ]);
    expect(
      types(a.encode({ type: "tool_responses", responses: [output("call_2", "silent")] })),
    ).toEqual(["response.item.create", "response.create"]);
  });

  it("a cancelled call's output says it was cancelled and is not to be spoken of, not an error", () => {
    const frames = adapter().encode({
      type: "tool_responses",
      responses: [
        {
          callId: "call_1",
          name: "lookup_order",
          error: "cancelled: barge_in",
          scheduling: "silent",
        },
      ],
    });
    const told = JSON.parse(JSON.parse(frames[0]!).item.output);
    expect(told).toMatchObject({ status: "cancelled", reason: "barge_in" });
    expect(told.error).toBeUndefined();
  });
});

describe("audio, and the service session's end", () => {
  it("client audio (16 kHz) goes as it is; the model's 16 kHz is raised to the 24 kHz clients take", () => {
    const a = adapter();
    const pcm = new Uint8Array(640).fill(1);
    const [append] = a.encode({ type: "user_audio", pcm });
    expect(Buffer.from(JSON.parse(append!).audio, "base64")).toEqual(Buffer.from(pcm));
    const [audio] = events(a, {
      type: "session.output_audio.delta",
      delta: Buffer.from(new Uint8Array(640)).toString("base64"),
    });
    expect(audio).toMatchObject({ type: "audio_delta" });
    expect((audio as { pcm: Uint8Array }).pcm.length).toBe(960);
  });

  it("a service session that expired is said to the core as such (nothing lost: replaced when needed)", () => {
    const closed = events(adapter(), {
      type: "session.closed",
      event_id: "ev_c",
      reason: "expired",
      session: { id: "s", expires_at: 0, model: "gpt-live-1", status: "active" },
      usage: { seconds: 0 },
    });
    expect(closed.at(-1)).toEqual({
      type: "upstream_closed",
      code: 1000,
      reason: "expired",
      fatal: false,
      expired: true,
    });
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
