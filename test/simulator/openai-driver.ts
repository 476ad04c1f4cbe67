import { DEFAULT_KNOBS, type SimulatorKnobs } from "../../src/simulator/knobs.js";
import type { FaceDialectName } from "../../src/simulator/openai/dialects.js";
import {
  createOpenAISimulator,
  type OaiSimState,
  oaiStep,
} from "../../src/simulator/openai/machine.js";

export type Msg = Record<string, unknown> & { type: string };

/** Drives the OpenAI face: frames in, server events out, time moved by hand. */
export class OaiDriver {
  state: OaiSimState;
  now = 0;
  out: Msg[] = [];
  constructor(knobs: Partial<SimulatorKnobs> = {}, dialect: FaceDialectName = "openai") {
    // Answer tags on: these tests find a reply said twice by its tag.
    this.state = createOpenAISimulator(
      { ...DEFAULT_KNOBS, timeScale: 0, answerTags: true, ...knobs },
      dialect,
    );
    this.feed({ type: "open" });
  }
  feed(input: Parameters<typeof oaiStep>[1]): Msg[] {
    const { state, effects } = oaiStep(this.state, input, this.now);
    this.state = state;
    const sent = effects.flatMap((e) => (e.type === "send" ? [e.message as Msg] : []));
    this.out.push(...sent);
    return sent;
  }
  send(event: Record<string, unknown>): Msg[] {
    return this.feed({ type: "frame", text: JSON.stringify(event) });
  }
  tick(ms: number): Msg[] {
    this.now += ms;
    return this.feed({ type: "tick" });
  }
  setup(modality: "text" | "audio" = "text", tools: string[] = ["lookup_faq"]): Msg[] {
    return this.send({
      type: "session.update",
      session: {
        type: "realtime",
        output_modalities: [modality],
        tools: tools.map((name) => ({ type: "function", name, description: "", parameters: {} })),
      },
    });
  }
  user(text: string): Msg[] {
    return this.send({
      type: "conversation.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
  }
  output(callId: string, output: string): Msg[] {
    return this.send({
      type: "conversation.item.create",
      item: { type: "function_call_output", call_id: callId, output },
    });
  }
}

export const types = (msgs: Msg[]) => msgs.map((m) => m.type);

/** What the model said in these events: text deltas or audio transcript deltas, joined. */
export function said(msgs: Msg[]): string {
  return msgs
    .filter(
      (m) =>
        m.type === "response.output_text.delta" ||
        m.type === "response.output_audio_transcript.delta",
    )
    .map((m) => m.delta)
    .join("");
}

export function callIds(msgs: Msg[]): string[] {
  return msgs
    .filter((m) => m.type === "response.function_call_arguments.done")
    .map((m) => m.call_id as string);
}
