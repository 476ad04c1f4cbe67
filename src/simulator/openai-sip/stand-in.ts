/**
 * OpenAI Realtime's SIP calls, stood in for (README, "OpenAI SIP stand-in"): a call rings
 * (`POST /simulator/openai-sip/calls`: the stand-in's own, with the signed
 * `realtime.call.incoming` webhook the service would deliver), the app accepts it with a
 * session (`POST /v1/realtime/calls/{id}/accept`), attaches its sideband
 * (`GET /v1/realtime?call_id={id}`), transfers it (`…/refer`) or hangs it up (`…/hangup`), or
 * rejects it while it rings (`…/reject`). The call's session is the OpenAI face (its GA
 * machine, in its SIP mode); the caller is a stand-in phone, a WebSocket at
 * `/v1/realtime/calls/{id}/phone` (the simulator's own: it has no SIP media) that hears every
 * event and speaks audio and keys. From the `openai` package's types (7.57.0:
 * `resources/realtime/calls.d.ts`, `resources/webhooks/webhooks.d.ts`) and OpenAI's SIP and
 * server-controls guides.
 */
import { z } from "zod";
import { closeQuietly, type Face, FaceSocket } from "../face-socket.js";
import type { SimulatorKnobs } from "../knobs.js";
import {
  createOpenAISimulator,
  type OaiSimEffect,
  type OaiSimInput,
  type OaiSimState,
  oaiStep,
} from "../openai/machine.js";
import { OpenAIClientEvent } from "../openai/strict-schemas.js";
import { PeerSlot } from "../webrtc-stand-in.js";
import { signedDelivery } from "./webhook-sender.js";

/** A call rings with: who calls whom, and the webhook secret the app checks. */
export const RingRequest = z
  .object({
    from: z.string().min(1),
    to: z.string().min(1),
    secret: z
      .string()
      .min(1)
      .refine((v) => !v.startsWith("whsec_") || /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(v), {
        message: "a webhook secret (whsec_ then base64)",
      }),
  })
  .strict();

/** `CallAcceptParams`: a realtime session's configuration (as `session.update` takes it). */
const AcceptParams = OpenAIClientEvent.options[0].shape.session;
/** `CallReferParams`. */
const ReferParams = z.object({ target_uri: z.string().min(1) }).strict();
/** `CallRejectParams`. */
const RejectParams = z.object({ status_code: z.number().int().optional() }).strict();

