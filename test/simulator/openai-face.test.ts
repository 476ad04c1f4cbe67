import { describe, expect, it } from "vitest";
import { OaiDriver as Face, type Msg } from "./openai-driver.js";

const setup = {
  type: "session.update",
  session: {
    type: "realtime",
    output_modalities: ["text"],
    tools: [{ type: "function", name: "lookup_faq", description: "", parameters: {} }],
  },
};
const user = (text: string) => ({
  type: "conversation.item.create",
  item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
});
const types = (msgs: Msg[]) => msgs.map((m) => m.type);
/** What the next response says (its text deltas). */
const spokenNext = (face: Face) =>
  face
    .send({ type: "response.create" })
    .filter((m) => m.type === "response.output_text.delta")
    .map((m) => m.delta)
    .join("");
/** A face whose first response called lookup_faq: the call's arguments-done event. */
function calledLookup(): { face: Face; call: Msg } {
  const face = new Face({ calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
  face.send(setup);
  face.send(user("hi"));
  const call = face
    .send({ type: "response.create" })
    .find((m) => m.type === "response.function_call_arguments.done");
  if (call === undefined) throw new Error("no call");
  return { face, call };
}
const errorCode = (msgs: Msg[]) =>
  (msgs.find((m) => m.type === "error")?.error as { code?: string } | undefined)?.code;

describe("the simulator's OpenAI Realtime face, strict where the service is", () => {
  it("session.created on open; session.update answered with session.updated", () => {
    const face = new Face();
    expect(types(face.out)).toEqual(["session.created"]);
    expect(types(face.send(setup))).toEqual(["session.updated"]);
  });

  it("an unknown field, or a session without its GA type, is an error event, not a close", () => {
    const face = new Face();
    expect(errorCode(face.send({ ...setup, session: { ...setup.session, voicee: "x" } }))).toBe(
      "unknown_parameter",
    );
    expect(errorCode(face.send({ type: "session.update", session: { instructions: "x" } }))).toBe(
      "invalid_value",
    );
    expect(types(face.send(setup))).toEqual(["session.updated"]);
  });

  it("a second response.create while one is active is refused", () => {
    const face = new Face({ timeScale: 1, msPerWord: 100 });
    face.send(setup);
    face.send(user("hi"));
    expect(types(face.send({ type: "response.create" }))[0]).toBe("response.created");
    expect(errorCode(face.send({ type: "response.create" }))).toBe(
      "conversation_already_has_active_response",
    );
    expect(types(face.tick(60_000)).at(-1)).toBe("response.done");
    expect(types(face.send({ type: "response.create" }))[0]).toBe("response.created");
  });

  it("a function call ends its response; its output alone prompts nothing, response.create speaks it", () => {
    const face = new Face({ calls: { byTurn: { 1: ["lookup_faq"] }, otherwise: [] } });
    face.send(setup);
    face.send(user("hi"));
    const first = face.send({ type: "response.create" });
    const call = first.find((m) => m.type === "response.function_call_arguments.done");
    expect(call).toBeDefined();
    expect(types(first).at(-1)).toBe("response.done");
    const output = face.send({
      type: "conversation.item.create",
      item: { type: "function_call_output", call_id: call!.call_id, output: '{"answer":"9-5"}' },
    });
    expect(types(output)).toEqual(["conversation.item.added", "conversation.item.done"]);
    const spoken = face.send({ type: "response.create" });
    const text = spoken
      .filter((m) => m.type === "response.output_text.delta")
      .map((m) => m.delta)
      .join("");
    expect(text).toContain("lookup_faq found: 9-5.");
  });

  it("previous_item_id inserts an item after the one named; an output placed before the latest response is not read out as new", () => {
    const outputAfterNextLine = (placed: boolean) => {
      const { face, call } = calledLookup();
      // The next line is answered before the call's output comes.
      face.send(user("and then?"));
      face.send({ type: "response.create" });
      const added = face.send({
        type: "conversation.item.create",
        ...(placed ? { previous_item_id: call.item_id } : {}),
        item: { type: "function_call_output", call_id: call.call_id, output: '{"answer":"9-5"}' },
      });
      expect(added[0]).toMatchObject({
        type: "conversation.item.added",
        previous_item_id: placed ? call.item_id : expect.any(String),
      });
      return spokenNext(face);
    };
    expect(outputAfterNextLine(true)).not.toContain("lookup_faq found");
    // Control: appended at the end, the same output is read out.
    expect(outputAfterNextLine(false)).toContain("lookup_faq found");
  });

  it("previous_item_id naming no item, or placing an output before its call, is refused", () => {
    const { face, call } = calledLookup();
    const output = {
      type: "function_call_output",
      call_id: call.call_id,
      output: "{}",
    };
    expect(
      errorCode(
        face.send({ type: "conversation.item.create", previous_item_id: "nope", item: output }),
      ),
    ).toBe("invalid_value");
    expect(
      errorCode(
        face.send({ type: "conversation.item.create", previous_item_id: "root", item: output }),
      ),
    ).toBe("invalid_value");
  });

  // Found by the attack of 2026-11-29: after a rebuild the face read liveline's instruction
  // to go on back as a question, and the seeded result it owed was never said.
  describe("a seeded conversation's outputs that no words of the model followed (found by the attack of 2026-11-29)", () => {
    /** Seeds a tool turn (line, words, call, output; words after it if `wordsAfter`), then `next`. */
    const seeded = (wordsAfter: boolean, next: string) => {
      const face = new Face();
      face.send(setup);
      const said = (text: string) => ({
        type: "conversation.item.create",
        item: { type: "message", role: "assistant", content: [{ type: "output_text", text }] },
      });
      face.send(user("what are your opening hours?"));
      face.send(said("Let me look."));
      face.send({
        type: "conversation.item.create",
        item: { type: "function_call", call_id: "c1", name: "lookup_faq", arguments: "{}" },
      });
      face.send({
        type: "conversation.item.create",
        item: { type: "function_call_output", call_id: "c1", output: '{"answer":"9-5"}' },
      });
      if (wordsAfter) face.send(said("Nine to five."));
      face.send(user(next));
      return spokenNext(face);
    };
    const NUDGE = "Please continue: answer the user now, using the tool results you have received.";

    it("asked to go on: it says them, and never reads the instruction back", () => {
      const owed = seeded(false, NUDGE);
      expect(owed).toContain("lookup_faq found: 9-5.");
      expect(owed).not.toContain("Please continue");
      // Control: words followed the output: it was said, nothing is owed.
      expect(seeded(true, NUDGE)).not.toContain("lookup_faq found");
    });

    it("to a new line: it says them first, then answers the line", () => {
      const reply = seeded(false, "and on weekends?");
      expect(reply).toMatch(/^Here is what lookup_faq found: .*and on weekends/);
      expect(seeded(true, "and on weekends?")).not.toContain("lookup_faq found");
    });

    it("control: a live side effect's output (no response after it) is not read out to a new line", () => {
      const { face, call } = calledLookup();
      face.send({
        type: "conversation.item.create",
        item: { type: "function_call_output", call_id: call.call_id, output: "{}" },
      });
      face.send(user("and on weekends?"));
      expect(spokenNext(face)).not.toContain("lookup_faq found");
    });
  });

  it("speech during a response cancels it (turn_detected); response.cancel with none active is refused", () => {
    const face = new Face({ timeScale: 1, msPerWord: 100 });
    face.send(setup);
    face.send(user("hi"));
    face.send({ type: "response.create" });
    const speech = face.send({ type: "input_audio_buffer.append", audio: "AAAAAAAA" });
    expect(types(speech)).toEqual(["input_audio_buffer.speech_started", "response.done"]);
    expect(speech[1]!.response).toMatchObject({
      status: "cancelled",
      status_details: { reason: "turn_detected" },
    });
    expect(errorCode(face.send({ type: "response.cancel" }))).toBe("response_cancel_not_active");
  });
});

describe("a preamble (two message generations in one response)", () => {
  const audioSetup = { ...setup, session: { ...setup.session, output_modalities: ["audio"] } };
  /** The response's message items with the audio each said, in ms (msPerWord 100). */
  function preambleReply(): { face: Face; items: { id: string; ms: number }[] } {
    const face = new Face({ preamble: true, msPerWord: 100, repeatAnswers: true });
    face.send(audioSetup);
    face.send(user("what are your hours?"));
    const out = face.send({ type: "response.create" });
    const items = out
      .filter((m) => m.type === "response.output_item.done")
      .map((m) => m.item as { id: string; content: { transcript: string }[] })
      .map((item) => ({
        id: item.id,
        ms: 100 * item.content[0]!.transcript.split(/\s+/).filter(Boolean).length,
      }));
    return { face, items };
  }

  it("opens the response with a message of its own, then the answer's", () => {
    const { items } = preambleReply();
    expect(items).toHaveLength(2);
    expect(items[0]!.ms).toBe(400); // "Let me check that."
  });

  it("a cut within an item's audio is taken; past it (the control: the old cut, the reply's played ms on its last item), refused", () => {
    const { face, items } = preambleReply();
    const [preamble, answer] = items as [{ id: string; ms: number }, { id: string; ms: number }];
    const cut = (item_id: string, audio_end_ms: number) =>
      face.send({ type: "conversation.item.truncate", item_id, content_index: 0, audio_end_ms });
    // Heard: all the preamble and all but the last 100 ms of the answer.
    const played = preamble.ms + answer.ms - 100;
    expect(types(cut(answer.id, played - preamble.ms))).toEqual(["conversation.item.truncated"]);
    expect(errorCode(cut(answer.id, played))).toBe("invalid_value");
  });
});

describe("a handoff on one connection (session.update between responses)", () => {
  const audioSetup = (voice: string) => ({
    type: "session.update",
    session: { type: "realtime", output_modalities: ["audio"], audio: { output: { voice } } },
  });
  it("a new voice is refused once the session has spoken audio; instructions and tools change", () => {
    const face = new Face();
    expect(types(face.send(audioSetup("marin")))).toEqual(["session.updated"]);
    // Not spoken yet: the voice may still change.
    expect(types(face.send(audioSetup("cedar")))).toEqual(["session.updated"]);
    face.send(user("hi"));
    face.send({ type: "response.create" });
    expect(errorCode(face.send(audioSetup("marin")))).toBe("cannot_update_voice");
    const update = { ...setup, session: { ...setup.session, output_modalities: undefined } };
    expect(types(face.send(update))).toEqual(["session.updated"]);
    expect(face.state.tools).toEqual(["lookup_faq"]);
  });

  it("asked to introduce itself, it says one line and calls nothing", () => {
    const face = new Face({ calls: { byTurn: {}, otherwise: ["lookup_faq"] } });
    face.send(setup);
    face.send(user("The conversation has just been handed to you. Introduce yourself."));
    const reply = face.send({ type: "response.create" });
    expect(types(reply)).not.toContain("response.function_call_arguments.done");
    const text = reply
      .filter((m) => m.type === "response.output_text.delta")
      .map((m) => m.delta)
      .join("");
    expect(text).toMatch(/^Hello, I am taking over from here/);
  });
});

// Found by the attack: the nudge was echoed as a line.
describe("asked to go on with nothing owed", () => {
  it("answers the seeded conversation's last unanswered line, not the instruction", () => {
    const face = new Face();
    face.send(setup);
    face.send(user("hi"));
    face.send({
      type: "conversation.item.create",
      item: {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Hello!" }],
      },
    });
    face.send(user("what are your hours?"));
    face.send(
      user("Please continue: answer the user now, using the tool results you have received."),
    );
    const said = face
      .send({ type: "response.create" })
      .filter((m) => m.type === "response.output_text.delta")
      .map((m) => m.delta)
      .join("");
    expect(said).toContain("what are your hours?");
    expect(said).not.toContain("Please continue");
  });
});

describe("a response cut short answered nothing", () => {
  it("the next response still answers the line it was for", () => {
    const face = new Face({ timeScale: 1, msPerWord: 100 });
    face.send(setup);
    face.send(user("what are your hours?"));
    face.send({ type: "response.create" });
    expect(types(face.send({ type: "response.cancel" }))).toEqual(["response.done"]);
    face.send({ type: "response.create" });
    const said = face
      .tick(60_000)
      .filter((m) => m.type === "response.output_text.delta")
      .map((m) => m.delta)
      .join("");
    expect(said).toContain("what are your hours?");
  });
});
