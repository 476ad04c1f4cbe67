/**
 * The simulator's built-in script: what the model says and which tools it calls. With the
 * `answerTags` knob every answer ends with a tag `[#rN]` (N counts answers on the session), so
 * a reply that is generated twice shows the same tag twice and a duplicate is detectable by
 * text alone (tests turn it on; people reading the replies never see it). Under the
 * `repeatAnswers` knob there is no tag and the opening is fixed: the same input gets the same
 * words, as a real model with a deterministic tool gives them. The rules, in words:
 * docs/SIMULATOR.md ("How the simulator answers").
 */
import type { GeminiFunctionDeclaration } from "../providers/gemini/schemas.js";
import type { CallScript, SimulatorKnobs } from "./knobs.js";
import {
  answersQuestion,
  asksWhatItCanDo,
  capabilityAnswer,
  inWords,
  namedThing,
  statedPreference,
  suggestions,
  type ToolInfo,
  topicOf,
} from "./meaning.js";

export type { ToolInfo } from "./meaning.js";

const SIDE_EFFECT_PREFIXES = ["suggest_", "set_", "show_", "play_"];

export function isSideEffect(name: string, knobs: SimulatorKnobs): boolean {
  if (knobs.sideEffects !== null) return knobs.sideEffects.includes(name);
  return SIDE_EFFECT_PREFIXES.some((p) => name.startsWith(p));
}

export function answerTag(n: number): string {
  return `[#r${n}]`;
}

/**
 * The next answer's tag `[#rN]` (counting in `counter`) under `answerTags`; none without it,
 * nor under `repeatAnswers` (the same input, the same words).
 */
