import {
  createDecoderState,
  type DecoderState,
  decodeServerFrame,
} from "../../src/providers/gemini/decode.js";
import { type GeminiServerMessage, ServerMessage } from "../../src/providers/gemini/schemas.js";
import {
  createSimulator,
  type ResumeContext,
  type SimEffect,
  type SimInput,
  type SimState,
  simStep,
} from "../../src/simulator/gemini/machine.js";
import { DEFAULT_KNOBS, type SimulatorKnobs } from "../../src/simulator/knobs.js";
import type { ModelEvent } from "../../src/vocabulary/model.js";

export const T0 = 1_700_000_000_000;

/** Drives the pure machine the way the Durable Object does, with a virtual clock. */
export class SimDriver {
  state: SimState;
  now = T0;
  wakeAt: number | null = null;
  readonly frames: GeminiServerMessage[] = [];
  /** Frames per step, to check what is sent in the same instant. */
  readonly batches: GeminiServerMessage[][] = [];
  readonly effects: SimEffect[] = [];
  readonly saved = new Map<string, ResumeContext>();
  closed: { code: number; reason: string } | null = null;
  readonly decoder: DecoderState = createDecoderState("t");
  readonly events: ModelEvent[] = [];

  constructor(knobs: Partial<SimulatorKnobs> = {}, session = "s1") {
    // Answer tags on: these tests find a reply said twice by its tag.
    this.state = createSimulator({
      knobs: { ...DEFAULT_KNOBS, timeScale: 0, answerTags: true, maxConnectionMs: 0, ...knobs },
      sessionName: session,
      connectionId: "c1",
    });
    this.input({ type: "open" });
  }

  input(input: SimInput): GeminiServerMessage[] {
    const { state, effects, wakeAt } = simStep(this.state, input, this.now);
    this.state = state;
    this.wakeAt = wakeAt;
    const sent: GeminiServerMessage[] = [];
    for (const e of effects) {
      this.effects.push(e);
      if (e.type === "send") {
        // Every frame must be a valid server message that the adapter's decoder accepts.
        const wire = JSON.stringify(e.message, null, 2);
        const parsed = ServerMessage.safeParse(JSON.parse(wire));
        if (!parsed.success) throw new Error(`invalid server frame: ${wire}`);
        const decoded = decodeServerFrame(new TextEncoder().encode(wire), this.decoder);
        if (!decoded.ok) throw new Error(`undecodable frame: ${decoded.error.message}`);
        this.events.push(...decoded.events);
        sent.push(e.message);
      } else if (e.type === "close") this.closed = { code: e.code, reason: e.reason };
      else if (e.type === "save_handle") this.saved.set(e.handle, e.context);
    }
    this.frames.push(...sent);
    this.batches.push(sent);
    return sent;
  }

  send(msg: unknown): GeminiServerMessage[] {
    return this.input({ type: "frame", text: JSON.stringify(msg) });
  }

  setup(extra: Record<string, unknown> = {}, tools: unknown[] = []): GeminiServerMessage[] {
    return this.send({
      setup: {
        model: "models/gemini-2.5-flash-native-audio-preview-12-2025",
        generationConfig: { responseModalities: ["TEXT"] },
        ...(tools.length > 0 ? { tools: [{ functionDeclarations: tools }] } : {}),
        ...extra,
      },
    });
  }

  user(text: string): GeminiServerMessage[] {
    return this.send({
      clientContent: { turns: [{ role: "user", parts: [{ text }] }], turnComplete: true },
    });
  }

  respond(responses: Array<Record<string, unknown>>): GeminiServerMessage[] {
    return this.send({ toolResponse: { functionResponses: responses } });
  }

  /** Advance the clock through every scheduled moment (bounded). */
  runTimers(maxMs = 10 * 60 * 1000): void {
    const end = this.now + maxMs;
    while (this.wakeAt !== null && this.wakeAt <= end && this.closed === null) {
      this.now = Math.max(this.now, this.wakeAt);
      this.input({ type: "tick" });
    }
  }

  /** All model text (text parts and output transcription), in order; thoughts are not text. */
  text(from = 0): string {
    return this.frames
      .slice(from)
      .map(
        (f) =>
          (f.serverContent?.modelTurn?.parts ?? [])
            .map((p) => (p.thought === true ? "" : (p.text ?? "")))
            .join("") + (f.serverContent?.outputTranscription?.text ?? ""),
      )
      .join("");
  }

  calls(): Array<{
    id?: string | undefined;
    name: string;
    args?: Record<string, unknown> | undefined;
  }> {
    return this.frames.flatMap((f) => f.toolCall?.functionCalls ?? []);
  }

  count(pred: (f: GeminiServerMessage) => boolean): number {
    return this.frames.filter(pred).length;
  }
}

export const turnCompletes = (f: GeminiServerMessage) => f.serverContent?.turnComplete === true;

export function tagCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/\[#r\d+\]/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return counts;
}

export const decl = (name: string, behavior?: "BLOCKING" | "NON_BLOCKING") => ({
  name,
  description: `${name} tool`,
  parametersJsonSchema: { type: "object", properties: { topic: { type: "string" } } },
  ...(behavior ? { behavior } : {}),
});
