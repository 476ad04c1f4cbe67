/**
 * One contract, every carrier (hono's runtime-tests pattern, as test/providers/contract-suite.ts does for
 * the models): a phone call placed through the carrier's stand-in, the same scenarios, the
 * same outcome in the session's durable history, on the simulator's faces. A carrier is one
 * line in src/carrier-registry.ts and a driver here; it skips a scenario only with a written reason.
 *
 * What every carrier's call must do: be greeted once; answer a question that calls a server
 * tool once; on a barge-in, stop the caller's playback within one chunk and tell the session
 * what was heard (OpenAI truncates there); refuse forged webhooks, wrong or reused stream
 * tokens and streams for an ended session, and count and skip malformed media; end the
 * call's session when the caller hangs up, the carrier says the call is over, or a dropped
 * stream does not come back within the grace; connect a dropped stream again where the
 * carrier can (its `reattach`), never greeting twice; and across a crash of the session's
 * object, keep the call going and its record valid. The door's own details
 * (TwiML, the signature's rules, body limits, the token store) are the carrier's own tests
 * (test/telephony/twilio-door.workers.test.ts for Twilio; test/telephony/<carrier>/ for the others).
 * Telnyx, Plivo and Vonage share one driver over their shared stand-in engine; the last
 * describe is the A-law call (Telnyx) and its control.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CAPPED_LINE } from "../../scripts/measurement/lines.js";
import { alawToPcm16, pcm16ToMulaw } from "../../src/audio/g711.js";
import { LawCheck } from "../../src/audio/law-check.js";
import { lineRate } from "../../src/audio/line-audio.js";
import { CARRIERS, type CarrierName } from "../../src/carrier-registry.js";
import type { CoreInput } from "../../src/core/inputs.js";
import type {
  LineFrame,
  PhoneLineStandIn,
  StreamAnswerOf,
} from "../../src/simulator/phone-line.js";
import { PlivoCallStandIn, plivoHangupWebhook } from "../../src/simulator/plivo/index.js";
import { TelnyxCallStandIn, telnyxStatusWebhook } from "../../src/simulator/telnyx/index.js";
import {
  CallSetupError,
  type CarrierTransport,
  fetcherTransport,
  TwilioCallStandIn,
} from "../../src/simulator/twilio/index.js";
import { BARGE_IN_MS } from "../../src/simulator/vad.js";
import { VonageCallStandIn, vonageEventWebhook } from "../../src/simulator/vonage/index.js";
import { phoneCallSessionId } from "../../src/telephony/carrier-contract.js";
import { plivoCallUuid } from "../../src/telephony/plivo/inbound-call.js";
import { telnyxCallSid } from "../../src/telephony/telnyx/inbound-call.js";
import { twilioSignature } from "../../src/telephony/twilio/signature.js";
import { vonageCallUuid } from "../../src/telephony/vonage/inbound-call.js";
import type { ModelCommand } from "../../src/vocabulary/model.js";
import { BASE, newCallSid, twilioCallParams, withKey } from "../support/gateway.js";

type Knobs = Record<string, string | number>;

/** A call in progress, as the contract drives it (whatever carrier carries it). */
interface CallUnderContract {
  /** The call's liveline session. */
  readonly sessionId: string;
  /** What the carrier stand-in saw liveline do that the carrier would refuse, in words. */
  readonly violations: readonly string[];
  /** Milliseconds of liveline's audio the caller has heard. */
  heardMs(): number;
  /** How many times liveline told the carrier to drop the caller's playback. */
  clears(): number;
  /**
   * How the carrier's stream closed (null: still open); `unheardMs`: liveline's audio still
   * queued then, which the caller never hears.
   */
  closed(): { code: number; reason: string; unheardMs: number } | null;
  /** Resolves when `predicate` holds (checked on every message and playback step). */
  waitFor(predicate: () => boolean, timeoutMs: number): Promise<void>;
  /**
   * The caller speaks for `speechMs` (loud enough for any VAD), then is silent for
   * `silenceMs`, sent at once: the model's VAD is timed by the audio, not the clock.
   */
  say(speechMs: number, silenceMs: number): Promise<void>;
  /**
   * The caller speaks over what plays, chunk by chunk at real time, until liveline clears the
   * playback (or `maxMs` of speech): how many of the carrier's chunks were sent by then.
   */
  speakUntilCleared(maxMs: number): Promise<{ chunks: number; chunkMs: number }>;
  /** Malformed media on the call's stream (bad audio, an unknown event): how many sent. */
  sendMalformed(): number;
  /** The caller hangs up, as the carrier says it. */
  hangUp(): void;
  /**
   * The stream's socket goes away without a word from the carrier; `comeBack` false: the
   * carrier then cannot reach liveline again (its reconnect fails, as in an outage).
   */
  drop(comeBack?: boolean): void;
  /** How many streams the call has started (a carrier that reconnects starts another). */
  streams(): number;
  /** The carrier's own notice that the call is over (a status callback): its HTTP status. */
  over(): Promise<number>;
}

/** A stream the door closed before anything was heard. */
interface RefusedStream {
  sessionId: string;
  closed: { code: number; reason: string };
  /** How many messages liveline sent on the stream before closing it. */
  messages: number;
}

interface CarrierDriver {
  /** A signed call through the carrier stand-in, its stream started with the answered token. */
  placeCall(knobs: Knobs, line?: string): Promise<CallUnderContract>;
  /**
   * A call's webhook unsigned, and signed with the wrong key: each HTTP status, and the
   * session the call would have had.
   */
  forgedWebhooks(knobs: Knobs): Promise<{ statuses: number[]; sessionId: string }>;
  /** A call whose stream presents a token liveline never issued. */
  wrongToken(knobs: Knobs): Promise<RefusedStream>;
  /** A second stream presenting the token `call`'s stream already used. */
  reusedToken(call: CallUnderContract): Promise<RefusedStream>;
  /**
   * A call whose session ends between its webhook and its stream: what refused the stream
   * (null: it started and stayed up).
   */
  streamAfterEnd(knobs: Knobs): Promise<{ sessionId: string; refusal: string | null }>;
  /** A call answered (its webhook) whose stream never starts. */
  ringOnly(knobs: Knobs): Promise<{ sessionId: string; over(): Promise<number> }>;
}

/** Every scenario of the contract, by name (a skip names one). */
const SCENARIOS = [
  "a call is greeted once",
  "a question that calls a server tool is answered once",
  "a barge-in clears the caller's playback within a chunk and says what was heard",
  "a forged webhook is refused and creates nothing",
  "a wrong or reused stream token closes the stream, and nothing is recorded",
  "malformed media is counted and skipped, and the call goes on",
  "a stream for an ended session is refused",
  "a hang-up ends the call's session, its history kept",
  "a dropped stream is connected again where the carrier can, not greeted twice, else the call ends",
  "a dropped stream that does not come back ends the call's session within the grace",
  "the carrier's call-over notice ends a call whose stream never started",
  "a crash of the session's object mid-call: the call goes on, the record stays valid",
  "a cap ends the call once its goodbye has played",
] as const;
type Scenario = (typeof SCENARIOS)[number];

interface CarrierUnderContract {
  name: CarrierName;
  driver: CarrierDriver;
  /** Scenario → why this carrier cannot run it. */
  skips: Partial<Record<Scenario, string>>;
  /** Face → why this carrier's run on it would prove nothing another run does not. */
  faceSkips?: Partial<Record<string, string>>;
}

