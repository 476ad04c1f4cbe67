/**
 * A carrier as liveline's telephony door uses it. Adding one: a folder in src/telephony whose
 * carrier.ts exports a `Carrier` (its vars, its webhooks, its media stream, its call update),
 * and its line in src/carrier-registry.ts; the routes (/v1/telephony/<name>/…) and the
 * session's call handling follow, and test/telephony/carrier-contract.workers.test.ts takes a driver for it.
 *
 * Carriers' media streams are close variants of one shape — connected, start, media, mark,
 * dtmf, stop in; media, mark, clear out; 8 kHz G.711 (μ-law or A-law) or linear PCM — so each
 * reads its own messages into `CallStreamEvent` and speaks its own through its
 * `CallStreamLink` (most through telephony/line-link.ts, given the carrier's wire).
 */
import type { z } from "zod";
import { varsReader } from "../var-schemas.js";
import type { ClientLink } from "../vocabulary/client-link.js";
import type { AudioEncoding } from "../vocabulary/provider-adapter.js";

/** What every carrier's call keeps in its session's `metadata.telephony`, beside its own. */
export interface PhoneCallRecord {
  carrier: string;
  /** The caller's number and the number called, as the carrier gives them. */
  from: string;
  to: string;
  /** Placed by the demo page (its webhook signed by the Worker itself): never transferred. */
  demo?: true | undefined;
}

/** A message of a call's media stream, as the session takes it from any carrier. */
export type CallStreamEvent =
  | { kind: "connected" }
  /**
   * The stream starts: `callId` must be the session's call, `token` the one its answer gave.
   * `line`: the stream's audio as the start declares it, in the carrier's own words ("PCMA",
   * "audio/l16;rate=16000"); kept with the stream and given back to its `streamLink`.
   */
  | { kind: "start"; streamId: string; callId: string; token: string | null; line?: string }
  /** The caller's audio, in the carrier's encoding (base64 text, or a binary frame's bytes). */
  | { kind: "audio"; payload: string | Uint8Array }
  /** A mark the link sent has come back: the audio before it has played. */
  | { kind: "mark"; name: string }
  /** A key the caller pressed (0-9, *, #). */
  | { kind: "key"; digit: string }
  /** The caller hung up. */
  | { kind: "stop" }
  /** The carrier acknowledged a command of the link's (a clear): nothing for the session. */
  | { kind: "ack" };

/** A stream message read at the boundary, or what is wrong with it (for the timeline). */
export type CallStreamRead = { ok: true; event: CallStreamEvent } | { ok: false; problem: string };

/** What a call's stream link needs from the session it is bound to. */
export interface CallStreamHooks {
  /** How many ms of the interrupted reply the caller heard (the session's `played`). */
  played(ms: number): void;
  /** A turn ended (its reply may still be playing). */
  turnEnded(): void;
  /** The model asked a client tool of this call (a phone has no app to run it). */
  clientToolCall(callId: string, name: string): void;
  /** The last turn has ended and the caller has heard all of its reply. */
  drained(): void;
  /** The caller spoke over a reply, and what was still to play of it was dropped. */
  cut(): void;
  /**
   * The line's audio is not what its start declared (μ-law bytes on a stream declared A-law,
   * say): told once, for the record; the audio goes on as declared.
   */
  lineProblem(message: string): void;
}

/** A started stream as a client of its session: what it sends, and what it is told. */
export interface CallStreamLink extends ClientLink {
  /** An `audio` event's payload as the session's audio input, or null if unreadable. */
  callerAudio(payload: string | Uint8Array): Uint8Array | null;
  /** The caller's last audio was below speech: the line's silence between words. */
  readonly callerQuiet: boolean;
  /** A `mark` event: the audio sent before it has played. */
  marked(name: string): void;
  /** The last turn has ended and all of its reply has played (or was cleared). */
  readonly drained: boolean;
  /**
   * Hangs up once the caller has heard what the stream was sent (a session's last words, a
   * cap's goodbye), waiting no longer than that audio's length and a margin; a second close
   * hangs up at once.
   */
  close(code: number, reason: string): void;
}

/** A webhook's answer: the carrier's call-control document. */
export interface WebhookAnswer {
  body: string;
  contentType: string;
}

