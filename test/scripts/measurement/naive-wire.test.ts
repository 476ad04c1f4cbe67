// The naive relay's wire on GPT-Live (scripts/measurement/naive-wire.ts): it hands on every
// delivery of a function call, as a relay that does not claim calls does, so that `npm run
// repro`'s call_delivered_twice row can show the tool run twice; liveline's adapter, once.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { naiveWire } from "../../../scripts/measurement/naive-wire.js";
import {
  GptLiveAdapter,
  type GptLiveAdapterOptions,
} from "../../../src/providers/gpt-live/adapter.js";
import type { ProviderAdapter } from "../../../src/vocabulary/provider-adapter.js";

const OPTIONS: GptLiveAdapterOptions = {
  model: "gpt-live-1",
  backendModel: "gpt-5-mini",
  agent: {
    systemInstruction: "Be brief.",
    tools: [
      {
        name: "lookup_order",
        description: "Finds an order",
        args: z.object({ id: z.string() }),
        followUp: "speak",
      },
    ],
  },
};

const backend = (event: Record<string, unknown>) =>
  JSON.stringify({ type: "response.event", event_id: "ev", delegation_id: "del_1", event });
const call = backend({
  type: "response.output_item.done",
  output_index: 0,
  item: { type: "function_call", call_id: "call_1", name: "lookup_order", arguments: '{"id":"7"}' },
});
const completed = backend({
  type: "response.completed",
  response: { id: "resp_1", status: "completed" },
});

/** The call ids handed to the core over a delivery twice and the response's end. */
function handedOn(a: ProviderAdapter): string[] {
  return [call, call, completed].flatMap((frame) => {
    const decoded = a.decode(frame);
    if (!decoded.ok) throw new Error(decoded.error.message);
    return decoded.events.flatMap((e) => (e.type === "tool_call" ? e.calls.map((c) => c.id) : []));
  });
}

describe("the naive relay on GPT-Live", () => {
  it("hands on a call delivered twice twice; liveline's adapter once", () => {
    expect(handedOn(naiveWire.gptLiveAdapter(OPTIONS))).toEqual(["call_1", "call_1"]);
    expect(handedOn(new GptLiveAdapter(OPTIONS))).toEqual(["call_1"]);
  });
});