interface Face {
  name: string;
  knobs: Knobs;
  /** The face's wire cuts the model's context at what was heard (OpenAI's truncate). */
  truncates: boolean;
  /** Scenario → why it is not run on this face. */
  skips: Partial<Record<Scenario, string>>;
}

/** Decided at the door, before a model is reached: the face changes nothing. */
const AT_THE_DOOR = "decided by the door before any model is reached: run once, on the gemini face";

const FACES: Face[] = [
  // The 2.x default: turnComplete right after a toolCall (the race).
  { name: "gemini", knobs: { wire: "gemini", race: 1 }, truncates: false, skips: {} },
  {
    name: "openai",
    knobs: { wire: "openai" },
    truncates: true,
    skips: {
      "a forged webhook is refused and creates nothing": AT_THE_DOOR,
      "a wrong or reused stream token closes the stream, and nothing is recorded": AT_THE_DOOR,
      "a stream for an ended session is refused": AT_THE_DOOR,
      "the carrier's call-over notice ends a call whose stream never started": AT_THE_DOOR,
    },
  },
];

// --- Twilio --------------------------------------------------------------------------------

const TWILIO_AUTH_TOKEN = env.TWILIO_AUTH_TOKEN as string;
const TWILIO_VOICE = `${BASE}/v1/telephony/twilio/voice`;
const TWILIO_STATUS = `${BASE}/v1/telephony/twilio/status`;
/** Twilio's chunk: 20 ms of μ-law at 8 kHz. */
const TWILIO_CHUNK_MS = 20;

/** The number's voice URL with the simulator's knobs (signed as given, as Twilio does). */
const twilioVoiceUrl = (knobs: Knobs) =>
  `${TWILIO_VOICE}?simulator=${encodeURIComponent(
    new URLSearchParams(Object.entries(knobs).map(([k, v]) => [k, String(v)])).toString(),
  )}`;

/** A tone loud enough for any VAD (RMS about 4,200 of 32,768), as μ-law 8 kHz. */
function spokenMulaw(ms: number): Uint8Array {
  const pcm = new Int16Array(ms * 8);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return pcm16ToMulaw(pcm);
}
const silentMulaw = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

/**
 * The fetch transport into this Worker, with the sockets it opened kept (so the driver can
 * say what the stand-in never would) and ways to tamper with the way in: the webhook's
 * signature dropped, its answer rewritten or replaced, something done before the stream opens.
 */
function tappedTransport(
  tamper: {
    unsigned?: boolean;
    /** The headers `unsigned` removes (Twilio's signature unless given). */
    signatureHeaders?: readonly string[];
    answer?: (body: string) => string;
    replayAnswer?: string;
    beforeStream?: () => Promise<void>;
    /** Set: every request fails as if liveline could not be reached. */
    offline?: boolean;
  } = {},
) {
  const inner = fetcherTransport(exports.default);
  const sockets: WebSocket[] = [];
  const answers: string[] = [];
  const transport: CarrierTransport = {
    async fetch(request) {
      if (tamper.offline === true) throw new Error("liveline cannot be reached");
      if (tamper.replayAnswer !== undefined)
        return new Response(tamper.replayAnswer, { headers: { "Content-Type": "text/xml" } });
      const headers = new Headers(request.headers);
      if (tamper.unsigned)
        for (const name of tamper.signatureHeaders ?? ["X-Twilio-Signature"]) headers.delete(name);
      const res = await inner.fetch(new Request(request, { headers }));
      if (!res.ok) return res;
      const body = await res.text();
      answers.push(body);
      return new Response(tamper.answer ? tamper.answer(body) : body, {
        status: res.status,
        headers: res.headers,
      });
    },
    async openWebSocket(url) {
      await tamper.beforeStream?.();
      const socket = await inner.openWebSocket(url);
      sockets.push(socket);
      return socket;
    },
  };
  return { transport, sockets, answers };
}

/** A webhook as Twilio posts it: form-encoded, signed over the exact URL. */
async function postSigned(url: string, params: Record<string, string>): Promise<Response> {
  return exports.default.fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": await twilioSignature(TWILIO_AUTH_TOKEN, url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}

async function twilioStatus(callSid: string, callStatus: string): Promise<number> {
  const res = await postSigned(TWILIO_STATUS, {
    AccountSid: "AC00000000000000000000000000000001",
    CallSid: callSid,
    CallStatus: callStatus,
    ApiVersion: "2010-04-01",
  });
  return res.status;
}

class TwilioCall implements CallUnderContract {
  constructor(
    private readonly standIn: TwilioCallStandIn,
    private readonly sockets: WebSocket[],
    readonly sessionId: string,
    readonly callSid: string,
    /** The voice webhook's TwiML answer (with the stream's token). */
    readonly answer: string,
    /** The transport's way in (set `offline` to cut liveline off). */
    private readonly tamper: { offline?: boolean },
  ) {}

  /** The call's current stream's socket. */
  private get socket(): WebSocket {
    return this.sockets.at(-1)!;
  }

  get violations(): readonly string[] {
    return this.standIn.violations;
  }
  heardMs(): number {
    return this.standIn.heardMs();
  }
  clears(): number {
    return this.standIn.clears;
  }
  closed(): { code: number; reason: string; unheardMs: number } | null {
    return this.standIn.closed;
  }
  waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
    return this.standIn.waitFor(predicate, timeoutMs);
  }
  async say(speechMs: number, silenceMs: number): Promise<void> {
    await this.standIn.sendAudio(spokenMulaw(speechMs), { realTime: false });
    await this.standIn.sendAudio(silentMulaw(silenceMs), { realTime: false });
  }
  async speakUntilCleared(maxMs: number): Promise<{ chunks: number; chunkMs: number }> {
    const before = this.standIn.clears;
    const speech = spokenMulaw(maxMs);
    const bytes = TWILIO_CHUNK_MS * 8;
    const startedAt = Date.now();
    let chunks = 0;
    // Each chunk when its 20 ms have been spoken; none once the clear has come.
    while (chunks * TWILIO_CHUNK_MS < maxMs) {
      const wait = startedAt + (chunks + 1) * TWILIO_CHUNK_MS - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (this.standIn.clears !== before) break;
      const chunk = speech.subarray(chunks * bytes, (chunks + 1) * bytes);
      await this.standIn.sendAudio(chunk, { realTime: false });
      chunks++;
    }
    return { chunks, chunkMs: TWILIO_CHUNK_MS };
  }
  sendMalformed(): number {
    const streamSid = this.standIn.call?.streamSid ?? "";
    const malformed = [
      // Audio that is not base64.
      {
        event: "media",
        sequenceNumber: "900",
        streamSid,
        media: { track: "inbound", chunk: "900", timestamp: "18000", payload: "not base64!" },
      },
      // An event Twilio does not send.
      { event: "hello", sequenceNumber: "901", streamSid },
    ];
    for (const m of malformed) this.socket.send(JSON.stringify(m));
    return malformed.length;
  }
  hangUp(): void {
    this.standIn.hangUp();
  }
  drop(comeBack = true): void {
    if (!comeBack) this.tamper.offline = true;
    this.socket.close(1001, "carrier went away");
  }
  streams(): number {
    return this.standIn.streams.length;
  }
  over(): Promise<number> {
    return twilioStatus(this.callSid, "completed");
  }
}

/**
 * The stand-in on `transport` places a call from +15550001111 to the greeter's line: signed
 * with the test deployment's token unless `authToken` says otherwise.
 */
