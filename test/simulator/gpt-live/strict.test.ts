import { describe, expect, it } from "vitest";
import { calls, errorOf, LiveDriver, startEvent, types } from "./driver.js";

describe("the GPT-Live face refuses what the service refuses, and goes on", () => {
  it("session.start first: anything before it is refused; session.started is the flat snapshot", () => {
    const live = new LiveDriver();
    expect(live.out).toEqual([]);
    expect(errorOf(live.send({ type: "response.create" }))?.code).toBe("session_not_started");
    const [started] = live.start();
    expect(started?.type).toBe("session.started");
    expect(started?.session).toMatchObject({
      id: "sess_sim",
      model: "gpt-live-1",
      status: "active",
      audio: { format: { type: "audio/pcm", rate: 24000 }, output: { voice: "marin" } },
      delegation: { type: "responses", responses: { model: "gpt-5.5" } },
      instructions: "Be brief.",
      store: false,
    });
    expect(started?.session).toHaveProperty("expires_at", expect.any(Number));
  });

  it("a second session.start is refused; the session is unchanged", () => {
    const live = new LiveDriver();
    live.start();
    expect(errorOf(live.send(startEvent({ model: "other" })))?.code).toBe(
      "session_already_started",
    );
    expect(live.state.config?.model).toBe("gpt-live-1");
  });

  it("unknown fields anywhere are unknown_parameter, the event ignored, with its client_event_id", () => {
    const live = new LiveDriver();
    const bad = live.send({
      ...startEvent(),
      event_id: "c1",
      session: { model: "gpt-live-1", audio: { output: { voice: "marin", speed: 1.2 } } },
    });
    expect(errorOf(bad)).toEqual({
      type: "invalid_request_error",
      code: "unknown_parameter",
      message: "Unknown parameter: 'session.audio.output.speed'.",
      param: "session.audio.output.speed",
      client_event_id: "c1",
    });
    expect(bad[0]?.client_event_id).toBe("c1");
    expect(live.state.config).toBeNull();
    live.start();
    expect(errorOf(live.send({ type: "response.create", response: {} }))?.code).toBe(
      "unknown_parameter",
    );
    expect(errorOf(live.send({ type: "session.input_audio.append", audio: "", x: 1 }))?.param).toBe(
      "x",
    );
    expect(errorOf(live.send({ type: "session.nope" }))?.code).toBe("invalid_event");
  });

  it("a function tool with an unknown field is refused at session.start", () => {
    const live = new LiveDriver();
    const start = startEvent({
      delegation: {
        type: "responses",
        responses: { model: "gpt-5.5", tools: [{ type: "function", name: "f", required: [] }] },
      },
    });
    expect(errorOf(live.send(start))?.param).toBe("session.delegation.responses.tools.0.required");
  });

  it("session.update changes only delegation.responses; the rest is immutable_field_update", () => {
    const live = new LiveDriver();
    live.start();
    for (const [session, param] of [
      [{ instructions: "x" }, "session.instructions"],
      [{ model: "gpt-live-2" }, "session.model"],
      [{ audio: { output: { voice: "cedar" } } }, "session.audio"],
      [{ delegation: { type: "client" } }, "session.delegation.type"],
    ] as const) {
      const error = errorOf(live.send({ type: "session.update", session }));
      expect(error, param).toMatchObject({ code: "immutable_field_update", param });
    }
    expect(errorOf(live.send({ type: "session.update", session: { voice: "x" } }))?.code).toBe(
      "unknown_parameter",
    );
    const [updated] = live.send({
      type: "session.update",
      session: { delegation: { type: "responses", responses: { instructions: "Use the FAQ." } } },
    });
    expect(updated?.type).toBe("session.updated");
    expect(updated?.session).toMatchObject({
      instructions: "Be brief.",
      delegation: { responses: { model: "gpt-5.5", instructions: "Use the FAQ." } },
    });
  });

  it("the appends need the delegation_id key (null is fine); a non-null id is refused with responses", () => {
    const live = new LiveDriver();
    live.start();
    for (const type of [
      "session.instructions.append",
      "session.thinking.append",
      "session.commentary.append",
    ]) {
      expect(errorOf(live.send({ type, content: "x" })), type).toMatchObject({
        code: "missing_required_parameter",
        param: "delegation_id",
      });
      expect(errorOf(live.send({ type, content: "x", delegation_id: "dlg_1" }))?.param).toBe(
        "delegation_id",
      );
    }
    const acks = live.send({
      type: "session.thinking.append",
      content: "the user is in a hurry",
      delegation_id: null,
      event_id: "t1",
    });
    expect(acks).toEqual([
      expect.objectContaining({
        type: "session.thinking.appended",
        start_ms: 0,
        end_ms: 0,
        client_event_id: "t1",
      }),
    ]);
  });

  it("a function_call_output for an unknown call_id is refused; response.* needs responses delegation", () => {
    const live = new LiveDriver();
    live.start();
    expect(errorOf(live.output("call_nope", "{}"))).toMatchObject({
      code: "invalid_value",
      param: "item.call_id",
    });
    const client = new LiveDriver();
    client.start({ delegation: { type: "client" } });
    expect(errorOf(client.send({ type: "response.create" }))?.code).toBe(
      "responses_delegation_required",
    );
  });

  it("response.create with outputs missing is refused, naming them; with nothing new the backend answers as is", () => {
    const live = new LiveDriver({ calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
    live.start();
    live.line("hours?");
    const [call] = calls(live.out);
    const refused = errorOf(live.send({ type: "response.create", event_id: "ask_1" }));
    expect(refused).toMatchObject({ code: "function_call_outputs_required" });
    expect(refused?.message).toContain(call!.call_id);
    const other = new LiveDriver();
    other.start();
    const answer = other.send({ type: "response.create" });
    expect(types(answer)).toContain("session.output_transcript.delta");
  });

  it("not-simulated events and decisions delegation say so", () => {
    const live = new LiveDriver();
    expect(errorOf(live.start({ delegation: { type: "decisions" } }))?.code).toBe("not_simulated");
    live.start();
    expect(errorOf(live.send({ type: "decision.create", event_id: "d" }))?.code).toBe(
      "not_simulated",
    );
  });

  it("a sideband may not start the session nor send audio", () => {
    const live = new LiveDriver();
    live.start();
    expect(live.sideband(startEvent())).toEqual([]);
    expect(errorOf(live.side)?.code).toBe("invalid_event");
    live.side = [];
    live.sideband({ type: "session.input_audio.append", audio: "AAAA" });
    expect(errorOf(live.side)?.code).toBe("invalid_event");
    expect(live.out.filter((m) => m.type === "error")).toEqual([]);
  });
});
