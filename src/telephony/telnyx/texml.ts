/**
 * The TeXML liveline answers a Telnyx voice webhook with ("TeXML <Connect>", "<Stream>",
 * https://developers.telnyx.com/docs/voice/programmable-voice/texml-verbs/stream):
 * <Connect><Stream> streams the call's audio to `streamUrl` synchronously — the TeXML after it
 * runs only once the stream stops, and with none the call ends. `bidirectionalMode="rtp"`
 * makes the socket two-way (the default, mp3, plays whole files and cannot carry a
 * conversation); `codec` is the audio Telnyx streams (it transcodes between PCMU and PCMA
 * where the call's own codec differs) and `bidirectionalCodec` the audio it takes back: both
 * the same, so one codec runs both ways, and the stream's start names it. The stream's token
 * goes in a <Parameter> (TwiML's form, which TeXML follows): it comes back in the start's
 * `custom_parameters`.
 */
import { requireE164 } from "../phone-number.js";
import { escapeXml, XML_DECLARATION } from "../xml-text.js";

/** The G.711 codecs liveline asks Telnyx for. */
export type TelnyxLineCodec = "PCMU" | "PCMA";

export interface ConnectStreamOptions {
  /** wss://HOST/…: where Telnyx opens the media stream. */
  streamUrl: string;
  codec: TelnyxLineCodec;
  /** Sent back in `start.custom_parameters` (the stream's token). */
  parameters: Record<string, string>;
}

export function connectStreamTexml({ streamUrl, codec, parameters }: ConnectStreamOptions): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join("");
  return `${XML_DECLARATION}<Response><Connect><Stream url="${escapeXml(streamUrl)}" bidirectionalMode="rtp" codec="${codec}" bidirectionalCodec="${codec}">${params}</Stream></Connect></Response>`;
}

export function hangupTexml(): string {
  return `${XML_DECLARATION}<Response><Hangup/></Response>`;
}

/** Connects the caller to `number` (E.164): what a transferred call runs next. */
export function dialTexml(number: string): string {
  requireE164(number);
  return `${XML_DECLARATION}<Response><Dial>${escapeXml(number)}</Dial></Response>`;
}
