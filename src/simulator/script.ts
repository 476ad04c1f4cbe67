/**
 * The simulator's built-in script: what the model says and which tools it calls. Every
 * answer ends with a tag `[#rN]` (N counts answers on the session), so a reply that is
 * generated twice shows the same tag twice and a duplicate is detectable by text alone.
 * Under the `repeatAnswers` knob the tag is "" and the opening fixed: the same input gets the
 * same words, as a real model with a deterministic tool gives them.
 */
import type { GeminiFunctionDeclaration } from "../providers/gemini/schemas.js";
import type { CallScript, SimulatorKnobs } from "./knobs.js";

const SIDE_EFFECT_PREFIXES = ["suggest_", "set_", "show_", "play_"];

export function isSideEffect(name: string, knobs: SimulatorKnobs): boolean {
  if (knobs.sideEffects !== null) return knobs.sideEffects.includes(name);
  return SIDE_EFFECT_PREFIXES.some((p) => name.startsWith(p));
}

export function answerTag(n: number): string {
  return `[#r${n}]`;
}

/**
 * The next answer's tag `[#rN]` (counting in `counter`), or none under `repeatAnswers` (the
 * same input, the same words).
 */
export function nextAnswerTag(repeatAnswers: boolean, counter: { answers: number }): string {
  return repeatAnswers ? "" : answerTag(++counter.answers);
}

/** A function call's output string as a tool result: JSON objects as they are, else `{output}`. */
export function parseToolOutput(output: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(output);
    return value !== null && typeof value === "object"
      ? (value as Record<string, unknown>)
      : { output };
  } catch {
    return { output };
  }
}

/** `text` ending with `tag`, or `text` alone when there is no tag (`repeatAnswers`). */
export function tagged(text: string, tag: string): string {
  return tag === "" ? text : `${text} ${tag}`;
}

/** A reply in two halves: what is said before its tool calls and what after. */
interface ReplyText {
  before: string;
  after: string;
}

const ANSWERS = [
  "Sure. You said: “{q}”. That is a good question, and here is a short answer.",
  "Understood. You said: “{q}”. Let me put that simply.",
  "Right. You said: “{q}”. I can help with that.",
];

/**
 * The reply to the user's turn number `turn` (1-based) of the session's context. `fixed`
 * (the `repeatAnswers` knob): no greeting turn and one opening, so that the answer to a line
 * is a function of its text (the lines that read the context, below, still read it).
 */
export function replyFor(
  turn: number,
  userText: string,
  lastReply: readonly string[],
  pick: number,
  tag: string,
  remembered: readonly string[] = [],
  fixed = false,
): ReplyText {
  if (turn === 1 && !fixed) {
    return {
      before: "Hello! I'm the liveline simulator, standing in for a live model.",
      after: tagged("What would you like to talk about today?", tag),
    };
  }
  if (/\bwhat do you remember\b/i.test(userText)) {
    // What a seeded history told it about tools (calls and outcomes seed as bracketed text).
    return {
      before:
        remembered.length === 0
          ? "I remember no tool calls."
          : `I remember: ${remembered.join(" ")}`,
      after: tag,
    };
  }
  if (/\b(repeat|again|what did you (just )?say)\b/i.test(userText)) {
    const said = lastReply.join("").trim();
    return {
      before: said === "" ? "I haven't said anything yet." : `I said: ${said}`,
      after: tag,
    };
  }
  const q = userText.trim().slice(0, 120);
  const template = fixed
    ? ANSWERS[0]!
    : (ANSWERS[Math.floor(pick * ANSWERS.length)] ?? ANSWERS[0]!);
  return { before: template.replace("{q}", q), after: tagged("Anything else?", tag) };
}

/** How a spoken tool result sounds; `found` is the phrase tests look for. */
export function resultSpeech(name: string, summary: string, tag: string): string {
  return tagged(`Here is what ${name} found: ${summary}.`, tag);
}

/** Spoken tool results (what a model that owes them says first). */
export function isResultSpeech(text: string): boolean {
  return text.startsWith("Here is what ");
}

/** An instruction to go on ("Please continue…", "go on"): the model says what it owed. */
export function asksToGoOn(text: string): boolean {
  return /\b(continue|go on)\b/i.test(text);
}

/**
 * Asked to introduce itself (the line liveline sends an agent a session was handed to, when
 * that agent announces itself): it does, in one line, with no tool call (assumed: a model
 * told "introduce yourself, do not call any tool" does that).
 */
