/**
 * One request to a carrier's REST API (a transfer, a hang-up), the way every carrier's is
 * made: with a deadline, never throwing (a failure says what went wrong, in words the model
 * may hear as a line), reading at most a few kilobytes of a refusal's body, and never letting
 * a credential through into that line (a misbehaving endpoint could echo one).
 */

/** How long a request waits for the carrier before it is taken as failed. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Of a refusal's message, this much is told (it goes to the model as a line). */
const MAX_PROBLEM_CHARS = 200;
/** Of a refusal's body, this much is read (carriers' error bodies are a few hundred bytes). */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

export type RestOutcome = { ok: true } | { ok: false; problem: string };

export type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

export interface RestCall {
  url: string;
  init: RequestInit;
  /** Values that must never reach the line (the key, its encodings in the request). */
  secrets: readonly string[];
  /** The refusal's own words, from its JSON body (null: none found). */
  refusal: (body: unknown) => string | null;
}

/** Makes the request; a 2xx is done, anything else says why. */
export async function restCall(
  call: RestCall,
  fetcher: Fetcher = (url, init) => fetch(url, init),
): Promise<RestOutcome> {
  let response: Response;
  try {
    response = await fetcher(call.url, {
      ...call.init,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = (error as Error).name === "TimeoutError";
    return {
      ok: false,
      problem: timedOut ? "the carrier did not answer in time" : "the carrier could not be reached",
    };
  }
  if (response.ok) {
    await response.body?.cancel();
    return { ok: true };
  }
  const said = call.refusal(await boundedJson(response));
  return {
    ok: false,
    problem: `the carrier refused it with ${response.status}: ${said === null ? "no reason given" : told(said, call.secrets)}`,
  };
}

/** The body as JSON, read up to MAX_ERROR_BODY_BYTES (null past it, or when it is not JSON). */
async function boundedJson(response: Response): Promise<unknown> {
  const reader = response.body?.getReader();
  if (reader === undefined) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_ERROR_BODY_BYTES) {
        await reader.cancel();
        return null;
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.byteLength;
    }
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}

/** A refusal's message as the model may hear it: short, and never carrying a credential. */
function told(message: string, secrets: readonly string[]): string {
  let text = message;
  for (const secret of secrets) if (secret !== "") text = text.split(secret).join("[redacted]");
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS - 1)}…` : text;
}
