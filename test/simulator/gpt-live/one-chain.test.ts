/**
 * The GPT-Live face's backend is one response chain for the session, as the field measured
 * the service (livekit/agents PR #7266, livekit/agents-js PR #2495; habemus-papadum/pdum_aiui's
 * probe of 2026-10-10): src/simulator/README.md lists each rule with its source.
 */
import { describe, expect, it } from "vitest";
import {
  calls,
  errorOf,
  LiveDriver,
  type Msg,
  nested,
  pcm,
  said,
  startEvent,
  TOOLS,
  types,
} from "./driver.js";

const PROFILE = {
  type: "function",
  name: "get_user_profile",
  description: "The user's profile.",
  parameters: { type: "object", properties: {} },
  strict: true,
};
const SUGGEST = {
  type: "function",
  name: "suggest_topics",
  description: "Show topic chips.",
  parameters: { type: "object", properties: { topics: { type: "array" } } },
  strict: true,
};
/** A session with the FAQ, profile and chips tools, calling `names` on every turn. */
function chain(names: string[], knobs: Record<string, unknown> = {}): LiveDriver {
  const live = new LiveDriver({
    calls: { byTurn: {}, otherwise: names },
    repeatAnswers: true,
    ...knobs,
  });
  live.send(
    startEvent({
      delegation: {
        type: "responses",
        responses: { model: "gpt-5.5", tools: [...TOOLS, PROFILE, SUGGEST] },
      },
    }),
  );
  return live;
}
/** The user says something (`ms` of speech, then the silence that ends it). */
function speak(live: LiveDriver, ms = 800): Msg[] {
  live.send({ type: "session.input_audio.append", audio: pcm(ms, true) });
  return live.send({ type: "session.input_audio.append", audio: pcm(600, false) });
}

