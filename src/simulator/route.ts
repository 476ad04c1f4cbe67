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

export const SIMULATOR_PATH = "/simulator/gemini";
/** The OpenAI Realtime face; clients add `?model=…`, which is not a knob. */
export const OPENAI_SIMULATOR_PATH = "/simulator/openai";

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
  if (url.pathname === OPENAI_SIMULATOR_PATH) {
    const out = new URL(url);
    for (const name of [...CREDENTIAL_PARAMS, "model"]) out.searchParams.delete(name);
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
