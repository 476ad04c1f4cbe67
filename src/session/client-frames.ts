/**
 * Client → server frames of PROTOCOL.md, parsed at the socket boundary. Text frames are
 * JSON objects with a `type`; binary frames are PCM16 audio. Unknown extra fields are
 * dropped, so clients written against a later protocol version still parse.
 */
import { z } from "zod";
import type { CoreInput } from "../core/inputs.js";
import { jsonLimitProblem } from "../json-limits.js";
import type { ToolOutcome } from "../vocabulary/log-events.js";

const TextFrame = z.object({
  type: z.literal("text"),
  // A blank line is no user turn (the model would be asked to answer nothing).
  text: z.string().refine((t) => t.trim().length > 0, "text must not be blank"),
  /**
   * The client's id for the line (an extension): a line sent again with the same id, after a
   * lost socket, is taken once.
   */
  textId: z.string().min(1).max(128).optional(),
});
const AudioEndFrame = z.object({ type: z.literal("audio_end") });
/**
 * A JSON object, taken as the client sent it (the same object, not a copy). Not
 * `z.record`: zod rebuilds a record key by key into a fresh `{}`, where a `__proto__` key
 * is an assignment to the prototype, not a property: the key was dropped from the stored
 * result (and the object's prototype became the client's value). JSON.parse keeps
 * `__proto__` as an own property, and the log, the frames and the model see exactly that.
 */
const JsonObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  "expected an object",
);

const ToolResultFrame = z
  .object({
    type: z.literal("tool_result"),
    callId: z.string().min(1),
    result: JsonObject.optional(),
    error: z.string().optional(),
  })
  // Both, or neither, would leave the stored outcome to a guess.
  .refine((f) => (f.result === undefined) !== (f.error === undefined), {
    message: "a tool_result carries exactly one of result or error",
  })
  .superRefine((f, ctx) => {
    const problem = f.result === undefined ? null : jsonLimitProblem(f.result);
    if (problem)
      ctx.addIssue({
        code: "custom",
        path: ["result"],
        message: `${problem} (the limit for stored values)`,
      });
  });
const PingFrame = z.object({ type: z.literal("ping") });
/**
 * How much of the current reply's audio the client actually played, in ms (after an
 * `interrupted`, when it flushed its playback): the model's context is cut to what was heard
 * where the provider can (OpenAI `conversation.item.truncate`). A project extension.
 */
const PlayedFrame = z.object({
  type: z.literal("played"),
  ms: z.number().int().nonnegative().max(3_600_000),
});

export const JsonClientFrame = z.discriminatedUnion("type", [
  TextFrame,
  AudioEndFrame,
  ToolResultFrame,
  PingFrame,
  PlayedFrame,
]);

const JSON_TYPES = new Set<string>(JsonClientFrame.options.map((o) => o.shape.type.value));

/** A chunk of live user audio: 16-bit little-endian PCM, mono, 16 kHz. */
interface AudioFrame {
  type: "audio";
  pcm: ArrayBuffer;
}

type ClientFrame = z.infer<typeof JsonClientFrame> | AudioFrame;

/** The inputs a client's message can be. */
export type ClientInput = Extract<CoreInput, { clientId: string }>;

type ParseResult = { ok: true; frame: ClientFrame } | { ok: false; message: string };

/** Parses one WebSocket message; a failure is answered with a `bad_frame` error. */
export function parseClientFrame(data: string | ArrayBuffer): ParseResult {
  if (typeof data !== "string") {
    if (data.byteLength % 2 !== 0) {
      return { ok: false, message: ODD_AUDIO };
    }
    return { ok: true, frame: { type: "audio", pcm: data } };
  }
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ok: false, message: "text frames must be JSON" };
  }
  return checkedFrame(json);
}