function placeThrough(
  transport: CarrierTransport,
  call: { voiceUrl?: string; authToken?: string; callSid?: string; to?: string },
) {
  const standIn = new TwilioCallStandIn({ transport, allowInsecureStream: true });
  const placing = standIn.placeCall({
    baseUrl: BASE,
    authToken: TWILIO_AUTH_TOKEN,
    from: "+15550001111",
    to: "+15550002222",
    ...call,
  });
  return { standIn, placing };
}

const twilio: CarrierDriver = {
  async placeCall(knobs, line) {
    const tamper: { offline?: boolean } = {};
    const { transport, sockets, answers } = tappedTransport(tamper);
    const { standIn, placing } = placeThrough(transport, {
      voiceUrl: twilioVoiceUrl(knobs),
      ...(line === undefined ? {} : { to: line }),
    });
    const placed = await placing;
    const sessionId = placed.streamUrl.split("/").at(-1)!;
    return new TwilioCall(standIn, sockets, sessionId, placed.callSid, answers[0]!, tamper);
  },

  async forgedWebhooks(knobs) {
    const callSid = newCallSid();
    const statuses: number[] = [];
    const attempts = [
      { tamper: { unsigned: true }, authToken: TWILIO_AUTH_TOKEN },
      { tamper: {}, authToken: "not-the-auth-token" },
    ];
    for (const { tamper, authToken } of attempts) {
      const { transport } = tappedTransport(tamper);
      const refused = await placeThrough(transport, {
        voiceUrl: twilioVoiceUrl(knobs),
        authToken,
        callSid,
      }).placing.then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(CallSetupError);
      statuses.push((refused as CallSetupError).answer?.status ?? 0);
    }
    return { statuses, sessionId: await phoneCallSessionId("twilio", callSid) };
  },

  async wrongToken(knobs) {
    const { transport } = tappedTransport({
      answer: (body) => {
        const forged = body.replace(
          /(name="token" value=")[^"]+/,
          "$1not-the-token-not-the-token-x",
        );
        if (forged === body) throw new Error(`no token in the answer: ${body}`);
        return forged;
      },
    });
    const { standIn, placing } = placeThrough(transport, { voiceUrl: twilioVoiceUrl(knobs) });
    const placed = await placing;
    await standIn.waitFor((c) => c.closed !== null, 5000);
    return {
      sessionId: placed.streamUrl.split("/").at(-1)!,
      closed: standIn.closed!,
      messages: standIn.received.length + standIn.violations.length,
    };
  },

  async reusedToken(call) {
    if (!(call instanceof TwilioCall)) throw new Error("not a Twilio call");
    // Someone who saw the call's TwiML: the same answer, the same call, a second stream.
    const { transport } = tappedTransport({ replayAnswer: call.answer });
    const { standIn, placing } = placeThrough(transport, { callSid: call.callSid });
    await placing;
    await standIn.waitFor((c) => c.closed !== null, 5000);
    return {
      sessionId: call.sessionId,
      closed: standIn.closed!,
      messages: standIn.received.length + standIn.violations.length,
    };
  },

  async streamAfterEnd(knobs) {
    let sessionId = "";
    const { transport, answers } = tappedTransport({
      beforeStream: async () => {
        sessionId = /stream\/([0-9a-f-]{36})/.exec(answers[0] ?? "")?.[1] ?? "";
        const ended = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
          method: "DELETE",
          headers: withKey(),
        });
        expect(ended.status).toBe(200);
      },
    });
    const { standIn, placing } = placeThrough(transport, { voiceUrl: twilioVoiceUrl(knobs) });
    const refusal = await placing.then(
      async () => {
        // Upgraded after all: its start must be refused.
        await standIn.waitFor((c) => c.closed !== null, 2000).catch(() => undefined);
        return standIn.closed === null ? null : `closed: ${standIn.closed.reason}`;
      },
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    // Twilio's stream route refuses the upgrade itself.
    expect(refusal).toMatch(/answered 410/);
    return { sessionId, refusal };
  },

  async ringOnly(knobs) {
    const callSid = newCallSid();
    const url = twilioVoiceUrl(knobs);
    const res = await postSigned(url, twilioCallParams(callSid));
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<Connect( [^>]*)?><Stream url=/);
    return {
      sessionId: await phoneCallSessionId("twilio", callSid),
      over: () => twilioStatus(callSid, "no-answer"),
    };
  },
};

// --- the contract ----------------------------------------------------------------------------

// --- Telnyx, Plivo, Vonage: one driver over the shared line stand-in ------------------------

/** A carrier whose stand-in is a PhoneLineStandIn (src/simulator/<carrier>/). */
interface LineCarrierSpec<S extends PhoneLineStandIn<StreamAnswerOf>> {
  name: "telnyx" | "plivo" | "vonage";
  /** The headers that sign its webhooks (an unsigned one has none of them). */
  signatureHeaders: readonly string[];
  newStandIn(transport: CarrierTransport): S;
  /** Places a call from the caller to `to` (the greeter's line unless given), signed with `key`. */
  place(
    standIn: S,
    call: { voiceUrl: string; key?: string; callId?: string; to?: string },
  ): Promise<{ callId: string }>;
  /** A key that is not the deployment's. */
  wrongKey: string;
  newCallId(): string;
  /** The carrier's notice that the call is `status` (its status/hangup/event webhook). */
  statusWebhook(callId: string, status: "completed" | "no-answer"): Promise<Request>;
  /** The answer with a token liveline never issued in place of the one it gave. */
  forgeToken(answer: string): string;
  /** Messages the carrier never sends in that form (bad audio, an unknown event). */
  malformed(standIn: S): LineFrame[];
}

const voiceUrlOf = (carrier: string, knobs: Knobs) =>
  `${BASE}/v1/telephony/${carrier}/voice?simulator=${encodeURIComponent(
    new URLSearchParams(Object.entries(knobs).map(([k, v]) => [k, String(v)])).toString(),
  )}`;

/** A tone loud enough for any VAD (RMS about 4,200), as PCM16 at `rate`. */
function spokenPcm(ms: number, rate: number): Int16Array {
  const pcm = new Int16Array((ms * rate) / 1000);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / rate));
  return pcm;
}

class LineCall implements CallUnderContract {
  constructor(
    readonly standIn: PhoneLineStandIn<StreamAnswerOf>,
    private readonly spec: LineCarrierSpec<PhoneLineStandIn<StreamAnswerOf>>,
    readonly sessionId: string,
    readonly callId: string,
    readonly answer: string,
  ) {}