describe("the GPT-Live face's one response chain", () => {
  it("refuses response.create while any call is unanswered, naming every missing id (function_call_outputs_required)", () => {
    const live = chain(["lookup_faq", "get_user_profile"]);
    const [faq, profile] = calls(live.line("hours?"));
    const first = errorOf(live.send({ type: "response.create", event_id: "r1" }));
    expect(first).toMatchObject({ code: "function_call_outputs_required", client_event_id: "r1" });
    expect(first?.message).toContain(faq!.call_id);
    expect(first?.message).toContain(profile!.call_id);
    live.output(profile!.call_id, '{"name":"Ada"}');
    const second = errorOf(live.send({ type: "response.create" }));
    expect(second?.message).toContain(faq!.call_id);
    expect(second?.message).not.toContain(profile!.call_id);
    live.output(faq!.call_id, '{"hours":"9-5"}');
    const answer = said(live.send({ type: "response.create" }));
    expect(answer).toContain("lookup_faq found");
    expect(answer).toContain("get_user_profile found");
  });

  it("two questions in one utterance: one delegation, one response with both calls", () => {
    const live = chain(["lookup_faq", "get_user_profile"]);
    const out = speak(live);
    expect(types(out).filter((t) => t === "session.delegation.created")).toHaveLength(1);
    expect(nested(out).filter((e) => e.type === "response.created")).toHaveLength(1);
    expect(calls(out).map((c) => c.name)).toEqual(["lookup_faq", "get_user_profile"]);
  });

  it("speech heard while a call is open is held: nothing said, nothing delegated, until the continuation completes", () => {
    const live = chain(["lookup_faq"]);
    const [call] = calls(speak(live));
    const held = speak(live);
    // The transcript of what the user said, and nothing more.
    expect(types(held).every((t) => t === "session.input_transcript.delta")).toBe(true);
    expect(said(held)).toBe("");
    // The output alone does not free it: the response is not continued yet.
    expect(live.output(call!.call_id, '{"hours":"9-5"}')).toEqual([]);
    expect(said(live.tick(60_000))).toBe("");
    const after = live.send({ type: "response.create" });
    const words = said(after);
    // The continuation first, then the held question, chained on it (its own delegation).
    expect(words.indexOf("lookup_faq found")).toBeGreaterThanOrEqual(0);
    expect(words.indexOf("Tell me something interesting")).toBeGreaterThan(
      words.indexOf("lookup_faq found"),
    );
    const delegations = after.filter((m) => m.type === "session.delegation.created");
    expect(delegations).toHaveLength(1);
    const firstEnd = after.findIndex(
      (m) => m.type === "response.event" && (m.event as Msg).type === "response.completed",
    );
    expect(after.indexOf(delegations[0]!)).toBeGreaterThan(firstEnd);
  });

  it("a typed line's item survives a refusal and is read by the next run, after the results", () => {
    const live = chain(["lookup_faq"]);
    const [call] = calls(live.line("hours?"));
    expect(types(live.line("and on Sunday?"))).toEqual(["error"]);
    live.output(call!.call_id, '{"hours":"9-5"}');
    expect(said(live.send({ type: "response.create" }))).toMatch(
      /^Here is what lookup_faq found: .*You said: “and on Sunday\?”/,
    );
  });

  it("a failed response drops its calls: response.failed, their outputs refused, the chain goes on", () => {
    const live = chain(["lookup_faq"], { failResponses: [1] });
    const out = live.line("hours?");
    const [call] = calls(out);
    const end = nested(out).at(-1)!;
    expect(end.type).toBe("response.failed");
    expect((end.response as { status: string }).status).toBe("failed");
    expect(said(out)).toBe("");
    expect(errorOf(live.output(call!.call_id, "{}"))).toMatchObject({ code: "invalid_value" });
    // Nothing is open: the next line is answered.
    live.send({
      type: "response.item.create",
      item: { type: "message", role: "user", content: "anything new?" },
    });
    expect(said(live.send({ type: "response.create" }))).toContain("anything new?");
  });

  it("a cancelled call's output is never spoken of; an error is spoken as any result is", () => {
    const cancelled = chain(["lookup_faq"]);
    const [a] = calls(cancelled.line("hours?"));
    cancelled.output(a!.call_id, JSON.stringify({ status: "cancelled", reason: "barge_in" }));
    expect(said(cancelled.line("where are you?"))).not.toContain("lookup_faq");
    const failed = chain(["lookup_faq"]);
    const [b] = calls(failed.line("hours?"));
    failed.output(b!.call_id, JSON.stringify({ error: "cancelled: barge_in" }));
    expect(said(failed.line("where are you?"))).toContain(
      "Here is what lookup_faq found: cancelled: barge_in",
    );
  });

  it("announceReplies: the reply to a client's response.create comes under a delegation of its own, announced first", () => {
    const live = chain([], { announceReplies: true });
    const out = live.line("hi");
    const announced = out.find((m) => m.type === "session.delegation.created");
    expect(announced).toBeDefined();
    const id = (announced!.delegation as { id: string }).id;
    const backend = out.filter((m) => m.type === "response.event");
    expect(backend.length).toBeGreaterThan(0);
    expect(backend.every((m) => m.delegation_id === id)).toBe(true);
    expect(out.indexOf(announced!)).toBeLessThan(out.indexOf(backend[0]!));
    expect(said(out)).toContain("hi");
  });

  it("duplicateDelegation: the announcement and its response's events come twice (new event ids, the same ids)", () => {
    const live = chain(["lookup_faq"], { duplicateDelegation: true });
    const out = speak(live);
    const announced = out.filter((m) => m.type === "session.delegation.created");
    expect(announced).toHaveLength(2);
    expect(announced[0]!.delegation).toEqual(announced[1]!.delegation);
    expect(announced[0]!.event_id).not.toBe(announced[1]!.event_id);
    const [first, second] = calls(out);
    expect(second).toEqual(first);
    expect(nested(out).filter((e) => e.type === "response.created")).toHaveLength(2);
  });

  it("expires after two hours unless told otherwise; 16 kHz input is heard", () => {
    const live = new LiveDriver();
    const [started] = live.start({ audio: { format: { type: "audio/pcm", rate: 16000 } } });
    expect((started!.session as { expires_at: number }).expires_at).toBe(
      Math.floor(live.now / 1000) + 7200,
    );
    live.send({ type: "session.input_audio.append", audio: pcm(800, true, 16000) });
    const heard = live.send({ type: "session.input_audio.append", audio: pcm(600, false, 16000) });
    expect(said(heard)).not.toBe("");
    expect(live.tick(2 * 60 * 60 * 1000 - 1).some((m) => m.type === "session.closed")).toBe(false);
    expect(live.tick(1)[0]).toMatchObject({ type: "session.closed", reason: "expired" });
  });
});
