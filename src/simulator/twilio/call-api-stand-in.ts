/**
 * The carrier stand-in's REST API: the one request liveline makes of Twilio's — updating a
 * live call with new TwiML, which is how a call is transferred ("Call resource: update",
 * https://www.twilio.com/docs/voice/api/call-resource#update-a-call-resource). A web-standard
 * handler (`handle(request)`): tests serve it on localhost and point TWILIO_API_BASE_URL at it.
 *
 * As Twilio does it:
 * - POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json only (else 404; another method
 *   405), HTTP basic auth with the account SID and its auth token (else 401, code 20003);
 * - a form body with `Twiml` (or `Url`; else 400, code 21205 — this stand-in takes Twiml only
 *   and refuses a Url with 400, having no web to fetch it from);
 * - an unknown call 404 (code 20404), a call no longer in progress 400 (code 21220);
 * - a call updated with a `<Dial>` leaves its <Connect><Stream>: its media stream gets `stop`
 *   and closes; the call resource comes back (200, JSON).
 * What it simplifies: the <Dial> itself is not placed; `transfers` records it.
 */
import { safeEqual } from "../../safe-equal.js";
import type { TwilioCallStandIn } from "./call-stand-in.js";
import { readDialAnswer } from "./twiml-reader.js";

const CALL_PATH = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Calls\/(CA[0-9a-f]{32})\.json$/;

/** A refusal the stand-in gives to the next update, whatever it is (to test the failure path). */
export interface Refusal {
  status: number;
  code: number;
  message: string;
}

export class TwilioCallApiStandIn {
  /** Each transfer the API took: the call and the number its <Dial> rang. */
  readonly transfers: { callSid: string; number: string }[] = [];
  /** Each request that was refused, with why (an auth failure, a bad body, …). */
  readonly refused: { status: number; message: string }[] = [];
  /** The next update is refused with this (then it is cleared). */
  refuseNext: Refusal | null = null;
  private readonly calls = new Map<string, TwilioCallStandIn>();
  private readonly accountSid: string;
  private readonly authToken: string;

  constructor(options: { accountSid: string; authToken: string }) {
    this.accountSid = options.accountSid;
    this.authToken = options.authToken;
  }

  /** A call placed through the stand-in (its CallSid), which an update may then transfer. */
  register(callSid: string, call: TwilioCallStandIn): void {
    this.calls.set(callSid, call);
  }

  async handle(request: Request): Promise<Response> {
    const path = CALL_PATH.exec(new URL(request.url).pathname);
    if (path === null) return this.error(404, 20404, "The requested resource was not found");
    if (request.method !== "POST") return this.error(405, 20004, "Method not allowed");
    if (
      !(await this.authenticated(request.headers.get("Authorization"))) ||
      path[1] !== this.accountSid
    )
      return this.error(401, 20003, "Authenticate");
    const refusal = this.refuseNext;
    if (refusal !== null) {
      this.refuseNext = null;
      return this.error(refusal.status, refusal.code, refusal.message);
    }
    if (
      !(request.headers.get("Content-Type") ?? "").startsWith("application/x-www-form-urlencoded")
    )
      return this.error(400, 21205, "The body must be form-encoded");
    const form = new URLSearchParams(await request.text());
    const twiml = form.get("Twiml");
    if (twiml === null)
      return this.error(400, 21205, "Twiml or Url is required (this stand-in takes Twiml)");
    const callSid = path[2]!;
    const call = this.calls.get(callSid);
    if (call === undefined)
      return this.error(404, 20404, `The requested resource /Calls/${callSid}.json was not found`);
    if (call.closed !== null)
      return this.error(400, 21220, "Call is not in-progress. Cannot redirect.");
    let number: string;
    try {
      number = readDialAnswer(twiml).number;
    } catch (error) {
      return this.error(400, 12100, `Document parse failure: ${(error as Error).message}`);
    }
    this.transfers.push({ callSid, number });
    // The call leaves <Connect>: Twilio stops its media stream.
    call.hangUp();
    return Response.json({ sid: callSid, account_sid: this.accountSid, status: "in-progress" });
  }

  private async authenticated(header: string | null): Promise<boolean> {
    const expected = `Basic ${btoa(`${this.accountSid}:${this.authToken}`)}`;
    return header !== null && (await safeEqual(header, expected));
  }

  private error(status: number, code: number, message: string): Response {
    this.refused.push({ status, message });
    return Response.json(
      { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
      { status },
    );
  }
}