/** A ringing call, from the carrier's voice webhook. */
export type InboundCall<Call extends PhoneCallRecord> =
  | { ok: true; callId: string; call: Call }
  | { ok: false; problem: string };

export type TransferOutcome = { ok: true } | { ok: false; problem: string };

/**
 * Whether and how the carrier connects a call to its session again when the call's media
 * stream closes without a hang-up (a deploy or a runtime update resets the session's object
 * and with it every socket; a network blip): every carrier says which, so that the next one
 * added states it too.
 * - `answer_webhook`: the answer that connects the stream also names a webhook
 *   (`reconnectUrl`, POST /v1/telephony/<carrier>/reconnect) that the carrier calls, signed,
 *   when the stream ends while the call goes on; that webhook's answer connects the same call
 *   to the same session again (a fresh single-use token) or hangs it up. `callOf` reads its
 *   parameters: the carrier's id of the call, and whether the call is over by then.
 * - `none`: the carrier ends the call with its stream; `why` says so (the docs repeat it).
 *   Such a call has no grace: a stream that closes without a hang-up ends its session at once
 *   (`stream_dropped`), and so does a restart of its object.
 * Twilio reattaches (`<Connect action>`). Telnyx, Plivo and Vonage do not yet: liveline's
 * answer puts nothing after the stream, so each ends the call with it. Each could (TeXML and
 * Plivo XML run the verb after the stream once it stops, a `<Redirect>` there; a Vonage
 * `connect` with `eventType: "synchronous"` takes a new NCCO from its disconnected event), but
 * neither the answer nor the carrier's stand-in does that yet (their `why`).
 */
export type Reattach =
  | {
      kind: "answer_webhook";
      callOf(params: URLSearchParams): { callId: string; over: boolean } | null;
    }
  | { kind: "none"; why: string };

/** What a carrier does without its vars: its wire, its answers, its media stream. */
interface CarrierWire<Call extends PhoneCallRecord> {
  /** How a call whose stream closed is connected again, if it can be. */
  reattach: Reattach;
  /** The audio its media stream carries (G.711 μ-law for most). */
  audio: AudioEncoding;
  /**
   * The call a voice webhook announces (`demo`: placed by the demo page; `url`: the webhook's
   * URL, for a carrier whose later requests must point back at this Worker).
   */
  inboundCall(params: URLSearchParams, demo: boolean, url: string): InboundCall<Call>;
  /** The id of the call a status webhook says is over, or null while it goes on. */
  endedCall(params: URLSearchParams): string | null;
  /** The answer that hangs up (a call whose session cannot take it). */
  hangUp(): WebhookAnswer;
  /**
   * The answer that puts the call through to `number` (E.164), for a carrier whose transfer
   * fetches it from POST /v1/telephony/<name>/transfer?to=… (Plivo); absent: no such route.
   */
  dial?(number: string): WebhookAnswer;
  /** A media stream message, read as the carrier documents it. */
  readStreamEvent(data: string | ArrayBuffer): CallStreamRead;
  /** A started stream as the session's client, speaking the carrier's messages. */
  streamLink(
    ws: WebSocket,
    streamId: string,
    hooks: CallStreamHooks,
    sessionAudio: AudioEncoding,
    line?: string,
  ): CallStreamLink;
}

export interface Carrier<Shape extends z.ZodRawShape, Call extends PhoneCallRecord>
  extends CarrierWire<Call> {
  /** Its Worker vars (secrets included), composed into the Worker's configuration. */
  vars: z.ZodObject<Shape>;
  /** What its calls keep in `metadata.telephony` (read back at every start of the object). */
  call: z.ZodType<Call>;
  /** Why it cannot take calls under these vars (named settings, never values), or null. */
  unavailable(vars: z.output<z.ZodObject<Shape>>): string | null;
  /** The webhook's parameters if the carrier signed it for this URL, else null. */
  readWebhook(
    vars: z.output<z.ZodObject<Shape>>,
    request: Request,
  ): Promise<URLSearchParams | null>;
  /**
   * The voice webhook's answer: connect the call's audio to `streamUrl`, with the token (and
   * the call's id, for a carrier whose stream names its call only as the answer told it); with
   * `reconnectUrl` (a carrier that reattaches by `answer_webhook`), the carrier calls it when
   * the stream ends while the call goes on.
   */
  connect(
    streamUrl: string,
    token: string,
    vars: z.output<z.ZodObject<Shape>>,
    callId: string,
    reconnectUrl: string | null,
  ): WebhookAnswer;
  /** The carrier's id of this call (its session is named by it). */
  callId(call: Call): string;
  /** Why this call cannot be transferred under these vars, or null. */
  transferProblem(vars: z.output<z.ZodObject<Shape>>, call: Call): string | null;
  /** Moves the live call to `number` (E.164); never throws (a failure says why). */
  transfer(
    vars: z.output<z.ZodObject<Shape>>,
    call: Call,
    number: string,
  ): Promise<TransferOutcome>;
  /**
   * Ends the call through the carrier's REST API (with a deadline; never throws), after the
   * agent hung up and its stream was closed: where closing the stream alone may not end the
   * call. Absent: closing the stream ends it.
   */
  endCall?(vars: z.output<z.ZodObject<Shape>>, call: Call): Promise<TransferOutcome>;
}

