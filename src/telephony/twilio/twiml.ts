/**
 * The TwiML liveline answers a voice webhook with ("TwiML <Stream>",
 * https://www.twilio.com/docs/voice/twiml/stream): <Connect><Stream> opens a bidirectional
 * Media Stream to `streamUrl` (wss://, no query string: Twilio does not pass one on; values
 * go in <Parameter>s, which come back in the `start` message's customParameters), and its
 * `action` is where Twilio asks what to do when the stream ends
 * (https://www.twilio.com/docs/voice/twiml/connect).
 * <Say> and <Hangup> are for refusing a call politely.
 */
import { requireE164 } from "../phone-number.js";

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Escapes text for an XML attribute value or element content. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

export interface ConnectStreamOptions {
  /** wss://HOST/…: where Twilio opens the Media Stream. */
  streamUrl: string;
  /** Sent back in `start.customParameters` (a session token, say). */
  parameters: Record<string, string>;
  /**
   * `<Connect action>`: "When the <Connect> verb ends, Twilio sends an HTTP request to this
   * URL" (POST, signed as every webhook) and runs the TwiML it answers; without it the call
   * ends with its stream ("TwiML Voice: <Connect>").
   */
  action?: string | undefined;
}

export function connectStreamTwiml({
  streamUrl,
  parameters,
  action,
}: ConnectStreamOptions): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join("");
  const connect =
    action === undefined ? "<Connect>" : `<Connect action="${escapeXml(action)}" method="POST">`;
  return `${XML_DECLARATION}<Response>${connect}<Stream url="${escapeXml(streamUrl)}">${params}</Stream></Connect></Response>`;
}

export function hangupTwiml(): string {
  return `${XML_DECLARATION}<Response><Hangup/></Response>`;
}

/** Says `text` to the caller, then hangs up (a refusal the caller understands). */
export function sayTwiml(text: string): string {
  return `${XML_DECLARATION}<Response><Say>${escapeXml(text)}</Say><Hangup/></Response>`;
}

/** Connects the caller to `number` (E.164): what a transferred call runs next. */
export function dialTwiml(number: string): string {
  requireE164(number);
  return `${XML_DECLARATION}<Response><Dial>${escapeXml(number)}</Dial></Response>`;
}
