/**
 * The calls of Plivo's Voice API liveline makes, HTTP basic auth with the auth ID and token:
 * - a transfer ("Transfer a call", https://www.plivo.com/docs/voice/api/call/transfer-a-call):
 *   POST {base}/v1/Account/{auth_id}/Call/{call_uuid}/ with JSON {legs: "aleg", aleg_url,
 *   aleg_method: "POST"}: Plivo fetches the call's next XML from `aleg_url` (liveline's
 *   transfer route, which answers a <Dial>), and the call leaves its <Stream>;
 * - a hang-up ("Hang up a call"): DELETE {base}/v1/Account/{auth_id}/Call/{call_uuid}/.
 * A refusal's body is `{api_id, error}`. The base URL is a setting (PLIVO_API_BASE_URL).
 */
import { z } from "zod";
import { type Fetcher, type RestOutcome, restCall } from "../rest-call.js";

export const PLIVO_API_BASE_URL = "https://api.plivo.com";

export interface PlivoCallRequest {
  baseUrl: string;
  authId: string;
  authToken: string;
  callUuid: string;
}

const PlivoError = z.object({ error: z.union([z.string(), z.record(z.string(), z.unknown())]) });

/** The path of a call's resource (its ids are checked: they go into a URL). */
export function plivoCallPath(authId: string, callUuid: string): string {
  if (!/^[A-Z0-9]{20}$/.test(authId)) throw new Error("not a Plivo auth ID");
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(callUuid))
    throw new Error("not a Plivo CallUUID");
  return `/v1/Account/${authId}/Call/${callUuid}/`;
}

async function plivoRequest(
  call: PlivoCallRequest,
  init: RequestInit,
  fetcher?: Fetcher,
): Promise<RestOutcome> {
  let path: string;
  try {
    path = plivoCallPath(call.authId, call.callUuid);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const basic = btoa(`${call.authId}:${call.authToken}`);
  return restCall(
    {
      url: call.baseUrl.replace(/\/+$/, "") + path,
      init: {
        ...init,
        headers: { ...init.headers, Authorization: `Basic ${basic}`, Accept: "application/json" },
      },
      secrets: [call.authToken, basic],
      refusal: (body) => {
        const read = PlivoError.safeParse(body);
        if (!read.success) return null;
        return typeof read.data.error === "string"
          ? read.data.error
          : JSON.stringify(read.data.error);
      },
    },
    fetcher,
  );
}

/** Has Plivo run the XML at `alegUrl` on the call (a <Dial>: the transfer). */
export function transferCall(
  call: PlivoCallRequest & { alegUrl: string },
  fetcher?: Fetcher,
): Promise<RestOutcome> {
  return plivoRequest(
    call,
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ legs: "aleg", aleg_url: call.alegUrl, aleg_method: "POST" }),
    },
    fetcher,
  );
}

/** Ends the call. */
export function hangUpCall(call: PlivoCallRequest, fetcher?: Fetcher): Promise<RestOutcome> {
  return plivoRequest(call, { method: "DELETE" }, fetcher);
}