  get violations(): readonly string[] {
    return this.standIn.violations;
  }
  heardMs(): number {
    return this.standIn.heardMs();
  }
  clears(): number {
    return this.standIn.clears;
  }
  closed(): { code: number; reason: string; unheardMs: number } | null {
    return this.standIn.closed;
  }
  waitFor(predicate: () => boolean, timeoutMs: number): Promise<void> {
    return this.standIn.waitFor(predicate, timeoutMs);
  }
  private get rate(): number {
    return lineRate(this.standIn.callerCodec);
  }
  async say(speechMs: number, silenceMs: number): Promise<void> {
    await this.standIn.say(spokenPcm(speechMs, this.rate), { realTime: false });
    await this.standIn.say(new Int16Array((silenceMs * this.rate) / 1000), { realTime: false });
  }
  async speakUntilCleared(maxMs: number): Promise<{ chunks: number; chunkMs: number }> {
    const before = this.standIn.clears;
    const speech = spokenPcm(maxMs, this.rate);
    const samples = (LINE_CHUNK_MS * this.rate) / 1000;
    const startedAt = Date.now();
    let chunks = 0;
    while (chunks * LINE_CHUNK_MS < maxMs) {
      const wait = startedAt + (chunks + 1) * LINE_CHUNK_MS - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (this.standIn.clears !== before) break;
      await this.standIn.say(speech.subarray(chunks * samples, (chunks + 1) * samples), {
        realTime: false,
      });
      chunks++;
    }
    return { chunks, chunkMs: LINE_CHUNK_MS };
  }
  sendMalformed(): number {
    const frames = this.spec.malformed(this.standIn);
    for (const frame of frames) this.standIn.sendRaw(frame);
    return frames.length;
  }
  hangUp(): void {
    this.standIn.hangUp();
  }
  // A carrier that cannot reattach ends the call with its stream: `comeBack` changes nothing.
  drop(_comeBack = true): void {
    this.standIn.drop();
  }
  streams(): number {
    return this.standIn.streams;
  }
  async over(): Promise<number> {
    return (await exports.default.fetch(await this.spec.statusWebhook(this.callId, "completed")))
      .status;
  }
}

/** The carrier contract's driver for a carrier played by a PhoneLineStandIn. */
function lineDriver<S extends PhoneLineStandIn<StreamAnswerOf>>(
  spec: LineCarrierSpec<S>,
): CarrierDriver {
  const generic = spec as unknown as LineCarrierSpec<PhoneLineStandIn<StreamAnswerOf>>;
  const placeThrough = (
    transport: CarrierTransport,
    call: { voiceUrl: string; key?: string; callId?: string; to?: string },
  ) => {
    const standIn = spec.newStandIn(transport);
    return { standIn, placing: spec.place(standIn, call) };
  };
  return {
    async placeCall(knobs, line) {
      const { transport, answers } = tappedTransport();
      const { standIn, placing } = placeThrough(transport, {
        voiceUrl: voiceUrlOf(spec.name, knobs),
        ...(line === undefined ? {} : { to: line }),
      });
      const { callId } = await placing;
      const sessionId = standIn.call!.answer.streamUrl.split("/").at(-1)!;
      return new LineCall(standIn, generic, sessionId, callId, answers[0]!);
    },

    async forgedWebhooks(knobs) {
      const callId = spec.newCallId();
      const statuses: number[] = [];
      for (const { tamper, key } of [
        { tamper: { unsigned: true, signatureHeaders: spec.signatureHeaders }, key: undefined },
        { tamper: {}, key: spec.wrongKey },
      ]) {
        const { transport } = tappedTransport(tamper);
        const refused = await placeThrough(transport, {
          voiceUrl: voiceUrlOf(spec.name, knobs),
          callId,
          ...(key === undefined ? {} : { key }),
        }).placing.then(
          () => null,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(CallSetupError);
        statuses.push((refused as CallSetupError).answer?.status ?? 0);
      }
      return { statuses, sessionId: await phoneCallSessionId(spec.name, callId) };
    },

    async wrongToken(knobs) {
      const { transport } = tappedTransport({ answer: spec.forgeToken });
      const { standIn, placing } = placeThrough(transport, {
        voiceUrl: voiceUrlOf(spec.name, knobs),
      });
      await placing;
      await standIn.waitFor((c) => c.closed !== null, 5000);
      return {
        sessionId: standIn.call!.answer.streamUrl.split("/").at(-1)!,
        closed: standIn.closed!,
        messages: standIn.received.length + standIn.violations.length,
      };
    },

    async reusedToken(call) {
      if (!(call instanceof LineCall)) throw new Error(`not a ${spec.name} call`);
      // Someone who saw the call's answer: the same answer, the same call, a second stream.
      const { transport } = tappedTransport({ replayAnswer: call.answer });
      const { standIn, placing } = placeThrough(transport, {
        voiceUrl: voiceUrlOf(spec.name, {}),
        callId: call.callId,
      });
      await placing;
      await standIn.waitFor((c) => c.closed !== null, 5000);
      return {
        sessionId: call.sessionId,
        closed: standIn.closed!,
        messages: standIn.received.length + standIn.violations.length,
      };
    },

    async streamAfterEnd(knobs) {
      let sessionId = "";
      const { transport, answers } = tappedTransport({
        beforeStream: async () => {
          sessionId = /stream\/([0-9a-f-]{36})/.exec(answers[0] ?? "")?.[1] ?? "";
          const ended = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
            method: "DELETE",
            headers: withKey(),
          });
          expect(ended.status).toBe(200);
        },
      });
      const { standIn, placing } = placeThrough(transport, {
        voiceUrl: voiceUrlOf(spec.name, knobs),
      });
      const refusal = await placing.then(
        async () => {
          await standIn.waitFor((c) => c.closed !== null, 2000).catch(() => undefined);
          return standIn.closed === null ? null : `closed: ${standIn.closed.reason}`;
        },
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      // The stream route refuses the upgrade itself.
      expect(refusal).toMatch(/answered 410/);
      return { sessionId, refusal };
    },

    async ringOnly(knobs) {
      // The webhook alone, signed, through a transport that never opens the stream.
      const callId = spec.newCallId();
      let answered: Response | null = null;
      const transport: CarrierTransport = {
        async fetch(request) {
          answered = await exports.default.fetch(request);
          return answered.clone();
        },
        openWebSocket: async () => {
          throw new Error("the stream is never opened");
        },
      };
      await placeThrough(transport, {
        voiceUrl: voiceUrlOf(spec.name, knobs),
        callId,
      }).placing.catch(() => undefined);
      expect((answered as Response | null)?.status).toBe(200);
      return {
        sessionId: await phoneCallSessionId(spec.name, callId),
        over: async () =>
          (await exports.default.fetch(await spec.statusWebhook(callId, "no-answer"))).status,
      };
    },
  };
}

/** The carriers' 20 ms chunk. */
const LINE_CHUNK_MS = 20;
const CALLER = { from: "+15550001111", to: "+15550002222" };

/** The test deployment's Telnyx key pair (its public half is TELNYX_PUBLIC_KEY in vitest.config.ts). */
const TELNYX_TEST_PRIVATE_KEY = "MC4CAQAwBQYDK2VwBCIEIPwjsZWbzQ24tgIb6lMfHUAUSOMygqVSBuo+6mSr3WNl";
/** Another key pair's private half: a forger's. */
const TELNYX_OTHER_PRIVATE_KEY = "MC4CAQAwBQYDK2VwBCIEIBv6ObIekqIOMqnBDN/5MTB2lQxDGRANPPv7jIKvYvkp";
const PLIVO_AUTH_TOKEN = env.PLIVO_AUTH_TOKEN as string;
const VONAGE_SIGNATURE_SECRET = env.VONAGE_SIGNATURE_SECRET as string;