export function nextAnswerTag(
  knobs: Pick<SimulatorKnobs, "repeatAnswers" | "answerTags">,
  counter: { answers: number },
): string {
  return knobs.repeatAnswers || !knobs.answerTags ? "" : answerTag(++counter.answers);
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
 * "What can you do?" is answered with the topics the declared `tools` cover, when they
 * cover any (else it is a line like any other).
 */
export function replyFor(
  turn: number,
  userText: string,
  lastReply: readonly string[],
  pick: number,
  tag: string,
  remembered: readonly string[] = [],
  fixed = false,
  tools: readonly ToolInfo[] = [],
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
  if (asksWhatItCanDo(userText) && capabilityAnswer(tools) !== null)
    return { before: capabilityAnswer(tools)!, after: tagged("Anything else?", tag) };
  const q = userText.trim().slice(0, 120);
  const template = fixed
    ? ANSWERS[0]!
    : (ANSWERS[Math.floor(pick * ANSWERS.length)] ?? ANSWERS[0]!);
  return { before: template.replace("{q}", q), after: tagged("Anything else?", tag) };
}

/**
 * The reply of a turn whose calls the default script chose (by the words' meaning, a tool's
 * name, a stated preference): it says what it is doing ("Let me look that up."), as a model
 * does before its call, rather than a generic answer. A `calls` script, `repeatAnswers` and
 * the greeting keep their words.
 */
export function replyWithCalls(
  reply: ReplyText,
  turn: number,
  calls: readonly string[],
  knobs: SimulatorKnobs,
): ReplyText {
  if (knobs.calls !== null || knobs.repeatAnswers || turn === 1 || calls.length === 0) return reply;
  const looksUp = calls.some((n) => !isSideEffect(n, knobs));
  return { ...reply, before: looksUp ? "Let me look that up." : "Noted: I'll remember that." };
}

/** How a spoken tool result sounds; `found` is the phrase tests look for. */
export function resultSpeech(name: string, summary: string, tag: string): string {
  return tagged(`Here is what ${name} found: ${summary.replace(/[.!]+$/, "")}.`, tag);
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

/** Declared tools by name, with their descriptions (empty where none was given). */
export function toolInfos(
  names: readonly string[],
  descriptions: Readonly<Record<string, string>>,
): ToolInfo[] {
  return names.map((name) => ({ name, description: descriptions[name] ?? "" }));
}

/**
 * Last words of tool names that say nothing of what a line asks: "call me Ada" is not a
 * request to `end_call`.
 */
const VAGUE_LAST_WORDS = new Set(["call", "tool", "data", "info", "item", "request"]);

/** A tool that records what the user stated (a preference): called only when they state one. */
function isSetter(name: string): boolean {
  return /^(set|save|remember)_/.test(name);
}

/**
 * Which declared functions the model calls when answering user turn `turn`.
 * With a `calls` knob: exactly what it lists (names not declared are skipped). Without: the
 * greeting calls every declared side-effect tool but a setter (`set_…`); a later turn calls
 * each informational tool whose name, or the last word of its name, the user's text
 * mentions, or that answers what the text asks about (its topic, by `tools`' descriptions:
 * meaning.ts); any turn whose words state a preference calls the setters.
 */
export function plannedCalls(
  turn: number,
  userText: string,
  declared: readonly string[],
  script: CallScript | null,
  knobs: SimulatorKnobs,
  tools: readonly ToolInfo[] = [],
): string[] {
  if (script !== null) {
    const names = script.byTurn[turn] ?? script.otherwise;
    return names.filter((n) => declared.includes(n));
  }
  const states = statedPreference(userText) !== null;
  const described = (n: string): ToolInfo =>
    tools.find((t) => t.name === n) ?? { name: n, description: "" };
  const text = userText.toLowerCase();
  return declared.filter((n) => {
    if (isSideEffect(n, knobs)) return isSetter(n) ? states : turn === 1;
    if (turn === 1) return false;
    const last = n.split("_").at(-1) ?? n;
    return (
      text.includes(n.toLowerCase()) ||
      (last.length >= 3 && !VAGUE_LAST_WORDS.has(last) && text.includes(last)) ||
      answersQuestion(described(n), userText)
    );
  });
}

/** An argument that takes the user's question itself (a lookup's `question`, a search's `query`). */
const TAKES_QUESTION = /^(question|query|q|text|prompt|message|input|request|utterance)$/i;

/**
 * Arguments shaped after a declaration's parameter schema (JSON Schema or OpenAPI subset),
 * drawn from the user's words: the question itself for a `question`/`query`, its topic for a
 * `topic`, the thing it names for anything else ("Is the blue mug in stock?" → `item: "blue
 * mug"`), a stated preference for a `key`/`value` pair, a number it says for a number, the
 * enum value it names; a list of strings is the questions a user could ask next (chips).
 */
export function argsFor(
  decl: GeminiFunctionDeclaration,
  userText: string,
  tools: readonly ToolInfo[] = [],
): Record<string, unknown> {
  const schema = (decl.parametersJsonSchema ?? decl.parameters) as
    | {
        properties?: Record<
          string,
          {
            type?: unknown;
            enum?: unknown;
            default?: unknown;
            maxItems?: unknown;
            description?: unknown;
          }
        >;
      }
    | undefined;
  const properties = schema?.properties ?? {};
  const text = userText.trim();
  const preference = "key" in properties && "value" in properties ? statedPreference(text) : null;
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(properties)) {
    if (Array.isArray(prop?.enum) && prop.enum.length > 0) {
      const said = prop.enum.find((v) => text.toLowerCase().includes(String(v).toLowerCase()));
      out[name] = said ?? prop.enum[0];
      continue;
    }
    const type = String(Array.isArray(prop?.type) ? prop.type[0] : (prop?.type ?? "string"));
    const number = /\d+(\.\d+)?/.exec(text)?.[0];
    switch (type.toLowerCase()) {
      case "number":
      case "integer":
        out[name] = number === undefined ? 1 : Number(number);
        break;
      case "boolean":
        out[name] = true;
        break;
      case "array": {
        // Three items at most (UI chips render three), fewer where the schema says so.
        const max = typeof prop?.maxItems === "number" ? Math.min(3, prop.maxItems) : 3;
        out[name] = suggestions(tools, max);
        break;
      }
      case "object":
        out[name] = {};
        break;
      default: {
        const fallback = typeof prop?.default === "string" ? prop.default : undefined;
        // "The order number": a number the question says is what it asks for.
        const about = typeof prop?.description === "string" ? prop.description : "";
        if (text === "") out[name] = fallback ?? "simulated";
        else if (TAKES_QUESTION.test(name)) out[name] = text.slice(0, 120);
        else if (/^(topic|subject|category)$/i.test(name))
          out[name] = topicOf(text) ?? namedThing(text);
        else if (name === "key" && preference !== null) out[name] = preference.key;
        else if (name === "value" && preference !== null) out[name] = preference.value;
        else if ((name === "key" || name === "value") && fallback !== undefined)
          out[name] = fallback;
        else if (number !== undefined && /(id|number)$/i.test(`${name} ${about}`))
          out[name] = number;
        else out[name] = namedThing(text);
      }
    }
  }
  return out;
}

/** A function response, in words, as the model would say it (never its JSON). */
export function summarise(response: Record<string, unknown> | undefined): string {
  const body = response?.output ?? response?.error ?? response ?? {};
  const text = inWords(body);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
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
