import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { fetcherTransport, TwilioCallStandIn } from "../../src/simulator/twilio/index.js";

export const BASE = "http://liveline.test";
/** The test deployment's secrets, from vitest.config.ts's miniflare bindings. */
export const API_KEY = env.API_KEY as string;
export const TOKEN_SECRET = env.TOKEN_SECRET as string;
export const ALLOWED_ORIGIN = "https://app.example";

export const withKey = (key = API_KEY) => ({ Authorization: `Bearer ${key}` });

export interface Created {
  sessionId: string;
  token: string;
  wsUrl: string;
  expiresAt: string;
}

type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
const workerFetch: FetchLike = (input, init) => exports.default.fetch(input, init);

export async function createSession(
  body: Record<string, unknown> = {},
  fetcher: FetchLike = workerFetch,
  base = BASE,
): Promise<Created> {
  const res = await fetcher(`${base}/v1/sessions`, {
    method: "POST",
    headers: { ...withKey(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Created;
}

/** `ws://host/…` → `http://host/…`, for fetch-based upgrades. */
export const httpUrl = (wsUrl: string) => wsUrl.replace(/^ws/, "http");

export type Frame = Record<string, unknown> & { type: string };

/**
 * A client WebSocket that queues every message it gets. `status` frames (the model
 * connection's state) are kept aside in `statuses` unless `keepStatus` is set, so tests of
 * other frames need not step over them.
 */
export class Client {
  private readonly queue: Frame[] = [];
  private waiters: ((f: Frame) => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly statuses: Frame[] = [];
  /** Every text message as received, in order (byte-level checks). */
  readonly raw: string[] = [];

  constructor(
    readonly ws: WebSocket,
    keepStatus = false,
  ) {
    ws.binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      if (typeof e.data === "string") this.raw.push(e.data);
      const frame = JSON.parse(typeof e.data === "string" ? e.data : "{}") as Frame;
      if (frame.type === "status" && !keepStatus) {
        this.statuses.push(frame);
        return;
      }
      const waiter = this.waiters.shift();
      if (waiter) waiter(frame);
      else this.queue.push(frame);
    });
    this.closed = new Promise((resolve) => {
      ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }));
    });
    ws.accept();
  }

  /** The next message, or a rejection after `ms`. */
  next(ms = 2000): Promise<Frame> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const waiter = (f: Frame) => {
        clearTimeout(timer);
        resolve(f);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no message within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  send(data: string | ArrayBuffer | Record<string, unknown>): void {
    this.ws.send(
      typeof data === "object" && !(data instanceof ArrayBuffer) ? JSON.stringify(data) : data,
    );
  }

  /** Sends a ping and returns every frame up to and including the pong. */
  async pingThrough(ms = 2000): Promise<Frame[]> {
    this.send({ type: "ping" });
    const frames: Frame[] = [];
    for (;;) {
      const f = await this.next(ms);
      frames.push(f);
      if (f.type === "pong") return frames;
    }
  }

  close(): void {
    try {
      this.ws.close(1000, "test done");
    } catch {
      // already closed
    }
  }
}

/** Upgrades `url`; returns the raw response (for status checks). */
export function upgrade(url: string, headers: Record<string, string> = {}, fetcher = workerFetch) {
  return fetcher(url, { headers: { Upgrade: "websocket", ...headers } });
}

/** Upgrades `url` and expects 101; returns a connected client. */
export async function connect(
  url: string,
  headers: Record<string, string> = {},
  fetcher = workerFetch,
): Promise<Client> {
  const res = await upgrade(url, headers, fetcher);
  expect(res.status).toBe(101);
  expect(res.webSocket).toBeTruthy();
  return new Client(res.webSocket!);
}

/** A new session and a client connected to it, past its `ready` frame. */
export async function sessionWithClient(): Promise<{
  created: Created;
  client: Client;
  ready: Frame;
}> {
  const created = await createSession();
  const client = await connect(httpUrl(created.wsUrl));
  const ready = await client.next();
  expect(ready.type).toBe("ready");
  return { created, client, ready };
}

/** The JSON error body of a non-101 answer. */
export async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  expect(res.webSocket).toBeNull();
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(typeof body.error.message).toBe("string");
  return body.error;
}

/** A value nested `depth` levels deep, {"a":{"a":…}} (the limit for stored values is 64). */
export function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < depth; i++) {
    const next: Record<string, unknown> = {};
    at.a = next;
    at = next;
  }
  return root;
}

/** A fresh CallSid: each call is its own session (a call's session is named by its sid). */
export const newCallSid = () =>
  `CA${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;

/** A ringing inbound call's voice webhook parameters, as Twilio posts them. */
export const twilioCallParams = (callSid = newCallSid()) => ({
  AccountSid: "AC00000000000000000000000000000001",
  CallSid: callSid,
  From: "+15550001111",
  To: "+15550002222",
  CallStatus: "ringing",
  Direction: "inbound",
  ApiVersion: "2010-04-01",
});

/**
 * A call placed through the carrier stand-in against this Worker, with the simulator's
 * `knobs` in its voice URL, from +15550001111 to `to` (the greeter's line by default).
 */
export async function placeSimulatedCall(
  knobs: Record<string, string>,
  to = "+15550002222",
): Promise<{ call: TwilioCallStandIn; sessionId: string }> {
  const call = new TwilioCallStandIn({
    transport: fetcherTransport(exports.default),
    allowInsecureStream: true,
  });
  const query = encodeURIComponent(new URLSearchParams(knobs).toString());
  const placed = await call.placeCall({
    baseUrl: BASE,
    voiceUrl: `${BASE}/v1/telephony/twilio/voice?simulator=${query}`,
    authToken: env.TWILIO_AUTH_TOKEN as string,
    from: "+15550001111",
    to,
  });
  return { call, sessionId: placed.streamUrl.split("/").at(-1)! };
}