/** A session's call, bound to its carrier and the Worker's vars: what its line works with. */
export interface CarrierCall extends PhoneCallRecord {
  /** The carrier's id of the call. */
  readonly id: string;
  /** The audio its media stream carries. */
  readonly audio: AudioEncoding;
  /** Why it cannot be transferred, or null. */
  transferProblem(): string | null;
  /** Moves the live call to `number` (E.164); never throws. */
  transfer(number: string): Promise<TransferOutcome>;
  /** Ends the call through the carrier's REST API, where it has one for that; never throws. */
  end?(): Promise<TransferOutcome>;
}

/** A carrier with its types erased, as the registry holds it: it reads the raw Worker env. */
export interface RegisteredCarrier extends CarrierWire<PhoneCallRecord> {
  vars: z.ZodObject<z.ZodRawShape>;
  unavailable(env: object): string | null;
  readWebhook(env: object, request: Request): Promise<URLSearchParams | null>;
  connect(
    streamUrl: string,
    token: string,
    env: object,
    callId: string,
    reconnectUrl: string | null,
  ): WebhookAnswer;
  /** A session's `metadata.telephony` as this carrier's call, or null if it is not one. */
  callOf(env: object, telephony: unknown): CarrierCall | null;
}

/** Erases a carrier's types: its vars are parsed from the raw env (once per env object). */
export function registeredCarrier<Shape extends z.ZodRawShape, Call extends PhoneCallRecord>(
  carrier: Carrier<Shape, Call>,
): RegisteredCarrier {
  const varsOf = varsReader(carrier.vars);
  const { audio, reattach, inboundCall, endedCall, hangUp, dial, readStreamEvent, streamLink } =
    carrier;
  const { endCall } = carrier;
  return {
    audio,
    reattach,
    inboundCall,
    endedCall,
    hangUp,
    ...(dial === undefined ? {} : { dial }),
    readStreamEvent,
    streamLink,
    vars: carrier.vars,
    unavailable: (env) => carrier.unavailable(varsOf(env)),
    readWebhook: (env, request) => carrier.readWebhook(varsOf(env), request),
    connect: (streamUrl, token, env, callId, reconnectUrl) =>
      carrier.connect(streamUrl, token, varsOf(env), callId, reconnectUrl),
    callOf(env, telephony) {
      const read = carrier.call.safeParse(telephony);
      if (!read.success) return null;
      const call = read.data;
      return {
        carrier: call.carrier,
        from: call.from,
        to: call.to,
        ...(call.demo === true ? { demo: true as const } : {}),
        id: carrier.callId(call),
        audio: carrier.audio,
        transferProblem: () => carrier.transferProblem(varsOf(env), call),
        transfer: (number) => carrier.transfer(varsOf(env), call, number),
        ...(endCall === undefined ? {} : { end: () => endCall(varsOf(env), call) }),
      };
    },
  };
}

/**
 * A call's session id, from its carrier and its id there: the same call always names the same
 * session, so a voice webhook the carrier retries finds the session it already made, and the
 * call's status callback can end it. A name-based UUID (version 8: SHA-256 of both).
 */
export async function phoneCallSessionId(carrier: string, callId: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${carrier}:${callId}`)),
  );
  const b = digest.slice(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