export function asksToIntroduce(text: string): boolean {
  return /\bintroduce yourself\b/i.test(text);
}

/**
 * Asked to say that a tool is still working (the line liveline sends for a long call whose
 * policy is `progress: "say"`): it says so in a few words, with no tool call and no result
 * (assumed: a model told "say you are still on it, do not call any tool" does that).
 */
export function asksToSayStillWorking(text: string): boolean {
  return /\bis still working\b.*\bstill on it\b/i.test(text);
}

/** What the model says while a tool is still working. */
export function stillWorking(tag: string): string {
  return tagged("I'm still working on that, one moment.", tag);
}

/**
 * Asked for a goodbye (the line liveline sends when a session reaches a cap): one short line,
 * with no tool call (assumed: a model told "say goodbye, do not call any tools" does that).
 */
export function asksToSayGoodbye(text: string): boolean {
  return /\bsay a short, friendly goodbye\b/i.test(text);
}

/** The goodbye it says. */
export function goodbye(tag: string): string {
  return tagged("Thank you for talking with me today. Goodbye!", tag);
}

/** The one line an agent says when a session is handed to it. */
export function introduction(tag: string): string {
  return tagged("Hello, I am taking over from here. How can I help?", tag);
}

/**
 * Which declared functions the model calls when answering user turn `turn`.
 * With a `calls` knob: exactly what it lists (names not declared are skipped). Without:
 * the greeting calls every declared side-effect tool; a later turn calls each declared
 * informational tool whose name, or the last word of its name, the user's text mentions.
 */
export function plannedCalls(
  turn: number,
  userText: string,
  declared: readonly string[],
  script: CallScript | null,
  knobs: SimulatorKnobs,
): string[] {
  if (script !== null) {
    const names = script.byTurn[turn] ?? script.otherwise;
    return names.filter((n) => declared.includes(n));
  }
  if (turn === 1) return declared.filter((n) => isSideEffect(n, knobs));
  const text = userText.toLowerCase();
  return declared.filter((n) => {
    if (isSideEffect(n, knobs)) return false;
    const last = n.split("_").at(-1) ?? n;
    return text.includes(n.toLowerCase()) || (last.length >= 3 && text.includes(last));
  });
}

/** Arguments shaped after a declaration's parameter schema (JSON Schema or OpenAPI subset). */
export function argsFor(
  decl: GeminiFunctionDeclaration,
  userText: string,
): Record<string, unknown> {
  const schema = (decl.parametersJsonSchema ?? decl.parameters) as
    | { properties?: Record<string, { type?: unknown; enum?: unknown }> }
    | undefined;
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
    if (Array.isArray(prop?.enum) && prop.enum.length > 0) {
      out[name] = prop.enum[0];
      continue;
    }
    const type = String(Array.isArray(prop?.type) ? prop.type[0] : (prop?.type ?? "string"));
    switch (type.toLowerCase()) {
      case "number":
      case "integer":
        out[name] = 1;
        break;
      case "boolean":
        out[name] = true;
        break;
      case "array":
        // Three items: enough for a list to look like one (UI chips render three).
        out[name] = ["suggestion 1", "suggestion 2", "suggestion 3"];
        break;
      case "object":
        out[name] = {};
        break;
      default:
        out[name] = userText.trim() === "" ? "simulated" : userText.trim().slice(0, 60);
    }
  }
  return out;
}

/** A function response, as the model would summarise it when speaking it. */
export function summarise(response: Record<string, unknown> | undefined): string {
  const body = response?.output ?? response?.error ?? response ?? {};
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Splits speech into chunks of 2–5 words, the way transcription frames arrive. */
export function chunkWords(text: string, draw: () => number): string[] {
  const words = text.split(/(?<=\s)/);
  const chunks: string[] = [];
  let i = 0;
  while (i < words.length) {
    const n = 2 + Math.floor(draw() * 4);
    chunks.push(words.slice(i, i + n).join(""));
    i += n;
  }
  return chunks.filter((c) => c !== "");
}

export function wordCount(text: string): number {
  return text.split(/\s+/).filter((w) => w !== "").length;
}

/** What the simulated user says when it speaks (audio in, a transcription out), in turn. */
export const UTTERANCES = [
  "What can you do?",
  "Tell me something interesting.",
  "Can you look that up for me?",
  "Thanks, that helps.",
];