const telnyxSpec: LineCarrierSpec<TelnyxCallStandIn> = {
  name: "telnyx",
  signatureHeaders: ["telnyx-signature-ed25519", "telnyx-timestamp"],
  newStandIn: (transport) => new TelnyxCallStandIn({ transport, allowInsecureStream: true }),
  async place(standIn, call) {
    const placed = await standIn.placeCall({
      baseUrl: BASE,
      voiceUrl: call.voiceUrl,
      privateKey: call.key ?? TELNYX_TEST_PRIVATE_KEY,
      from: CALLER.from,
      to: call.to ?? CALLER.to,
      ...(call.callId === undefined ? {} : { callSid: call.callId }),
      accountSid: TELNYX_ACCOUNT,
    });
    return { callId: placed.callSid };
  },
  wrongKey: TELNYX_OTHER_PRIVATE_KEY,
  newCallId: telnyxCallSid,
  statusWebhook: (callSid, status) =>
    telnyxStatusWebhook({
      statusUrl: `${BASE}/v1/telephony/telnyx/status`,
      privateKey: TELNYX_TEST_PRIVATE_KEY,
      callSid,
      accountSid: TELNYX_ACCOUNT,
      status,
    }),
  forgeToken: (answer) => {
    const forged = answer.replace(/(name="token" value=")[^"]+/, "$1not-the-token-not-the-token-x");
    if (forged === answer) throw new Error(`no token in the answer: ${answer}`);
    return forged;
  },
  malformed: (standIn) => [
    // Audio that is not base64.
    JSON.stringify({
      event: "media",
      sequence_number: "900",
      stream_id: standIn.call?.streamId,
      media: { track: "inbound", chunk: "900", timestamp: "18000", payload: "not base64!" },
    }),
    // An event Telnyx does not send.
    JSON.stringify({ event: "hello", stream_id: standIn.call?.streamId }),
  ],
};
const TELNYX_ACCOUNT = "3e6f995f-85f7-4705-9741-53b116d28237";

const plivoSpec: LineCarrierSpec<PlivoCallStandIn> = {
  name: "plivo",
  signatureHeaders: ["X-Plivo-Signature-V3", "X-Plivo-Signature-V3-Nonce"],
  newStandIn: (transport) => new PlivoCallStandIn({ transport, allowInsecureStream: true }),
  async place(standIn, call) {
    const placed = await standIn.placeCall({
      baseUrl: BASE,
      answerUrl: call.voiceUrl,
      authToken: call.key ?? PLIVO_AUTH_TOKEN,
      from: CALLER.from,
      to: call.to ?? CALLER.to,
      ...(call.callId === undefined ? {} : { callUuid: call.callId }),
    });
    return { callId: placed.callUuid };
  },
  wrongKey: "not-the-plivo-auth-token",
  newCallId: plivoCallUuid,
  statusWebhook: (callUuid, status) =>
    plivoHangupWebhook({
      hangupUrl: `${BASE}/v1/telephony/plivo/status`,
      authToken: PLIVO_AUTH_TOKEN,
      callUuid,
      status,
    }),
  forgeToken: (answer) => {
    const forged = answer.replace(/(extraHeaders="token=)[0-9a-f]+/, `$1${"ab".repeat(32)}`);
    if (forged === answer) throw new Error(`no token in the answer: ${answer}`);
    return forged;
  },
  malformed: (standIn) => [
    JSON.stringify({
      event: "media",
      sequenceNumber: 900,
      streamId: standIn.call?.streamId,
      media: { track: "inbound", timestamp: "0", chunk: 900, payload: "not base64!" },
    }),
    JSON.stringify({ event: "hello", streamId: standIn.call?.streamId }),
  ],
};

const vonageSpec: LineCarrierSpec<VonageCallStandIn> = {
  name: "vonage",
  signatureHeaders: ["Authorization"],
  newStandIn: (transport) => new VonageCallStandIn({ transport, allowInsecureStream: true }),
  async place(standIn, call) {
    const placed = await standIn.placeCall({
      baseUrl: BASE,
      answerUrl: call.voiceUrl,
      signatureSecret: call.key ?? VONAGE_SIGNATURE_SECRET,
      from: CALLER.from,
      to: call.to ?? CALLER.to,
      ...(call.callId === undefined ? {} : { uuid: call.callId }),
    });
    return { callId: placed.uuid };
  },
  wrongKey: "not-the-vonage-signature-secret",
  newCallId: vonageCallUuid,
  statusWebhook: (uuid, status) =>
    vonageEventWebhook({
      eventUrl: `${BASE}/v1/telephony/vonage/status`,
      signatureSecret: VONAGE_SIGNATURE_SECRET,
      uuid,
      status: status === "no-answer" ? "unanswered" : status,
    }),
  forgeToken: (answer) => {
    const forged = answer.replace(/("token":")[^"]+/, "$1not-the-token-not-the-token-x");
    if (forged === answer) throw new Error(`no token in the answer: ${answer}`);
    return forged;
  },
  malformed: () => [
    // Half a sample: no 16-bit audio.
    new Uint8Array(641),
    JSON.stringify({ event: "websocket:hello" }),
  ],
};

/**
 * The OpenAI face changes the session's side (truncation, μ-law to the model), not the
 * carrier's wire, which the gemini face runs whole: Twilio runs μ-law to the model as it is,
 * Telnyx A-law through the tables; Plivo's μ-law path is Twilio's, Vonage's PCM16 the gemini
 * face's. One run each keeps the suite's wall time.
 */
const SAME_PATH_ON_OPENAI =
  "its wire runs whole on the gemini face, and its audio path to the OpenAI face is another carrier's (Plivo: Twilio's μ-law; Vonage: PCM16, as on gemini)";

/** Plivo and Vonage streams have no stop: the caller's hang-up is a close, like a drop. */
const NO_STOP =
  "its stream has no stop message: the caller's hang-up closes the socket, as a drop does (the carrier's hangup or event webhook then says the call is over)";

/** One entry per carrier of src/carrier-registry.ts: a carrier added there without a driver fails. */
const CARRIERS_UNDER_CONTRACT: CarrierUnderContract[] = [
  { name: "twilio", driver: twilio, skips: {} },
  { name: "telnyx", driver: lineDriver(telnyxSpec), skips: {} },
  {
    name: "plivo",
    driver: lineDriver(plivoSpec),
    skips: { "a hang-up ends the call's session, its history kept": NO_STOP },
    faceSkips: { openai: SAME_PATH_ON_OPENAI },
  },
  {
    name: "vonage",
    driver: lineDriver(vonageSpec),
    skips: { "a hang-up ends the call's session, its history kept": NO_STOP },
    faceSkips: { openai: SAME_PATH_ON_OPENAI },
  },
];

interface HistoryEvent {
  kind: string;
  turnId?: string;
  name?: string;
  callId?: string;
  reason?: string;
  text?: string;
  code?: string;
}

async function historyOf(sessionId: string): Promise<{ status: number; events: HistoryEvent[] }> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/history`, {
    headers: withKey(),
  });
  if (res.status !== 200) return { status: res.status, events: [] };
  return { status: 200, events: ((await res.json()) as { events: HistoryEvent[] }).events };
}

const ofKind = (events: HistoryEvent[], kind: string) => events.filter((e) => e.kind === kind);

/** The session's closing record (GET /v1/sessions/:id), once it has one. */
async function closingOf(sessionId: string): Promise<Record<string, unknown> | null> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}`, {
      headers: withKey(),
    });
    const body = (await res.json()) as { closing: { record: Record<string, unknown> } | null };
    if (body.closing !== null || Date.now() > deadline) return body.closing?.record ?? null;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** How many times each turn of the record ended (turn_complete or interrupted). */
function turnEnds(events: HistoryEvent[]): Map<string, number> {
  const ends = new Map<string, number>();
  for (const e of events)
    if (e.kind === "turn_complete" || e.kind === "interrupted")
      ends.set(e.turnId!, (ends.get(e.turnId!) ?? 0) + 1);
  return ends;
}

/** Every user turn of the record ended exactly once. */
function expectEveryTurnEndedOnce(events: HistoryEvent[]): void {
  const ends = turnEnds(events);
  const users = ofKind(events, "user");
  expect(users.length).toBeGreaterThan(0);
  for (const e of users) expect(ends.get(e.turnId!), JSON.stringify(events)).toBe(1);
}

/**
 * The record once it holds `users` user turns and every one of them has ended, read again
 * `settleMs` later (a second end or a repeated reply would be in it by then).
 */
async function settledHistory(
  sessionId: string,
  users = 1,
  settleMs = 100,
): Promise<HistoryEvent[]> {
  // Generous: on a loaded machine (eight agents on two cores) a turn can take seconds.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { events } = await historyOf(sessionId);
    const ends = turnEnds(events);
    const lines = ofKind(events, "user");
    if (lines.length >= users && lines.every((e) => ends.has(e.turnId!))) break;
    if (Date.now() > deadline)
      throw new Error(`the record did not settle: ${JSON.stringify(events.map((e) => e.kind))}`);
    await new Promise((r) => setTimeout(r, 40));
  }
  await new Promise((r) => setTimeout(r, settleMs));
  return (await historyOf(sessionId)).events;
}

