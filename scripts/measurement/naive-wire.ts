/**
 * How the naive relay speaks each wire, as frameworks in the field do: on Gemini Live it seeds
 * a rebuilt context with tool parts; on OpenAI Realtime it runs each call the moment its
 * arguments are complete and asks for a response after every tool output at once, as
 * openai-agents-js does (a second `response.create` while one is active is refused by the
 * service); on GPT-Live it hands on every delivery of a function call, a second one of the
 * same call id included (the guides leave exactly-once to the application, and a relay that
 * does not claim each call runs it again), and continues each backend response once its own
 * calls are answered (per-response-gate.ts), as the field did before it learned the backend
 * is one chain. Measurement only (naive-relay.ts); the simulator is the provider that speaks it.
 */
import { responseBody } from "../../src/providers/gemini/encode.js";
import type { GeminiContent, GeminiPart } from "../../src/providers/gemini/schemas.js";
import { GptLiveAdapter } from "../../src/providers/gpt-live/adapter.js";
import { OpenAIRealtimeAdapter } from "../../src/providers/openai/adapter.js";
import type { SimulatedWireArm } from "../../src/simulator/simulated-provider.js";
import type { ModelEvent, RebuiltContext, ToolCallRequest } from "../../src/vocabulary/model.js";
import { PerResponseGate } from "./per-response-gate.js";

export const naiveWire: SimulatedWireArm = {
  geminiSeed: seedAsToolParts,
  openaiAdapter: (opts) => new NaiveOpenAIAdapter(opts),
  gptLiveAdapter: (opts) =>
    new GptLiveAdapter({
      ...opts,
      dedupeCalls: false,
      gate: new PerResponseGate(),
      cancelledOutput: "error",
    }),
};

class NaiveOpenAIAdapter extends OpenAIRealtimeAdapter {
  protected override callComplete(call: ToolCallRequest): ModelEvent[] {
    return [{ type: "tool_call", calls: [call] }];
  }

  protected override promptsAfter(): boolean {
    return true;
  }

  protected override holdsWhileBusy(): boolean {
    return false;
  }
}

/**
 * How frameworks seeded a rebuilt context before pipecat's PR 5028: calls and results as
 * `functionCall` / `functionResponse` parts, `turnComplete: false`. The service refuses it
 * (1007); the naive relay sends it, to measure that failure.
 */
export function seedAsToolParts(ctx: RebuiltContext): {
  clientContent: { turns: GeminiContent[]; turnComplete: false };
} {
  const turns: { role: "user" | "model"; parts: GeminiPart[] }[] = [];
  const append = (role: "user" | "model", parts: GeminiPart[]) => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  };
  for (const item of ctx.items) {
    switch (item.role) {
      case "user":
      case "model":
        append(item.role, [{ text: item.text }]);
        break;
      case "model_calls":
        append(
          "model",
          item.calls.map((c) => ({ functionCall: { id: c.id, name: c.name, args: c.args } })),
        );
        break;
      case "tool_results":
        append(
          "user",
          item.results.map((r) => ({
            functionResponse: { id: r.callId, name: r.name, response: responseBody(r) },
          })),
        );
        break;
      default:
        item satisfies never;
    }
  }
  return { clientContent: { turns, turnComplete: false } };
}
