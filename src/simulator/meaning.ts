/**
 * What the simulator understands of a user's words, so that a newcomer can talk to it: which
 * topic a question is about (opening hours, prices…), which declared tools answer that topic
 * (by their names and descriptions), the arguments a question gives (the item it names, a
 * stated preference), and a tool's result put in words. A few patterns, not a language
 * model: the rules are listed in docs/SIMULATOR.md ("How the simulator answers").
 */

/** A declared tool as the simulator sees it: its name and what its description says. */
export interface ToolInfo {
  name: string;
  description: string;
}

/** A topic: the words that ask about it, the words that say a tool answers it, and a question. */
interface Topic {
  label: string;
  asks: RegExp;
  covers: RegExp;
  question: string;
}

const TOPICS: readonly Topic[] = [
  {
    label: "opening hours",
    asks: /\b(hours|opening|open|close[sd]?|closing|when are you)\b/i,
    covers: /\b(hours|opening)\b/i,
    question: "What are your opening hours?",
  },
  {
    label: "prices",
    asks: /\b(prices?|priced|pricing|costs?|how much|fees?|expensive|cheap)\b/i,
    covers: /\b(prices?|pricing|costs?|fees?)\b/i,
    question: "How much does the team plan cost?",
  },
  {
    label: "support",
    asks: /\b(support|contact|reach (you|someone|a person)|help desk)\b/i,
    covers: /\b(support|contact)\b/i,
    question: "How do I reach support?",
  },
  {
    label: "refunds",
    asks: /\b(refunds?|refunded|money back)\b/i,
    covers: /\brefunds?\b/i,
    question: "Can I get a refund?",
  },
  {
    label: "stock",
    asks: /\b(in stock|stock|available|availability)\b/i,
    covers: /\b(stock|availability|inventory)\b/i,
    question: "Is the blue mug in stock?",
  },
  {
    label: "invoices",
    asks: /\b(invoices?|bill|billing|amount due)\b/i,
    covers: /\binvoices?\b/i,
    question: "What is on my invoice?",
  },
  {
    label: "orders",
    asks: /\borders?\b/i,
    covers: /\borders?\b/i,
    question: "Where is order 42?",
  },
  {
    label: "your account",
    asks: /\b(my (account|plan|profile|name)|who am i|am i on|signed in)\b/i,
    covers: /\b(profile|account|signed-in)\b/i,
    question: "What plan am I on?",
  },
];

const CAPABILITIES = /\b(what can you do|what do you do|how can you help|what are you able)\b/i;

/** "What can you do?" and the like: answered with what the declared tools cover. */
export function asksWhatItCanDo(text: string): boolean {
  return CAPABILITIES.test(text);
}

const covered = (tool: ToolInfo): Topic[] =>
  TOPICS.filter((t) => t.covers.test(`${tool.name.replace(/_/g, " ")} ${tool.description}`));

/** Whether `tool` answers what `text` asks about (a topic of the question it covers). */
export function answersQuestion(tool: ToolInfo, text: string): boolean {
  return covered(tool).some((t) => t.asks.test(text));
}

/** The labels of the topics `tools` cover, in the table's order ("opening hours", "prices"…). */
export function abilities(tools: readonly ToolInfo[]): string[] {
  const labels = new Set(tools.flatMap((t) => covered(t).map((c) => c.label)));
  return TOPICS.filter((t) => labels.has(t.label)).map((t) => t.label);
}

/**
 * What it says to "what can you do?": the topics its tools cover, and a question to try; null
 * when they cover none (the question is then a line like any other).
 */
export function capabilityAnswer(tools: readonly ToolInfo[]): string | null {
  const topics = TOPICS.filter((t) => abilities(tools).includes(t.label));
  if (topics.length === 0) return null;
  return `I can help with ${listed(topics.map((t) => t.label))}. Try asking: “${topics[0]!.question}”`;
}

/** Lines the simulator always has an answer to: chips when the tools cover no topic. */
const ANY_MODEL = ["What can you do?", "Tell me something interesting.", "What did you just say?"];

/**
 * Questions a user could tap (a chips tool's list): one for each topic the tools cover, then
 * "What can you do?" and lines any model answers, `max` in all.
 */
