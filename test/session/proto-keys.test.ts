/**
 * A `__proto__` key is an ordinary key of JSON: JSON.parse keeps it as an own property, and
 * liveline keeps it from the socket (or the model's wire) to the log, the frames and the
 * model. Only a rebuild key by key into a fresh `{}` (zod's `z.record`, `Object.assign`)
 * loses it, as an assignment to the prototype.
 */
import { describe, expect, it } from "vitest";
import { createDecoderState, decodeServerFrame } from "../../src/providers/gemini/decode.js";
import { encodeCommand } from "../../src/providers/gemini/encode.js";
import { clientInput } from "../../src/session/client-frames.js";
import type { ModelCapabilities, ModelCommand } from "../../src/vocabulary/model.js";
import { live } from "../core/sessions.js";

const RESULT = '{"__proto__":{"polluted":true},"shown":true}';

describe("a `__proto__` key", () => {
  it("in a client's tool_result is an own key of the core's input; the prototype is untouched", () => {
    const input = clientInput(
      "phone",
      `{"type":"tool_result","callId":"c1","result":${RESULT}}`,
      262_144,
    );
    expect(input.type).toBe("client_tool_result");
    const result = (input as { result: Record<string, unknown> }).result;
    expect(Object.keys(result)).toEqual(["__proto__", "shown"]);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect((result as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(result)).toBe(RESULT);
  });

  it("reaches the log, the clients' frames and the model's wire as sent", () => {
    const h = live();
    h.input({ type: "client_text", clientId: "phone", text: "hi" });
    h.model({ type: "tool_call", calls: [{ id: "c1", name: "suggest_topics", args: {} }] });
    h.input(
      clientInput("phone", `{"type":"tool_result","callId":"c1","result":${RESULT}}`, 262_144),
    );
    const logged = h.log.find((e) => e.kind === "tool_result");
    expect(JSON.stringify((logged as { result?: unknown }).result)).toBe(RESULT);
    const frame = h.durableFrames("phone").find((f) => f.type === "tool_result");
    expect(JSON.stringify((frame as { result?: unknown }).result)).toBe(RESULT);
    const sent = h.sentToModel.filter(
      (c): c is Extract<ModelCommand, { type: "tool_responses" }> => c.type === "tool_responses",
    );
    expect(JSON.stringify(sent.at(-1)?.responses[0]?.result)).toBe(RESULT);
    const wire = encodeCommand(sent.at(-1)!, {
      nonBlockingCalls: true,
      resultScheduling: true,
      turnCompleteWaitsForResults: false,
      silentHonoured: true,
    } as ModelCapabilities);
    expect(JSON.stringify(wire)).toContain(`"output":${RESULT}`);
  });

  it("in a Gemini model's call arguments reaches the tool_call event", () => {
    const frame = `{"toolCall":{"functionCalls":[{"id":"c1","name":"lookup","args":${RESULT}}]}}`;
    const decoded = decodeServerFrame(frame, createDecoderState());
    expect(decoded.ok).toBe(true);
    const event = decoded.ok ? decoded.events[0] : undefined;
    expect(event?.type).toBe("tool_call");
    const args = (event as { calls: { args: Record<string, unknown> }[] }).calls[0]!.args;
    expect(JSON.stringify(args)).toBe(RESULT);
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
  });
});
