/**
 * The calls of Vonage's Voice API liveline makes ("Modify an in progress call",
 * https://developer.vonage.com/en/api/voice#updateCall): PUT {base}/v1/calls/{uuid} with JSON,
 * `Authorization: Bearer` an application token (app-token.ts). `{"action": "transfer",
 * "destination": {"type": "ncco", "ncco": […]}}` moves the call onto a new NCCO (a phone
 * `connect`: the transfer; the call leaves its WebSocket); `{"action": "hangup"}` ends it.
 * A refusal's body is `{type, title, detail}`. The base URL is a setting (VONAGE_API_BASE_URL).
 */
import { z } from "zod";
import { type Fetcher, type RestOutcome, restCall } from "../rest-call.js";
import { applicationToken } from "./app-token.js";
import type { Ncco } from "./ncco.js";

export const VONAGE_API_BASE_URL = "https://api.nexmo.com";

export interface VonageCallUpdate {
  baseUrl: string;
  applicationId: string;
  privateKey: string;
  uuid: string;
  update: { action: "transfer"; destination: { type: "ncco"; ncco: Ncco } } | { action: "hangup" };
}

const VonageError = z.object({ title: z.string(), detail: z.string().optional() });

/** The path of a call's resource (its uuid is checked: it goes into a URL). */
export function vonageCallPath(uuid: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid))
    throw new Error("not a Vonage call uuid");
  return `/v1/calls/${uuid}`;
}

/** Updates the live call; never throws (a failure says what went wrong). */
export async function updateVonageCall(
  call: VonageCallUpdate,
  fetcher?: Fetcher,
): Promise<RestOutcome> {
  let path: string;
  let token: string;
  try {
    path = vonageCallPath(call.uuid);
    token = await applicationToken(call.applicationId, call.privateKey);
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return restCall(
    {
      url: call.baseUrl.replace(/\/+$/, "") + path,
      init: {
        method: "PUT",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          Accept: "application/json",
        },
        body: JSON.stringify(call.update),
      },
      secrets: [token, call.privateKey],
      refusal: (body) => {
        const read = VonageError.safeParse(body);
        if (!read.success) return null;
        return read.data.detail === undefined
          ? read.data.title
          : `${read.data.title}: ${read.data.detail}`;
      },
    },
    fetcher,
  );
}
