import {
  createGptLiveSimulator,
  type LiveSimState,
  liveStep,
} from "../../../src/simulator/gpt-live/machine.js";
import { DEFAULT_KNOBS, type SimulatorKnobs } from "../../../src/simulator/knobs.js";

export type Msg = Record<string, unknown> & { type: string };
type Nested = Record<string, unknown> & { type: string };

export const TOOLS = [
  {
    type: "function",
    name: "lookup_faq",
    description: "Look an answer up in the FAQ.",
    parameters: { type: "object", properties: { question: { type: "string" } } },
    strict: true,
  },
];

/** A session.start for a responses-delegation session with the FAQ tool. */
export function startEvent(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "session.start",
    session: {
      model: "gpt-live-1",
      instructions: "Be brief.",
      delegation: { type: "responses", responses: { model: "gpt-5.5", tools: TOOLS } },
      ...extra,
    },
  };
}

/** Drives the GPT-Live face: frames in, server events out (primary and sideband), time by hand. */
export class LiveDriver {
  state: LiveSimState;
  now = 1_000_000;
  out: Msg[] = [];
  side: Msg[] = [];
  closed: { code: number; reason: string } | null = null;
  constructor(knobs: Partial<SimulatorKnobs> = {}) {
    // Answer tags on: these tests find a reply said twice by its tag.
    this.state = createGptLiveSimulator({
      ...DEFAULT_KNOBS,
      timeScale: 0,
      answerTags: true,
      ...knobs,
    });
    this.feed({ type: "open" });
  }
  feed(input: Parameters<typeof liveStep>[1]): Msg[] {
    const { state, effects } = liveStep(this.state, input, this.now);
    this.state = state;
    const sent: Msg[] = [];
    for (const e of effects) {
      if (e.type === "close") this.closed = { code: e.code, reason: e.reason };
      else {
        const m = e.message as Msg;
        if (e.to !== "sideband") sent.push(m);
        if (e.to !== "primary") this.side.push(m);
      }
    }
    this.out.push(...sent);
    return sent;
  }
  send(event: Record<string, unknown>): Msg[] {
    return this.feed({ type: "frame", text: JSON.stringify(event) });
  }
  sideband(event: Record<string, unknown>): Msg[] {
    return this.feed({ type: "sideband_frame", text: JSON.stringify(event) });
  }
  tick(ms: number): Msg[] {
    this.now += ms;
    return this.feed({ type: "tick" });
  }
  start(extra: Record<string, unknown> = {}): Msg[] {
    return this.send(startEvent(extra));
  }
  /** A typed line: response.item.create (a user message) then response.create. */
  line(text: string): Msg[] {
    this.send({
      type: "response.item.create",
      item: { type: "message", role: "user", content: [{ type: "input_text", text }] },
    });
    return this.send({ type: "response.create" });
  }
  output(callId: string, output: string): Msg[] {
    return this.send({
      type: "response.item.create",
      item: { type: "function_call_output", call_id: callId, output },
    });
  }
}

export const types = (msgs: Msg[]) => msgs.map((m) => m.type);

export const errorOf = (msgs: Msg[]) =>
  msgs.find((m) => m.type === "error")?.error as
    | { type: string; code: string; message: string; param?: string }
    | undefined;

/** What the model said aloud: its output transcript deltas, joined. */
export const said = (msgs: Msg[]) =>
  msgs
    .filter((m) => m.type === "session.output_transcript.delta")
    .map((m) => m.delta)
    .join("");

/** The nested Responses events of `response.event`s. */
export const nested = (msgs: Msg[]): Nested[] =>
  msgs.filter((m) => m.type === "response.event").map((m) => m.event as Nested);

/** The function calls the backend made (from the nested `response.output_item.done`). */
export const calls = (msgs: Msg[]) =>
  nested(msgs)
    .filter((e) => e.type === "response.output_item.done")
    .map((e) => e.item as { type: string; call_id: string; name: string; arguments: string })
    .filter((i) => i.type === "function_call");

/** Base64 PCM16 LE at `rate`: `ms` of a loud tone (speech to the energy detector) or silence. */
export function pcm(ms: number, loud: boolean, rate = 24000): string {
  const samples = Math.round((ms * rate) / 1000);
  const bytes = new Uint8Array(samples * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples; i++) {
    view.setInt16(
      i * 2,
      loud ? Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)) : 0,
      true,
    );
  }
  return Buffer.from(bytes).toString("base64");
}