export function suggestions(tools: readonly ToolInfo[], max: number): string[] {
  const labels = abilities(tools);
  const questions = TOPICS.filter((t) => labels.includes(t.label)).map((t) => t.question);
  const topical = questions.slice(0, Math.max(0, max - 1));
  return [...topical, ...ANY_MODEL].slice(0, max);
}

/** A stated preference: "my favourite colour is blue", "call me Ada", "I prefer email". */
export interface Preference {
  key: string;
  value: string;
}

const clean = (s: string) =>
  s
    .trim()
    .replace(/[.!?,;]+$/, "")
    .trim();

/** The preference `text` states, or null when it states none (a greeting, a question). */
export function statedPreference(text: string): Preference | null {
  const t = text.trim();
  if (t.endsWith("?")) return null;
  const mine = /\bmy ((?:favou?rite |preferred )?[a-z][a-z ]{1,30}?) is ([^.!?;,]{1,60})/i.exec(t);
  if (mine) return { key: clean(mine[1]!).toLowerCase(), value: clean(mine[2]!) };
  const name = /\bcall me ([^.!?,;]{1,40})/i.exec(t);
  if (name) return { key: "name", value: clean(name[1]!) };
  const language = /\b(?:speak|talk|answer|reply)(?: to me)? in ([a-z]+)/i.exec(t);
  if (language) return { key: "language", value: clean(language[1]!) };
  const prefer = /\bi(?: would|'d)? (?:prefer|like|love|rather have|want) ([^.!?;,]{1,60})/i.exec(
    t,
  );
  if (prefer) return { key: "preference", value: clean(prefer[1]!) };
  return null;
}

const STOP = new Set(
  (
    "a an the my your our this that these those is are was were be do does did can could " +
    "would will should i you we me it of to in on at for with about and or please what " +
    "which who whom how when where why tell show give find look up check there any some " +
    "have has had cost costs much many stock available"
  ).split(" "),
);
const DETERMINERS = new Set(["the", "a", "an", "my", "your", "our", "this", "that"]);
const ENDS = new Set(
  "is are in on at for cost costs does do did and or with to of available please".split(" "),
);

/**
 * The thing a question names, for an argument like `item` or `plan`: the words after its
 * article ("Is the blue mug in stock?" → "blue mug"), else its words that are not filler
 * ("refunds"), else the question itself.
 */
export function namedThing(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s'-]/gu, " ")
    .split(/\s+/)
    .filter((w) => w !== "");
  const at = words.findIndex((w, i) => DETERMINERS.has(w) && i + 1 < words.length);
  if (at !== -1) {
    const phrase: string[] = [];
    for (const w of words.slice(at + 1)) {
      if (ENDS.has(w) || DETERMINERS.has(w)) break;
      phrase.push(w);
    }
    if (phrase.length > 0) return phrase.slice(0, 4).join(" ");
  }
  const content = words.filter((w) => !STOP.has(w));
  if (content.length > 0) return content.slice(0, 4).join(" ");
  return text.trim().slice(0, 60);
}

/** The label of the first topic `text` asks about, or null. */
export function topicOf(text: string): string | null {
  return TOPICS.find((t) => t.asks.test(text))?.label ?? null;
}

const ANSWER_FIELDS = ["answer", "text", "message", "summary", "result", "output", "reply"];

/**
 * A tool's result as a person would say it: a string as it is; an object's answer-like field
 * (`answer`, `text`, `message`…) when it has one; else its fields, "the price is 12 euros";
 * never its JSON.
 */
export function inWords(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.length === 0 ? "nothing" : listed(value.map(inWords));
  if (typeof value !== "object") return String(value);
  const fields = value as Record<string, unknown>;
  for (const name of ANSWER_FIELDS) {
    const field = fields[name];
    if ((typeof field === "string" && field !== "") || typeof field === "number")
      return String(field);
  }
  if (typeof fields.error === "string") return `it did not work: ${fields.error}`;
  const parts = Object.entries(fields).flatMap(([name, v]) => {
    if (v === null || v === undefined || v === "") return [];
    const key = name
      .replace(/_/g, " ")
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase();
    if (typeof v === "boolean") return [v ? key : `not ${key}`];
    const verb = /[^s]s$/.test(key) ? "are" : "is";
    return [`the ${key} ${verb} ${inWords(v)}`];
  });
  return parts.length === 0 ? "nothing" : listed(parts);
}

/** "a", "a and b", "a, b and c". */
export function listed(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}
