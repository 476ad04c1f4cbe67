/**
 * The one call of Twilio's REST API liveline makes: updating a live call with new TwiML
 * ("Call resource: update", https://www.twilio.com/docs/voice/api/call-resource#update-a-call-resource),
 * which is how a call is transferred — the call leaves its <Connect><Stream> (Twilio stops the
 * media stream) and runs the new TwiML (a <Dial>).
 *
 * POST {base}/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json, form-encoded `Twiml`,
 * HTTP basic auth with the account SID and its auth token. Twilio answers the call resource
 * (200, JSON) or an error body `{code, message, more_info, status}`. The base URL is a
 * setting (TWILIO_API_BASE_URL) so that tests point it at the carrier stand-in.
 */
import { z } from "zod";

export const TWILIO_API_BASE_URL = "https://api.twilio.com";

/** How long a transfer waits for Twilio before it is taken as failed. */
const REQUEST_TIMEOUT_MS = 10_000;
/** Of a refusal's message, this much is told (it goes to the model as a line). */
const MAX_PROBLEM_CHARS = 200;
/** Of a refusal's body, this much is read (Twilio's error bodies are a few hundred bytes). */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

export interface CallUpdate {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  callSid: string;
  twiml: string;
}

export type CallUpdateOutcome = { ok: true } | { ok: false; problem: string };

const TwilioErrorBody = z.object({ code: z.number().optional(), message: z.string() });

/** The path of a call's resource (the SIDs are checked: they go into a URL). */
export function callResourcePath(accountSid: string, callSid: string): string {
  if (!/^AC[0-9a-f]{32}$/i.test(accountSid)) throw new Error("not an account SID");
  if (!/^CA[0-9a-f]{32}$/i.test(callSid)) throw new Error("not a call SID");
  return `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`;
}

/** Updates the live call with `twiml`; never throws (a failure says what went wrong). */
export async function updateCall(
  update: CallUpdate,
  fetcher: (url: string, init: RequestInit) => Promise<Response> = (url, init) => fetch(url, init),
): Promise<CallUpdateOutcome> {
  let path: string;
  try {
    path = callResourcePath(update.accountSid, update.callSid);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  let response: Response;
  try {
    response = await fetcher(update.baseUrl.replace(/\/+$/, "") + path, {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${update.accountSid}:${update.authToken}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
      },
      body: new URLSearchParams({ Twiml: update.twiml }).toString(),
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
  // Twilio's error body names the problem (20404: the call is over; 20003: authentication).
  const body = TwilioErrorBody.safeParse(await boundedJson(response));
  const said = body.success
    ? `${told(body.data.message, update)}${body.data.code === undefined ? "" : ` (${body.data.code})`}`
    : "no reason given";
  return { ok: false, problem: `the carrier refused it with ${response.status}: ${said}` };
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

/**
 * A refusal's message as the model may hear it: short, and never carrying the credentials
 * (a misbehaving endpoint could echo them).
 */
function told(message: string, update: CallUpdate): string {
  const basic = btoa(`${update.accountSid}:${update.authToken}`);
  let text = message;
  for (const secret of [update.authToken, basic])
    if (secret !== "") text = text.split(secret).join("[redacted]");
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS - 1)}…` : text;
}
