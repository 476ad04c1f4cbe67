/**
 * The calls of Telnyx's TeXML REST API liveline makes ("Update call",
 * https://developers.telnyx.com/api-reference/texml-rest-commands/update-call): POST
 * {base}/v2/texml/Accounts/{AccountSid}/Calls/{CallSid}, form-encoded, `Authorization: Bearer`
 * with the API key. `Texml` replaces the call's TeXML — a <Dial> moves the call out of its
 * <Connect><Stream> (Telnyx stops the stream): a transfer; `Status=completed` ends the call.
 * A refusal's body is `{errors: [{code, title, detail}]}`. The base URL is a setting
 * (TELNYX_API_BASE_URL) so that tests point it at a stand-in.
 */
import { z } from "zod";
import { type Fetcher, type RestOutcome, restCall } from "../rest-call.js";

export const TELNYX_API_BASE_URL = "https://api.telnyx.com";

export interface TexmlCallUpdate {
  baseUrl: string;
  apiKey: string;
  accountSid: string;
  callSid: string;
  /** The new TeXML (a transfer), or the call's end. */
  update: { Texml: string } | { Status: "completed" };
}

const TelnyxErrors = z.object({
  errors: z
    .array(
      z.object({
        code: z.union([z.string(), z.number()]).optional(),
        title: z.string().optional(),
        detail: z.string().optional(),
      }),
    )
    .min(1),
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CALL_SID = /^v\d+:[A-Za-z0-9_-]+$/;

/** The path of a call's TeXML resource (its ids are checked: they go into a URL). */
export function texmlCallPath(accountSid: string, callSid: string): string {
  if (!UUID.test(accountSid)) throw new Error("not a Telnyx account id");
  if (!CALL_SID.test(callSid)) throw new Error("not a Telnyx CallSid");
  return `/v2/texml/Accounts/${accountSid}/Calls/${encodeURIComponent(callSid)}`;
}

/** Updates the live call; never throws (a failure says what went wrong). */
export async function updateTexmlCall(
  call: TexmlCallUpdate,
  fetcher?: Fetcher,
): Promise<RestOutcome> {
  let path: string;
  try {
    path = texmlCallPath(call.accountSid, call.callSid);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return restCall(
    {
      url: call.baseUrl.replace(/\/+$/, "") + path,
      init: {
        method: "POST",
        headers: {
          Authorization: `Bearer ${call.apiKey}`,
          "Content-Type": "application/x-www-form-urlencoded",
          Accept: "application/json",
        },
        body: new URLSearchParams(call.update).toString(),
      },
      secrets: [call.apiKey],
      refusal: (body) => {
        const read = TelnyxErrors.safeParse(body);
        if (!read.success) return null;
        const first = read.data.errors[0]!;
        const words = first.detail ?? first.title ?? "an error";
        return first.code === undefined ? words : `${words} (${first.code})`;
      },
    },
    fetcher,
  );
}
