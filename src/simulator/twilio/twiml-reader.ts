/**
 * Reads the voice webhook's answer as Twilio would for a call liveline takes: exactly
 * `<Response><Connect><Stream url="wss://…">` with optional `<Parameter name value/>`s
 * ("TwiML <Stream>", https://www.twilio.com/docs/voice/twiml/stream). Anything else — a
 * refusal (<Say>, <Hangup>, <Reject>), another verb, a Stream URL that is not wss:// or
 * carries a query string (the page: the url takes no query string; use <Parameter>s) — is a
 * `TwimlAnswerError` saying what was found.
 *
 * A small XML reader of its own (no DOMParser in workerd or Node): elements, attributes in
 * either quote, the five named entities and numeric references, comments, the declaration.
 */

export class TwimlAnswerError extends Error {
  override name = "TwimlAnswerError";
}

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text, trimmed (children's text excluded). */
  text: string;
}

export interface StreamAnswer {
  streamUrl: string;
  /** <Parameter>s by name: Twilio sends them back in start.customParameters. */
  parameters: Record<string, string>;
  /** <Stream name="…">, when given. */
  name?: string;
  /** <Connect action="…">: where Twilio asks what to do when the stream ends. */
  action?: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith("#x")) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith("#")) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
    const named = ENTITIES[ref];
    if (named === undefined) throw new TwimlAnswerError(`unknown entity ${whole}`);
    return named;
  });
}

