/**
 * The Plivo XML liveline answers a Plivo answer URL with ("The Stream element",
 * https://www.plivo.com/docs/voice/xml/the-stream-element): <Stream bidirectional="true">
 * streams the call's audio to the WebSocket URL in its body, and takes audio back;
 * `keepCallAlive="true"` runs it alone — the XML after it runs only once the stream
 * disconnects, and with none the call ends; `contentType="audio/x-mulaw;rate=8000"`, the
 * line's codec both ways. The stream's token goes in `extraHeaders`, which allows letters and
 * digits only: it is sent as hex (the start's `extra_headers` brings it back).
 */
import { requireE164 } from "../phone-number.js";
import { escapeXml, XML_DECLARATION } from "../xml-text.js";

export const PLIVO_CONTENT_TYPE = "audio/x-mulaw;rate=8000";

/** A token's bytes as hex (extraHeaders' alphabet), from its base64url. */
export function tokenToHex(token: string): string {
  const standard = token.replace(/-/g, "+").replace(/_/g, "/");
  const padded = standard + "=".repeat((4 - (standard.length % 4)) % 4);
  return [...atob(padded)].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

/** The base64url token from its hex (null: not hex). */
export function tokenFromHex(hex: string): string | null {
  if (!/^(?:[0-9a-f]{2})+$/.test(hex)) return null;
  const bytes = hex.match(/../g)!.map((pair) => String.fromCharCode(Number.parseInt(pair, 16)));
  return btoa(bytes.join("")).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function connectStreamXml(streamUrl: string, token: string): string {
  return `${XML_DECLARATION}<Response><Stream bidirectional="true" keepCallAlive="true" audioTrack="inbound" contentType="${PLIVO_CONTENT_TYPE}" extraHeaders="token=${tokenToHex(token)}">${escapeXml(streamUrl)}</Stream></Response>`;
}

export function hangupXml(): string {
  return `${XML_DECLARATION}<Response><Hangup/></Response>`;
}

/** Connects the caller to `number` (E.164; Plivo's <Number> takes it without the +). */
export function dialXml(number: string): string {
  requireE164(number);
  return `${XML_DECLARATION}<Response><Dial><Number>${escapeXml(number.slice(1))}</Number></Dial></Response>`;
}