/** A JSON value as a client frame, checked by the frames' schemas. */
function checkedFrame(json: unknown): ParseResult {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { ok: false, message: "a text frame must be a JSON object" };
  }
  const type = (json as { type?: unknown }).type;
  if (typeof type !== "string") {
    return { ok: false, message: "a text frame needs a string `type`" };
  }
  if (!JSON_TYPES.has(type)) {
    return { ok: false, message: `unknown frame type ${JSON.stringify(type).slice(0, 64)}` };
  }
  const parsed = JsonClientFrame.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "(frame)"}: ${i.message}`)
      .join("; ");
    return { ok: false, message: `${type} frame: ${issues}` };
  }
  return { ok: true, frame: parsed.data };
}

/**
 * A frame the shell made for a client with no socket of liveline's protocol (a phone stream's
 * line, its playback, a client tool's outcome) as the core's input: checked by the schemas a
 * client's frame is, with no JSON between; one that does not pass is a `client_bad_frame`.
 */
export function frameInput(clientId: string, frame: z.input<typeof JsonClientFrame>): ClientInput {
  const checked = checkedFrame(frame);
  if (!checked.ok)
    return { type: "client_bad_frame", clientId, code: "bad_frame", message: checked.message };
  return toCoreInput(clientId, checked.frame);
}

/** A chunk of a client's audio as the core's input (PCM16, or a phone line's μ-law pairs). */
export function audioInput(clientId: string, audio: Uint8Array, quiet = false): ClientInput {
  if (audio.byteLength % 2 !== 0)
    return { type: "client_bad_frame", clientId, code: "bad_frame", message: ODD_AUDIO };
  return { type: "client_audio", clientId, pcm: audio, ...(quiet ? { quiet } : {}) };
}

const ODD_AUDIO = "binary frames carry PCM16 audio: an even number of bytes";

/**
 * A WebSocket message as the core's input: the one place messages become inputs. One over
 * `maxBytes`, or one that does not parse, is a `client_bad_frame` (answered with an error).
 */
export function clientInput(
  clientId: string,
  data: string | ArrayBuffer,
  maxBytes: number,
): ClientInput {
  const size = frameSizeOver(data, maxBytes);
  if (size !== null)
    return {
      type: "client_bad_frame",
      clientId,
      code: "frame_too_large",
      message: `frames are limited to ${maxBytes} bytes; this one had ${size}`,
    };
  const parsed = parseClientFrame(data);
  if (!parsed.ok)
    return { type: "client_bad_frame", clientId, code: "bad_frame", message: parsed.message };
  return toCoreInput(clientId, parsed.frame);
}

/** The frame's size in bytes when it exceeds `max` (or "at least" its length), else null. */
export function frameSizeOver(data: string | ArrayBuffer, max: number): number | string | null {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most text frames need no encoding.
  if (typeof data === "string" && data.length * 3 <= max) return null;
  // …and at least one: a string longer than the limit is over it, without a copy of its bytes
  // (a client's message may be 32 MiB).
  if (typeof data === "string" && data.length > max) return `at least ${data.length}`;
  const size =
    typeof data === "string" ? new TextEncoder().encode(data).byteLength : data.byteLength;
  return size > max ? size : null;
}

/** The core's input for a parsed client frame. */
function toCoreInput(clientId: string, frame: ClientFrame): ClientInput {
  switch (frame.type) {
    case "ping":
      return { type: "client_ping", clientId };
    case "text":
      return frame.textId === undefined
        ? { type: "client_text", clientId, text: frame.text }
        : { type: "client_text", clientId, text: frame.text, textId: frame.textId };
    case "audio":
      return { type: "client_audio", clientId, pcm: new Uint8Array(frame.pcm) };
    case "audio_end":
      return { type: "client_audio_end", clientId };
    case "played":
      return { type: "client_played", clientId, ms: frame.ms };
    case "tool_result": {
      // Exactly one of the two is set (the schema refuses both, and neither).
      const outcome: ToolOutcome =
        frame.error !== undefined ? { error: frame.error } : { result: frame.result ?? {} };
      return { type: "client_tool_result", clientId, callId: frame.callId, ...outcome };
    }
    default: {
      const unreachable: never = frame;
      throw new Error(`unhandled client frame ${JSON.stringify(unreachable)}`);
    }
  }
}