const NAME = /[A-Za-z_][\w.:-]*/y;
const ATTRIBUTE = /\s+([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
const SKIP = /\s*(?:<!--[\s\S]*?-->\s*)*/y;

/** The root element of `xml` (the other carriers' stand-ins read their XML with it too). */
export function parseXml(xml: string): XmlElement {
  let at = 0;
  const skip = () => {
    SKIP.lastIndex = at;
    SKIP.exec(xml);
    at = SKIP.lastIndex;
  };
  const fail = (what: string): never => {
    throw new TwimlAnswerError(`not well-formed XML at ${at}: ${what}`);
  };

  function element(): XmlElement {
    if (xml[at] !== "<") fail("expected an element");
    at++;
    NAME.lastIndex = at;
    const name = NAME.exec(xml)?.[0] ?? fail("expected an element name");
    at = NAME.lastIndex;
    const attributes: Record<string, string> = {};
    for (;;) {
      ATTRIBUTE.lastIndex = at;
      const m = ATTRIBUTE.exec(xml);
      if (m === null) break;
      const attr = m[1]!;
      if (attr in attributes) fail(`attribute ${attr} twice`);
      attributes[attr] = decodeEntities(m[2] ?? m[3] ?? "");
      at = ATTRIBUTE.lastIndex;
    }
    while (/\s/.test(xml[at] ?? "")) at++;
    if (xml.startsWith("/>", at)) {
      at += 2;
      return { name, attributes, children: [], text: "" };
    }
    if (xml[at] !== ">") fail(`expected > in <${name}>`);
    at++;
    const children: XmlElement[] = [];
    let text = "";
    for (;;) {
      const lt = xml.indexOf("<", at);
      if (lt < 0) fail(`<${name}> is not closed`);
      text += xml.slice(at, lt);
      at = lt;
      if (xml.startsWith("<!--", at)) {
        const end = xml.indexOf("-->", at);
        if (end < 0) fail("unterminated comment");
        at = end + 3;
      } else if (xml.startsWith("</", at)) {
        const close = `</${name}`;
        if (!xml.startsWith(close, at)) fail(`expected ${close}>`);
        at += close.length;
        while (/\s/.test(xml[at] ?? "")) at++;
        if (xml[at] !== ">") fail(`expected > after ${close}`);
        at++;
        return { name, attributes, children, text: decodeEntities(text).trim() };
      } else {
        children.push(element());
      }
    }
  }

  skip();
  if (xml.startsWith("<?xml", at)) {
    const end = xml.indexOf("?>", at);
    if (end < 0) fail("unterminated declaration");
    at = end + 2;
  }
  skip();
  const root = element();
  skip();
  if (at !== xml.length) fail("content after the root element");
  return root;
}

/** What a TwiML element says, for error messages: `<Say>Sorry</Say>` → Say("Sorry"). */
function describe(el: XmlElement): string {
  const inner = el.children.map(describe).join(", ");
  const text = el.text ? JSON.stringify(el.text) : "";
  return `${el.name}(${[text, inner].filter(Boolean).join(", ")})`;
}

function onlyChild(parent: XmlElement, name: string): XmlElement {
  const [child, ...more] = parent.children;
  if (child === undefined || child.name !== name || more.length > 0 || parent.text !== "")
    throw new TwimlAnswerError(
      `expected <${parent.name}> to hold one <${name}>; it holds ${describe(parent)}`,
    );
  return child;
}

function allowOnly(el: XmlElement, allowed: readonly string[]): void {
  for (const attr of Object.keys(el.attributes))
    if (!allowed.includes(attr))
      throw new TwimlAnswerError(`<${el.name}> has no attribute ${attr}`);
}

export interface ReadStreamAnswerOptions {
  /** Take ws:// too (a gateway on localhost); Twilio itself connects to wss:// only. */
  allowInsecure?: boolean;
}

/** The <Stream> of a `<Response><Connect><Stream>` answer, or a TwimlAnswerError. */
export function readStreamAnswer(
  twiml: string,
  { allowInsecure = false }: ReadStreamAnswerOptions = {},
): StreamAnswer {
  const response = parseXml(twiml);
  if (response.name !== "Response")
    throw new TwimlAnswerError(`the root is <${response.name}>, not <Response>`);
  const connect = onlyChild(response, "Connect");
  allowOnly(connect, ["action", "method"]);
  const { action, method } = connect.attributes;
  if (method !== undefined && method !== "POST" && method !== "GET")
    throw new TwimlAnswerError(`<Connect method> is ${method}, not POST or GET`);
  if (action !== undefined && !/^https?:\/\//.test(action))
    throw new TwimlAnswerError(`<Connect action> is not an absolute http(s) URL: ${action}`);
  const stream = onlyChild(connect, "Stream");
  allowOnly(stream, ["url", "name", "track", "statusCallback", "statusCallbackMethod"]);
  // <Connect><Stream> streams the inbound track only.
  if (stream.attributes.track !== undefined && stream.attributes.track !== "inbound_track")
    throw new TwimlAnswerError(`<Connect><Stream> takes track="inbound_track" only`);
  const streamUrl = stream.attributes.url;
  if (streamUrl === undefined) throw new TwimlAnswerError("<Stream> has no url");
  let url: URL;
  try {
    url = new URL(streamUrl);
  } catch {
    throw new TwimlAnswerError(`<Stream url> is not an absolute URL: ${streamUrl}`);
  }
  if (url.protocol !== "wss:" && !(allowInsecure && url.protocol === "ws:"))
    throw new TwimlAnswerError(`<Stream url> is not wss://: ${streamUrl}`);
  if (url.search !== "")
    throw new TwimlAnswerError(`<Stream url> has a query string (use <Parameter>s): ${streamUrl}`);
  if (stream.text !== "") throw new TwimlAnswerError("<Stream> holds text");
  const parameters: Record<string, string> = {};
  for (const p of stream.children) {
    if (p.name !== "Parameter") throw new TwimlAnswerError(`<Stream> holds <${p.name}>`);
    allowOnly(p, ["name", "value"]);
    const { name, value } = p.attributes;
    if (name === undefined || value === undefined)
      throw new TwimlAnswerError("<Parameter> needs name and value");
    parameters[name] = value;
  }
  const answer: StreamAnswer = { streamUrl, parameters };
  if (stream.attributes.name !== undefined) answer.name = stream.attributes.name;
  if (action !== undefined) answer.action = action;
  return answer;
}

/** The number of a `<Response><Dial>+1…</Dial></Response>` (a transfer), or a TwimlAnswerError. */
export function readDialAnswer(twiml: string): { number: string } {
  const response = parseXml(twiml);
  if (response.name !== "Response")
    throw new TwimlAnswerError(`the root is <${response.name}>, not <Response>`);
  const dial = onlyChild(response, "Dial");
  if (dial.children.length > 0)
    throw new TwimlAnswerError("<Dial> holds elements; expected a number");
  if (!/^\+[1-9]\d{6,14}$/.test(dial.text))
    throw new TwimlAnswerError(`<Dial> holds ${JSON.stringify(dial.text)}, not an E.164 number`);
  return { number: dial.text };
}
