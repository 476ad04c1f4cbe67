/** Small helpers shared by the core's scenario tests. */
import type { ModelCommand } from "../../src/vocabulary/model.js";
import { Harness } from "./harness.js";

/** A session with one client connected and a live model connection. */
export function live(overrides: ConstructorParameters<typeof Harness>[0] = {}): Harness {
  const h = new Harness(overrides);
  h.connect("phone");
  h.model({ type: "setup_complete" });
  return h;
}

export const types = (h: Harness, client = "phone") => h.durableFrames(client).map((f) => f.type);
export const texts = (h: Harness, client = "phone") =>
  h.durableFrames(client).flatMap((f) => (f.type === "text" ? [f.text] : []));
export const turnEnds = (h: Harness) =>
  h.durableFrames("phone").filter((f) => f.type === "turn_complete" || f.type === "interrupted");
/** The tool results sent to the model. */
export const toolResponses = (h: Harness) =>
  h.sentToModel.filter(
    (c): c is Extract<ModelCommand, { type: "tool_responses" }> => c.type === "tool_responses",
  );
/** How many model connections the session has opened. */
export const opens = (h: Harness) => h.effects.filter((e) => e.type === "open_upstream").length;
/** 20 ms of 16 kHz PCM16. */
export const chunk = new Uint8Array(640);
/** The codes of the error frames a client was sent, in order. */
export const errorCodes = (h: Harness, client = "phone") =>
  h.durableFrames(client).flatMap((f) => (f.type === "error" ? [f.code] : []));
/** The user turns the clients saw: id, how it came in, what it said. */
export const userTurns = (h: Harness) =>
  h.durableFrames("phone").flatMap((f) => (f.type === "user" ? [[f.turnId, f.text]] : []));

/**
 * A greeting whose side-effect call (the UI chips) is answered after the model ended its
 * turn: the result goes out SILENT, late. What a model that ignores SILENT would repeat.
 */
export function greetWithLateChips(h: Harness, greeting: string): void {
  h.input({ type: "client_text", clientId: "phone", text: "hi" });
  h.model({ type: "text_delta", text: greeting });
  h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
  h.model({ type: "turn_complete" });
  h.input({ type: "client_tool_result", clientId: "phone", callId: "c1", result: { chips: [] } });
}