/** What the stand-in's phone says: audio (base64, as the session's format) or a key. */
const PhoneMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("audio"), audio: z.string() }).strict(),
  z.object({ type: z.literal("dtmf"), digit: z.string().regex(/^[0-9*#A-D]$/) }).strict(),
]);

export type SipCallState = "ringing" | "accepted" | "referred" | "hung_up" | "rejected" | "ended";

/** The service's HTTP error (OpenAI's shape). */
function httpError(status: number, code: string, message: string): Response {
  return Response.json({ error: { type: "invalid_request_error", code, message } }, { status });
}

export class SipCallStandIn {
  state: SipCallState = "ringing";
  /** The session the call was accepted with (as sent), the transfer's target, keys pressed. */
  private accepted: unknown = null;
  private referredTo: string | null = null;
  private readonly sidebands = new Set<WebSocket>();
  private readonly phone = new PeerSlot();
  private socket: FaceSocket<OaiSimState, OaiSimInput, OaiSimEffect> | null = null;

  constructor(
    readonly id: string,
    readonly from: string,
    readonly to: string,
    private readonly knobs: SimulatorKnobs,
  ) {}

  /** The `realtime.call.incoming` delivery the service would POST to the app's webhook. */
  webhook(secret: string, nowMs: number) {
    const event = {
      object: "event",
      id: `evt_${this.id}`,
      type: "realtime.call.incoming",
      created_at: Math.floor(nowMs / 1000),
      data: {
        call_id: this.id,
        sip_headers: [
          { name: "From", value: `"Caller" <sip:${this.from}@sip.example.com>;tag=1` },
          { name: "To", value: `<sip:${this.to}@sip.api.openai.com>` },
          { name: "Call-ID", value: `${this.id}@sip.example.com` },
        ],
      },
    };
    return signedDelivery(secret, event, nowMs, `wh_${this.id}`);
  }

  /** `POST /v1/realtime/calls/{id}/{action}` (accept, reject, refer, hangup). */
  async control(action: string, request: Request): Promise<Response> {
    const text = await request.text();
    let json: unknown = {};
    try {
      json = text === "" ? {} : JSON.parse(text);
    } catch {
      return httpError(400, "invalid_json", "The body is not valid JSON.");
    }
    switch (action) {
      case "accept": {
        if (this.state !== "ringing")
          return httpError(409, "call_not_ringing", `Call ${this.id} is ${this.state}.`);
        const params = AcceptParams.safeParse(json);
        if (!params.success)
          return httpError(400, "invalid_value", params.error.issues[0]?.message ?? "invalid");
        this.state = "accepted";
        this.accepted = json;
        this.start(params.data);
        return new Response(null, { status: 200 });
      }
      case "reject": {
        if (this.state !== "ringing")
          return httpError(409, "call_not_ringing", `Call ${this.id} is ${this.state}.`);
        if (!RejectParams.safeParse(json).success)
          return httpError(400, "invalid_value", "status_code must be an integer");
        this.state = "rejected";
        return new Response(null, { status: 200 });
      }
      case "refer": {
        if (this.state !== "accepted")
          return httpError(409, "call_not_active", `Call ${this.id} is ${this.state}.`);
        const params = ReferParams.safeParse(json);
        if (!params.success) return httpError(400, "invalid_value", "target_uri is required");
        this.referredTo = params.data.target_uri;
        this.end("referred", "transferred");
        return new Response(null, { status: 200 });
      }
      case "hangup": {
        if (this.state !== "accepted")
          return httpError(409, "call_not_active", `Call ${this.id} is ${this.state}.`);
        this.end("hung_up", "hung up");
        return new Response(null, { status: 200 });
      }
      default:
        return httpError(404, "not_found", `No such call action ${action}.`);
    }
  }

  /** The call's sideband: refused (404) unless the call is up, as the service refuses one. */
  sideband(): Response {
    if (this.state !== "accepted" || this.socket === null)
      return httpError(404, "call_not_found", `Call ${this.id} is not active.`);
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    server.accept();
    server.binaryType = "arraybuffer";
    this.sidebands.add(server);
    const socket = this.socket;
    server.addEventListener("message", (event) =>
      socket.feed({
        type: "frame",
        text: typeof event.data === "string" ? event.data : new TextDecoder().decode(event.data),
      }),
    );
    server.addEventListener("close", () => this.sidebands.delete(server));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** The stand-in phone: it hears every event; its audio and keys go to the call. */
  joinPhone(): Response {
    if (this.state !== "accepted" || !this.phone.open)
      return httpError(409, "conflict", `Call ${this.id} takes no (further) phone.`);
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    server.accept();
    this.phone.join(server);
    server.addEventListener("message", (event) => this.phoneSaid(event.data));
    // The caller hung up.
    server.addEventListener("close", () => this.end("ended", "the caller hung up"));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** The call as the stand-in's own `GET /simulator/openai-sip/calls/{id}` tells it. */
  describe() {
    return {
      call_id: this.id,
      state: this.state,
      from: this.from,
      to: this.to,
      accepted: this.accepted,
      referred_to: this.referredTo,
    };
  }

  private phoneSaid(data: string | ArrayBuffer): void {
    const text = typeof data === "string" ? data : new TextDecoder().decode(data);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return;
    }
    const message = PhoneMessage.safeParse(json);
    if (!message.success || this.socket === null) return;
    if (message.data.type === "dtmf") this.socket.feed({ type: "dtmf", digit: message.data.digit });
    else
      this.socket.feed({
        type: "frame",
        text: JSON.stringify({ type: "input_audio_buffer.append", audio: message.data.audio }),
      });
  }

  /** The accepted call's session: the OpenAI face in its SIP mode, set up as accepted. */
  private start(session: z.infer<typeof AcceptParams>): void {
    const state = createOpenAISimulator(this.knobs, "openai", true);
    this.socket = new FaceSocket(this.phone, state, this.face());
    this.socket.feed({ type: "frame", text: JSON.stringify({ type: "session.update", session }) });
  }

  /**
   * Every event goes to the phone; the sidebands get all but the audio (it goes over the
   * call's media: assumed, as on a WebRTC call's sideband).
   */
  private face(): Face<OaiSimState, OaiSimInput, OaiSimEffect> {
    return {
      step: oaiStep,
      carryOut: (effect, socket) => {
        if (effect.type === "close") {
          socket.stop();
          this.end("ended", effect.reason);
          return;
        }
        const json = JSON.stringify(effect.message);
        socket.end.send(json);
        if (effect.message.type === "response.output_audio.delta") return;
        for (const sideband of this.sidebands) {
          try {
            sideband.send(json);
          } catch {
            // a sideband going away misses what it would have seen
          }
        }
      },
    };
  }

  /** The call is over: its session stops, its sidebands and phone are closed. */
  private end(state: SipCallState, reason: string): void {
    if (this.state !== "accepted") return;
    this.state = state;
    this.socket?.stop();
    for (const sideband of this.sidebands) closeQuietly(sideband, 1000, reason);
    this.sidebands.clear();
    this.phone.close(1000, reason);
  }
}
