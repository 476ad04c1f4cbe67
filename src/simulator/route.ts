/**
 * Where the simulator answers. Besides its own route, `/simulator/gemini`, it takes the real
 * service's path, so an official SDK pointed at the Worker by its base URL reaches it
 * unchanged. The SDKs build that URL themselves: `{baseUrl}/ws/google.ai.generativelanguage.
 * {apiVersion}.GenerativeService.BidiGenerateContent?key={apiKey}`. A query string in the base
 * URL would land in front of that path, so knobs ride in the base URL's path instead:
 *
 *   baseUrl = http://127.0.0.1:8787/simulator/gemini/seed=7&timeScale=0
 *   → /simulator/gemini/seed=7&timeScale=0/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=…
 */

import type { FaceDialectName } from "./openai/dialects.js";

export const SIMULATOR_PATH = "/simulator/gemini";
/** The OpenAI Realtime face; clients add `?model=…`, which is not a knob. */
export const OPENAI_SIMULATOR_PATH = "/simulator/openai";
/**
 * The OpenAI face as each service of the family speaks it (src/simulator/openai/dialects.ts),
 * by path: OpenAI Realtime, xAI's Grok voice, Azure Voice Live.
 */
export const OPENAI_FAMILY_PATHS = {
  [OPENAI_SIMULATOR_PATH]: "openai",
  "/simulator/xai": "xai",
  "/simulator/voice-live": "voice-live",
} as const satisfies Record<string, FaceDialectName>;

/** The family face a path names, or null. */
export function familyFaceOf(pathname: string): FaceDialectName | null {
  return Object.hasOwn(OPENAI_FAMILY_PATHS, pathname)
    ? OPENAI_FAMILY_PATHS[pathname as keyof typeof OPENAI_FAMILY_PATHS]
    : null;
}
/**
 * The GPT-Live face, at the service's own path: the openai SDK's LiveWS connects to
 * `{baseURL}/live/sessions`, and a baseURL ending in `/v1` makes it this. Knobs ride in the
 * query (a query string in the SDK's baseURL is kept, as is its `defaultQuery`).
 */
export const GPT_LIVE_PATH = "/v1/live/sessions";
/**
 * A running GPT-Live session's sideband (the SDK's `/live/sessions/{id}/attach`), or the
 * stand-in for the browser of a session created for WebRTC (`/peer`: the simulator's own,
 * since it has no media: a WebSocket that speaks what the browser's data channel would).
 */
const GPT_LIVE_SESSION = /^\/v1\/live\/sessions\/([^/]+)\/(attach|peer)$/;

/**
 * A GPT-Live session id names the simulator object that holds it, so that a sideband's
 * `/attach` reaches the same object: `sess_{object}.{n}` (n counts the object's sessions).
 */
export function liveSessionId(objectName: string, n: number): string {
  return `sess_${objectName}.${n}`;
}

/** The object a session id names, or null when it names none. */
function liveSessionObject(id: string): string | null {
  return /^sess_([A-Za-z0-9_-]{1,64})\.\d+$/.exec(id)?.[1] ?? null;
}

/** Where the SIP stand-in rings a call (POST), and tells of one (GET `…/{id}`). */
export const SIP_CALLS_PATH = "/simulator/openai-sip/calls";
/** OpenAI's SIP call control (`/v1/realtime/calls/{id}/{action}`), and the stand-in phone. */
const SIP_CALL = /^\/v1\/realtime\/calls\/([^/]+)\/(accept|reject|refer|hangup|phone)$/;
const SIP_DESCRIBE = /^\/simulator\/openai-sip\/calls\/([^/]+)$/;

/** A SIP call's id names the simulator object that holds it: `rtc_{object}.{n}`. */
export function sipCallId(objectName: string, n: number): string {
  return `rtc_${objectName}.${n}`;
}

/** What a SIP stand-in path asks for, or null when it is none. */
export type SipPath =
  | { kind: "ring" }
  | { kind: "describe"; id: string }
  | { kind: "sideband"; id: string }
  | { kind: "control"; id: string; action: string };

