/**
 * A fake liveline for the carrier stand-in's unit tests: a voice webhook that checks the
 * signature and answers TwiML, and an in-memory WebSocket pair (the stand-in's end and
 * liveline's end) delivering frames asynchronously, as a network would.
 */
import { isValidTwilioSignature } from "../../../src/telephony/twilio/signature.js";
import { connectStreamTwiml } from "../../../src/telephony/twilio/twiml.js";

export const AUTH_TOKEN = "test-auth-token";
export const BASE_URL = "https://gw.example";
export const STREAM_URL = "wss://gw.example/v1/telephony/twilio/stream/s1";

export class FakeSocket extends EventTarget {
  readyState = 1;
  peer: FakeSocket | null = null;
  /** Frames this end sent, in order. */
  readonly sent: string[] = [];

  send(data: string | ArrayBuffer): void {
    if (this.readyState !== 1) throw new Error("send on a closed socket");
    if (typeof data === "string") this.sent.push(data);
    const peer = this.peer;
    queueMicrotask(() => {
      if (peer?.readyState === 1) peer.dispatchEvent(new MessageEvent("message", { data }));
    });
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    const peer = this.peer;
    queueMicrotask(() => {
      this.dispatchEvent(Object.assign(new Event("close"), { code, reason }));
      if (peer && peer.readyState !== 3) {
        peer.readyState = 3;
        peer.dispatchEvent(Object.assign(new Event("close"), { code, reason }));
      }
    });
  }

  /** What this end sent, parsed. */
  messages(): Array<Record<string, unknown>> {
    return this.sent.map((s) => JSON.parse(s) as Record<string, unknown>);
  }
}

export interface FakeLine {
  transport: {
    fetch(request: Request): Promise<Response>;
    openWebSocket(url: string): Promise<WebSocket>;
  };
  /** The webhook requests received, with whether their signature was valid. */
  webhooks: Array<{ request: Request; form: URLSearchParams; signed: boolean }>;
  /** liveline's end of the stream socket, once opened. */
  liveline(): FakeSocket;
  /** The carrier's end (what the stand-in sent is its `sent`). */
  carrier(): FakeSocket;
  openedUrls: string[];
}

export function fakeLine(answer: (form: URLSearchParams) => Response = defaultAnswer): FakeLine {
  const webhooks: FakeLine["webhooks"] = [];
  const openedUrls: string[] = [];
  let server: FakeSocket | null = null;
  let client: FakeSocket | null = null;
  return {
    webhooks,
    openedUrls,
    liveline: () => {
      if (server === null) throw new Error("no stream opened");
      return server;
    },
    carrier: () => {
      if (client === null) throw new Error("no stream opened");
      return client;
    },
    transport: {
      async fetch(request) {
        const form = new URLSearchParams(await request.clone().text());
        const signed = await isValidTwilioSignature(
          AUTH_TOKEN,
          request.url,
          form,
          request.headers.get("X-Twilio-Signature"),
        );
        webhooks.push({ request, form, signed });
        return signed ? answer(form) : new Response("bad signature", { status: 403 });
      },
      async openWebSocket(url) {
        openedUrls.push(url);
        client = new FakeSocket();
        server = new FakeSocket();
        client.peer = server;
        server.peer = client;
        return client as unknown as WebSocket;
      },
    },
  };
}

function defaultAnswer(): Response {
  return new Response(connectStreamTwiml({ streamUrl: STREAM_URL, parameters: { token: "t0k" } }), {
    headers: { "Content-Type": "text/xml" },
  });
}