/** Whether the session still takes clients: 200 open, 410 ended. */
async function tokenStatus(sessionId: string): Promise<number> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/token`, {
    method: "POST",
    headers: withKey(),
  });
  return res.status;
}

/** Waits until the session has ended (its token refused with 410). */
async function ended(sessionId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await tokenStatus(sessionId)) === 410) return;
    await new Promise((r) => setTimeout(r, 30));
  }
  throw new Error(`the session ${sessionId} did not end`);
}

async function timelineKinds(sessionId: string): Promise<string[]> {
  const res = await exports.default.fetch(`${BASE}/v1/sessions/${sessionId}/timeline`, {
    headers: withKey(),
  });
  return ((await res.json()) as { rows: { kind: string }[] }).rows.map((r) => r.kind);
}

/** What the session of a call took in and told its model, from the spy's installation on. */
interface ModelSpy {
  /** The caller's audio chunks the session took in. */
  audioIn: number;
  /** How many of them it had when the model interrupted its reply (null: it has not). */
  interruptedAt: number | null;
  /** Every `audio_played` told to the model, and the wire frames it became. */
  played: { ms: number; wire: string[] }[];
}

/**
 * Spies on a call's session: the caller's audio it takes in, when the model interrupts its
 * reply (Gemini's `interrupted`, OpenAI's `speech_started`), and what it tells the model the
 * caller heard — each `audio_played` and the wire frames it became on the current model
 * connection (OpenAI: `conversation.item.truncate`; Gemini: none). It reaches into the
 * session's object (its running session's interpreter and model link), so a rename there
 * breaks it loudly.
 */
async function spyOnModel(sessionId: string): Promise<ModelSpy> {
  const spy: ModelSpy = { audioIn: 0, interruptedAt: null, played: [] };
  const stub = env.SESSION.get(env.SESSION.idFromName(sessionId));
  await runInDurableObject(stub, (instance: unknown) => {
    type Adapter = { encode(command: ModelCommand): string[] };
    type Interpreter = { handleInput(input: CoreInput, direct?: boolean): void };
    const live = (
      instance as {
        running: { live: { interpreter: Interpreter; link: { adapter: Adapter | null } } | null };
      }
    ).running.live;
    const adapter = live?.link.adapter;
    if (!live || !adapter) throw new Error("the call's session has no model connection");
    const encode = adapter.encode.bind(adapter);
    adapter.encode = (command) => {
      const frames = encode(command);
      if (command.type === "audio_played") spy.played.push({ ms: command.ms, wire: frames });
      return frames;
    };
    const { interpreter } = live;
    const handleInput = interpreter.handleInput.bind(interpreter);
    interpreter.handleInput = (input, direct) => {
      if (input.type === "client_audio") spy.audioIn++;
      const cut =
        input.type === "model" &&
        (input.event.type === "interrupted" || input.event.type === "speech_started");
      if (cut && spy.interruptedAt === null) spy.interruptedAt = spy.audioIn;
      handleInput(input, direct);
    };
  });
  return spy;
}

const registered = new Map<string, Set<Scenario>>();

for (const carrier of CARRIERS_UNDER_CONTRACT) {
  for (const face of FACES) {
    const run = `${carrier.name} on ${face.name}`;
    registered.set(run, new Set());
    const scenario = (name: Scenario, fn: () => Promise<void>, timeout = 40_000) => {
      registered.get(run)!.add(name);
      const reason = carrier.skips[name] ?? carrier.faceSkips?.[face.name] ?? face.skips[name];
      if (reason !== undefined) it.skip(`${name} (skipped: ${reason})`, fn);
      else it(name, { timeout }, fn);
    };
    const knobs = (more: Knobs = {}): Knobs => ({
      timeScale: 0,
      calls: "greeting:;*:",
      ...face.knobs,
      ...more,
    });
    const place = Object.assign((more: Knobs = {}) => carrier.driver.placeCall(knobs(more)), {
      /** A call to another of the app's numbers. */
      line: (line: string, more: Knobs = {}) => carrier.driver.placeCall(knobs(more), line),
    });

    describe(`the carrier contract: ${run}`, () => {
      scenario("a call is greeted once", async () => {
        const call = await place();
        await call.waitFor(() => call.heardMs() > 0, 5000);
        const events = await settledHistory(call.sessionId);
        // One line (the call's connection, said to the model), one reply, one end.
        expect(ofKind(events, "user")).toHaveLength(1);
        expectEveryTurnEndedOnce(events);
        expect(ofKind(events, "turn_complete")).toHaveLength(1);
        const said = events.filter((e) => e.kind === "transcript" || e.kind === "model_text");
        expect(said.length).toBeGreaterThan(0);
        expect(new Set(said.map((e) => e.text)).size).toBe(said.length);
        expect(
          said
            .map((e) => e.text)
            .join("")
            .match(/Hello!/g),
        ).toHaveLength(1);
        expect(ofKind(events, "error")).toEqual([]);
        expect(call.violations).toEqual([]);
        call.hangUp();
      });

      scenario("a question that calls a server tool is answered once", async () => {
        const call = await place({ calls: "greeting:;2:lookup_faq;*:" });
        await call.waitFor(() => call.heardMs() > 0, 5000);
        await settledHistory(call.sessionId);
        await call.say(300, 700);
        const events = await settledHistory(call.sessionId, 2, 200);
        expect(ofKind(events, "user")).toHaveLength(2);
        const calls = ofKind(events, "tool_call");
        expect(calls.map((e) => e.name)).toEqual(["lookup_faq"]);
        expect(ofKind(events, "tool_result")).toEqual([
          expect.objectContaining({ callId: calls[0]!.callId, name: "lookup_faq" }),
        ]);
        expectEveryTurnEndedOnce(events);
        expect(ofKind(events, "interrupted")).toEqual([]);
        expect(ofKind(events, "error")).toEqual([]);
        expect(call.violations).toEqual([]);
        call.hangUp();
      });

      scenario(
        "a barge-in clears the caller's playback within a chunk and says what was heard",
        async () => {
          // Paced at real time: the greeting is still being said while the caller hears it.
          // 600 ms in: at 300 ms the session was told 0 ms heard in 1 run of 12 (cause not
          // found: the line link counts a reply's playback from its marks, reset per reply).
          const call = await place({ timeScale: 1, msPerWord: 80, latencyMs: 0 });
          await call.waitFor(() => call.heardMs() > 600, 5000);
          const spy = await spyOnModel(call.sessionId);
          const { chunks, chunkMs } = await call.speakUntilCleared(1000);
          expect(call.clears()).toBe(1);
          // The model heard enough speech to barge in (BARGE_IN_MS, after resampling), and
          // the clear reached the carrier before the caller's next chunk but one.
          expect(spy.interruptedAt).not.toBeNull();
          expect(spy.interruptedAt! * chunkMs).toBeGreaterThanOrEqual(BARGE_IN_MS);
          expect(chunks - spy.interruptedAt!).toBeLessThanOrEqual(1);
          const heard = call.heardMs();
          await call.waitFor(() => spy.played.length > 0, 2000);
          // The session was told what was heard: some of the reply, no more than played.
          expect(spy.played).toHaveLength(1);
          const { ms, wire } = spy.played[0]!;
          expect(ms).toBeGreaterThan(0);
          expect(ms).toBeLessThanOrEqual(heard);
          if (face.truncates)
            expect(wire.map((f) => JSON.parse(f) as Record<string, unknown>)).toEqual([
              expect.objectContaining({ type: "conversation.item.truncate", audio_end_ms: ms }),
            ]);
          else expect(wire).toEqual([]);
          // The caller stops speaking: what they said is answered, each turn ended once.
          await call.say(0, 700);
          const events = await settledHistory(call.sessionId, 2);
          expect(ofKind(events, "interrupted")).toEqual([
            expect.objectContaining({ reason: "barge_in" }),
          ]);
          expectEveryTurnEndedOnce(events);
          expect(ofKind(events, "error")).toEqual([]);
          expect(call.violations).toEqual([]);
          call.hangUp();
        },
      );

      scenario("a forged webhook is refused and creates nothing", async () => {
        const { statuses, sessionId } = await carrier.driver.forgedWebhooks(knobs());
        expect(statuses).toEqual([403, 403]);
        expect((await historyOf(sessionId)).status).toBe(404);
      });

      scenario(
        "a wrong or reused stream token closes the stream, and nothing is recorded",
        async () => {
          const wrong = await carrier.driver.wrongToken(knobs());
          expect(wrong.closed.code).toBe(1008);
          expect(wrong.closed.reason).toMatch(/token is wrong or already used/);
          expect(wrong.messages).toBe(0);
          expect(await historyOf(wrong.sessionId)).toEqual({ status: 200, events: [] });

          const call = await place();
          await call.waitFor(() => call.heardMs() > 0, 5000);
          const reused = await carrier.driver.reusedToken(call);
          expect(reused.closed.code).toBe(1008);
          expect(reused.closed.reason).toMatch(/token is wrong or already used/);
          expect(reused.messages).toBe(0);
          // The call itself goes on; its record holds its own line only.
          expect(call.closed()).toBeNull();
          const events = await settledHistory(call.sessionId);
          expect(ofKind(events, "user")).toHaveLength(1);
          expect(call.violations).toEqual([]);
          call.hangUp();
        },
      );

      scenario("malformed media is counted and skipped, and the call goes on", async () => {
        const call = await place();
        await call.waitFor(() => call.heardMs() > 0, 5000);
        const sent = call.sendMalformed();
        await call.say(300, 700);
        const events = await settledHistory(call.sessionId, 2);
        expectEveryTurnEndedOnce(events);
        expect(ofKind(events, "error")).toEqual([]);
        const kinds = await timelineKinds(call.sessionId);
        expect(kinds.filter((k) => k === "BAD_FRAME")).toHaveLength(sent);
        expect(call.closed()).toBeNull();
        expect(call.violations).toEqual([]);
        call.hangUp();
      });

      scenario("a stream for an ended session is refused", async () => {
        const { sessionId, refusal } = await carrier.driver.streamAfterEnd(knobs());
        expect(refusal).not.toBeNull();
        // Nothing of the call was recorded: the session's record holds its end alone.
        const { status, events } = await historyOf(sessionId);
        expect(status).toBe(200);
        expect(events.map((e) => e.kind)).toEqual(["status"]);
      });

      // The caller hangs up (`stop`), or the carrier's socket drops and never comes back.
      for (const [name, leave, endedBy] of [
        [
          "a hang-up ends the call's session, its history kept",
          (c: CallUnderContract) => c.hangUp(),
          "caller_hung_up",
        ],
        [
          "a dropped stream that does not come back ends the call's session within the grace",
          (c: CallUnderContract) => c.drop(false),
          "stream_dropped",
        ],
      ] as const) {
        scenario(name, async () => {
          const call = await place();
          await call.waitFor(() => call.heardMs() > 0, 5000);
          await settledHistory(call.sessionId);
          expect(await tokenStatus(call.sessionId)).toBe(200);
          leave(call);
          await ended(call.sessionId);
          const events = await settledHistory(call.sessionId);
          expect(ofKind(events, "user")).toHaveLength(1);
          expectEveryTurnEndedOnce(events);
          expect(call.violations).toEqual([]);
          // The closing record says how the call ended.
          expect((await closingOf(call.sessionId))?.endedBy).toBe(endedBy);
        });
      }

      scenario(
        "a dropped stream is connected again where the carrier can, not greeted twice, else the call ends",
        async () => {
          const call = await place({ calls: "greeting:;*:" });
          await call.waitFor(() => call.heardMs() > 0, 5000);
          await settledHistory(call.sessionId);
          call.drop();
          if (CARRIERS[carrier.name].reattach.kind === "none") {
            await ended(call.sessionId);
            expect((await closingOf(call.sessionId))?.endedBy).toBe("stream_dropped");
            return;
          }
          // The carrier asked liveline, and the call came back on a new stream.
          await call.waitFor(() => call.streams() === 2 && call.closed() === null, 5000);
          const greeted = call.heardMs();
          await call.say(300, 700);
          await call.waitFor(() => call.heardMs() > greeted, 5000);
          const events = await settledHistory(call.sessionId, 2);
          // One greeting, one answer: the call went on, nothing said twice.
          expect(ofKind(events, "user")).toHaveLength(2);
          expectEveryTurnEndedOnce(events);
          expect(ofKind(events, "interrupted")).toEqual([]);
          const said = events
            .filter((e) => e.kind === "transcript" || e.kind === "model_text")
            .map((e) => e.text)
            .join("");
          expect(said.match(/Hello!/g)).toHaveLength(1);
          expect(await timelineKinds(call.sessionId)).toContain("CALL_RECONNECTED");
          expect(call.violations).toEqual([]);
          call.hangUp();
        },
      );

      scenario(
        "the carrier's call-over notice ends a call whose stream never started",
        async () => {
          const rung = await carrier.driver.ringOnly(knobs());
          expect(await tokenStatus(rung.sessionId)).toBe(200);
          expect(await rung.over()).toBe(204);
          expect(await tokenStatus(rung.sessionId)).toBe(410);
        },
      );

      scenario(
        "a crash of the session's object mid-call: the call goes on, the record stays valid",
        async () => {
          // Paced: the greeting is under way when the object dies.
          const call = await place({ timeScale: 0.2 });
          await call.waitFor(() => call.heardMs() > 0, 5000);
          const crashed = await exports.default.fetch(
            `${BASE}/v1/sessions/${call.sessionId}/restart`,
            { method: "POST", headers: withKey() },
          );
          expect(crashed.status).toBe(200);
          const reattaches = CARRIERS[carrier.name].reattach.kind !== "none";
          // Cut by the crash (not refused by policy, not ended normally), then, where the
          // carrier can, connected again.
          await call.waitFor(() => call.streams() === (reattaches ? 2 : 1), 5000);
          // The restarted object answers: the record is whole, every turn in it ended once
          // (the greeting cut mid-way ends once, upstream_lost).
          const events = await settledHistory(call.sessionId);
          expectEveryTurnEndedOnce(events);
          if (reattaches) {
            const heard = call.heardMs();
            await call.say(300, 700);
            await call.waitFor(() => call.heardMs() > heard, 8000);
            expectEveryTurnEndedOnce(await settledHistory(call.sessionId, 2));
            call.hangUp();
          }
          // The carrier's next webhook (the call is over) is answered, and ends the session.
          expect(await call.over()).toBe(204);
          expect(await tokenStatus(call.sessionId)).toBe(410);
          expect(call.violations).toEqual([]);
        },
      );

      scenario("a cap ends the call once its goodbye has played", async () => {
        // A line capped at one turn: the greeting is that turn. Its audio and the goodbye's
        // come at once (timeScale 0), so the goodbye is still queued at the carrier when the
        // session ends; closed at once, about 2 s of it would never be heard.
        const call = await place.line(CAPPED_LINE, { timeScale: 0, msPerWord: 40 });
        await call.waitFor(() => call.closed() !== null, 15_000);
        const closed = call.closed()!;
        expect(closed.code).toBe(1000);
        // Everything the caller was sent, the goodbye's last word included, was heard.
        expect(closed.unheardMs).toBe(0);
        const events = (await historyOf(call.sessionId)).events;
        const goodbye = events.find(
          (e) => e.kind === "user" && "source" in e && e.source === "limit",
        );
        expect(goodbye).toBeDefined();
        const said = events.filter(
          (e) =>
            (e.kind === "transcript" || e.kind === "model_text") && e.turnId === goodbye!.turnId,
        );
        expect(said.length).toBeGreaterThan(0);
        expect(ofKind(events, "session_limit")).toEqual([
          expect.objectContaining({ limit: "turns", value: 1 }),
        ]);
        expectEveryTurnEndedOnce(events);
        expect(events.at(-1)).toMatchObject({ kind: "status", state: "ended" });
        expect(await closingOf(call.sessionId)).toMatchObject({
          state: "ended",
          endedBy: "limit",
          limit: { limit: "turns", value: 1 },
        });
        expect(await tokenStatus(call.sessionId)).toBe(410);
        expect(call.violations).toEqual([]);
      });
    });
  }
}

// --- A-law: a line in the other law -----------------------------------------------------------

describe("an A-law call through the Telnyx stand-in (TELNYX_CODEC=PCMA in this deployment)", () => {
  const knobs: Knobs = { wire: "gemini", timeScale: 0, calls: "greeting:;2:lookup_faq;*:" };

  /** A Telnyx call whose stand-in speaks `lie` (a control) or the law its start declares. */
  async function placeAlaw(lie?: "PCMU") {
    const { transport, answers } = tappedTransport();
    const standIn = new TelnyxCallStandIn({
      transport,
      allowInsecureStream: true,
      // The trunk's own codec: μ-law, so the A-law comes from the answer's codec="PCMA".
      callCodec: "PCMU",
      ...(lie === undefined ? {} : { lieAbout: lie }),
    });
    await standIn.placeCall({
      baseUrl: BASE,
      voiceUrl: voiceUrlOf("telnyx", knobs),
      privateKey: TELNYX_TEST_PRIVATE_KEY,
      ...CALLER,
      accountSid: TELNYX_ACCOUNT,
    });
    const sessionId = standIn.call!.answer.streamUrl.split("/").at(-1)!;
    return { standIn, sessionId, answer: answers[0]! };
  }

  it("answers the caller's question once, and its reply decodes as A-law, not silence", {
    timeout: 20_000,
  }, async () => {
    const { standIn, sessionId, answer } = await placeAlaw();
    expect(answer).toMatch(/codec="PCMA" bidirectionalCodec="PCMA"/);
    await standIn.waitFor((c) => c.heardMs() > 0, 5000);
    await settledHistory(sessionId);
    await standIn.say(spokenPcm(300, 8000), { realTime: false });
    await standIn.say(new Int16Array(5600), { realTime: false });
    const events = await settledHistory(sessionId, 2, 200);
    expect(ofKind(events, "user")).toHaveLength(2);
    expect(ofKind(events, "tool_call").map((e) => e.name)).toEqual(["lookup_faq"]);
    expectEveryTurnEndedOnce(events);
    expect(ofKind(events, "error")).toEqual([]);
    // The reply's audio as the caller's line takes it, read as A-law: loud, and smooth as a
    // voice is (the simulator's 220 Hz tone); the same bytes read as μ-law are scrambled (the
    // check's control).
    const sent = standIn.received.flatMap((c) => (c.kind === "audio" ? [c.bytes] : []));
    const heard = new Uint8Array(sent.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const bytes of sent) {
      heard.set(bytes, at);
      at += bytes.length;
    }
    const pcm = alawToPcm16(heard);
    expect(Math.sqrt(pcm.reduce((n, x) => n + x * x, 0) / pcm.length)).toBeGreaterThan(500);
    const asAlaw = new LawCheck("alaw");
    asAlaw.push(heard);
    expect(asAlaw.verdict).toBe("consistent");
    const asMulaw = new LawCheck("mulaw");
    asMulaw.push(heard);
    expect(asMulaw.verdict).toBe("mismatch");
    // The caller's A-law was read as A-law: no line problem in the record.
    expect((await timelineKinds(sessionId)).filter((k) => k === "BAD_FRAME")).toEqual([]);
    expect(standIn.violations).toEqual([]);
    standIn.hangUp();
  });

  // Its own control: with the line link's law check switched off (checkLaw returning at once),
  // this test fails — no BAD_FRAME is ever recorded, and the garbled call goes on unnoticed.
  it("control: μ-law sent where the start declared A-law is detected as garbled", {
    timeout: 20_000,
  }, async () => {
    const { standIn, sessionId } = await placeAlaw("PCMU");
    await standIn.waitFor((c) => c.heardMs() > 0, 5000);
    await standIn.say(spokenPcm(300, 8000), { realTime: false });
    await standIn.say(new Int16Array(5600), { realTime: false });
    // Reported once, in the record: the audio went on as declared.
    for (let i = 0; i < 100; i++) {
      if ((await timelineKinds(sessionId)).includes("BAD_FRAME")) break;
      await new Promise((r) => setTimeout(r, 30));
    }
    expect((await timelineKinds(sessionId)).filter((k) => k === "BAD_FRAME")).toHaveLength(1);
    expect(standIn.closed).toBeNull();
    standIn.hangUp();
  });
});

it("every carrier liveline registers is under the contract", () => {
  expect(CARRIERS_UNDER_CONTRACT.map((c) => c.name).sort()).toEqual(Object.keys(CARRIERS).sort());
});

it("every carrier runs every scenario on every face, or skips it with a reason", () => {
  for (const [run, names] of registered)
    expect([...names].sort(), run).toEqual([...SCENARIOS].sort());
});
