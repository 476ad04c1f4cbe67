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
  const body = TwilioErrorBody.safeParse(await response.json().catch(() => null));
  const said = body.success
    ? `${body.data.message}${body.data.code === undefined ? "" : ` (${body.data.code})`}`
    : "no reason given";
  return { ok: false, problem: `the carrier refused it with ${response.status}: ${said}` };
}
