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
import { type Fetcher, type RestOutcome, restCall } from "../rest-call.js";

export const TWILIO_API_BASE_URL = "https://api.twilio.com";

export interface CallUpdate {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  callSid: string;
  twiml: string;
}

export type CallUpdateOutcome = RestOutcome;

const TwilioErrorBody = z.object({ code: z.number().optional(), message: z.string() });

/** The path of a call's resource (the SIDs are checked: they go into a URL). */
export function callResourcePath(accountSid: string, callSid: string): string {
  if (!/^AC[0-9a-f]{32}$/i.test(accountSid)) throw new Error("not an account SID");
  if (!/^CA[0-9a-f]{32}$/i.test(callSid)) throw new Error("not a call SID");
  return `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`;
}

/**
 * Updates the live call with `twiml`; never throws (a failure says what went wrong), as every
 * carrier's request is made (../rest-call.ts).
 */
export async function updateCall(
  update: CallUpdate,
  fetcher?: Fetcher,
): Promise<CallUpdateOutcome> {
  let path: string;
  try {
    path = callResourcePath(update.accountSid, update.callSid);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const basic = btoa(`${update.accountSid}:${update.authToken}`);
  return restCall(
    {
      url: update.baseUrl.replace(/\/+$/, "") + path,
      init: {
        method: "POST",
        headers: {
          Authorization: `Basic ${basic}`,
          "Content-Type": "application/x-www-form-urlencoded",
          Accept: "application/json",
        },
        body: new URLSearchParams({ Twiml: update.twiml }).toString(),
      },
      secrets: [update.authToken, basic],
      // Twilio's error body names the problem (20404: the call is over; 20003: authentication).
      refusal: (body) => {
        const error = TwilioErrorBody.safeParse(body);
        if (!error.success) return null;
        return error.data.code === undefined
          ? error.data.message
          : `${error.data.message} (${error.data.code})`;
      },
    },
    fetcher,
  );
}