export function sipPath(url: URL): SipPath | null {
  if (url.pathname === SIP_CALLS_PATH) return { kind: "ring" };
  const call = url.searchParams.get("call_id");
  if (url.pathname === "/v1/realtime" && call !== null) return { kind: "sideband", id: call };
  const control = SIP_CALL.exec(url.pathname);
  if (control !== null)
    return { kind: "control", id: decodeURIComponent(control[1]!), action: control[2]! };
  const described = SIP_DESCRIBE.exec(url.pathname);
  if (described !== null) return { kind: "describe", id: decodeURIComponent(described[1]!) };
  return null;
}

/** The object a SIP call's id names, or null. */
function sipCallObject(id: string): string | null {
  return /^rtc_([A-Za-z0-9_-]{1,64})\.\d+$/.exec(id)?.[1] ?? null;
}

/** The session a sideband's or a stand-in browser's path names, or null when it is neither. */
export function liveSessionPath(pathname: string): { id: string; kind: "attach" | "peer" } | null {
  const match = GPT_LIVE_SESSION.exec(pathname);
  if (match === null) return null;
  return { id: decodeURIComponent(match[1]!), kind: match[2] === "peer" ? "peer" : "attach" };
}

/**
 * `[/simulator/gemini[/knobs]]/ws/…BidiGenerateContent[Constrained]`. Slashes repeat because
 * the SDK joins `new URL(baseUrl).toString()` (which ends in "/" for a bare origin) and "/ws/…".
 * The API version follows the SDK's `httpOptions.apiVersion` (3.x defaults to v1).
 */
const SERVICE_PATH =
  /^(?:\/simulator\/gemini(?:\/([^/]*))?)?\/+ws\/google\.ai\.generativelanguage\.v1(?:alpha|beta)?\.GenerativeService\.BidiGenerateContent(?:Constrained)?$/;

/**
 * The SDK's credentials (`?key=` for an API key, `?access_token=` for an ephemeral token):
 * the simulator takes any, and drops them so they never reach its object or a log.
 */
const CREDENTIAL_PARAMS = ["key", "access_token"];

/**
 * The simulator request URL for `url` (`/simulator/gemini?knobs`), or null when `url` is not a
 * simulator path. Knobs from the path segment come first; the query string adds to them and
 * wins on a knob given in both.
 */
export function simulatorUrl(url: URL): URL | null {
  const sip = sipPath(url);
  if (sip !== null) {
    const out = new URL(url);
    for (const name of CREDENTIAL_PARAMS) out.searchParams.delete(name);
    if (sip.kind === "ring") return out;
    // The id names the object; an id of no simulated call is not the simulator's.
    const object = sipCallObject(sip.id);
    if (object === null) return null;
    out.searchParams.set("session", object);
    return out;
  }
  if (familyFaceOf(url.pathname) !== null || url.pathname === GPT_LIVE_PATH) {
    const out = new URL(url);
    for (const name of [...CREDENTIAL_PARAMS, "model"]) out.searchParams.delete(name);
    return out;
  }
  const attached = liveSessionPath(url.pathname);
  if (attached !== null) {
    // The id names the object; an id of no simulated session is not the simulator's.
    const object = liveSessionObject(attached.id);
    if (object === null) return null;
    const out = new URL(url);
    for (const name of CREDENTIAL_PARAMS) out.searchParams.delete(name);
    out.searchParams.set("session", object);
    return out;
  }
  let pathKnobs = "";
  if (url.pathname !== SIMULATOR_PATH) {
    const match = SERVICE_PATH.exec(url.pathname);
    if (match === null) return null;
    pathKnobs = match[1] ?? "";
  }
  const knobs = new URLSearchParams(pathKnobs);
  const query = [...url.searchParams].filter(([name]) => !CREDENTIAL_PARAMS.includes(name));
  // Replaced as a whole, so a knob repeated in the query reads as it did on the plain route.
  for (const [name] of query) knobs.delete(name);
  for (const [name, value] of query) knobs.append(name, value);
  const out = new URL(url);
  out.pathname = SIMULATOR_PATH;
  out.search = knobs.toString();
  return out;
}
