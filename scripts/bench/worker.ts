/**
 * BENCH ONLY — never deployed. `npm run bench` serves this worker instead of the greeter app
 * (scripts/bench/wrangler.bench.toml): the whole of liveline, unchanged, plus two routes
 * that exist only here:
 *
 * - `GET /bench/model` (WebSocket): a probe model that speaks just enough of the Gemini Live
 *   wire to answer at once — setupComplete; a text turn gets one text part and turnComplete
 *   ("tool" in the text first calls lookup_faq and waits for its response); every audio
 *   chunk gets 20 ms of 24 kHz audio back (one generation, cut by `interrupted` when a text
 *   turn comes, as the service cuts a reply). Liveline reaches it as its `gemini` provider
 *   (GEMINI_LIVE_URL), so the gateway's cost is measured without the simulator's own work.
 * - `GET /bench/relay` (WebSocket): a bare pass-through Durable Object that opens the same
 *   probe model and relays every frame both ways with no logic: the baseline.
 * - `GET /bench/hibernating` (WebSocket): the same transcoding relay on the Hibernation API
 *   (`acceptWebSocket`, `webSocketMessage`): what holding a client's socket that way costs
 *   per frame (liveline's CLIENT_SOCKETS=hibernatable).
 * - `GET /bench/transcode` (WebSocket): a transcoding relay, the least work any Gemini
 *   gateway must do: it speaks liveline's client protocol (binary PCM in and out, `text`,
 *   `ready`, `text`/`turn_complete` frames) and the Gemini wire upstream (base64 JSON), with
 *   no log, no guard and no state beyond the sockets — the arm liveline's cost is held to.
 * - `GET /bench/phone-relay[?carrier=telnyx|plivo|vonage]` (WebSocket): the same for a phone
 *   call, a plain transcoding relay for a carrier's stream (Twilio's unless named): its audio
 *   (μ-law, A-law or 16 kHz PCM) → PCM16 16 kHz → base64 to the probe model, and its PCM16
 *   24 kHz back in the line's codec and the carrier's message, with the very functions
 *   liveline's call stream uses (src/audio), no mark, no log, no guard, no
 *   webhook: the arm each carrier's call path is held to.
 */
import { DurableObject } from "cloudflare:workers";
import worker from "../../examples/greeter/src/worker.js";
import { alawToPcm16, mulawToPcm16, pcm16ToAlaw, pcm16ToMulaw } from "../../src/audio/g711.js";
import { pcm16FromBytes, pcm16ToBytes } from "../../src/audio/pcm.js";
import { createResampler } from "../../src/audio/resample.js";
import { base64ToBytes, bytesToBase64 } from "../../src/providers/base64.js";

export { GeminiSimulatorObject, SessionObject } from "../../examples/greeter/src/worker.js";

interface BenchEnv {
  GEMINI_LIVE_URL: string;
  BENCH_MODEL: DurableObjectNamespace<ProbeModel>;
  BENCH_RELAY: DurableObjectNamespace<RelayObject>;
  BENCH_TRANSCODE: DurableObjectNamespace<TranscodingRelayObject>;
  BENCH_PHONE_RELAY: DurableObjectNamespace<PhoneRelayObject>;
  BENCH_HIBERNATING: DurableObjectNamespace<HibernatingRelayObject>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const AUDIO_OUT = bytesToBase64(new Uint8Array(960));

export class ProbeModel extends DurableObject<BenchEnv> {
  override async fetch(): Promise<Response> {
    const { 0: client, 1: server } = new WebSocketPair();
    server.accept();
    server.binaryType = "arraybuffer";
    const send = (m: unknown) => server.send(enc.encode(JSON.stringify(m)));
    let calls = 0;
    let waiting: string | null = null;
    /** Echoed audio is going out: one generation until input cuts it or the audio ends. */
    let streaming = false;
    const reply = (text: string) => {
      send({ serverContent: { modelTurn: { parts: [{ text }] } } });
      send({ serverContent: { generationComplete: true } });
      send({ serverContent: { turnComplete: true } });
    };
    server.addEventListener("message", (e) => {
      const msg = JSON.parse(
        typeof e.data === "string" ? e.data : dec.decode(e.data as ArrayBuffer),
      );
      if (msg.setup) return send({ setupComplete: {} });
      const turn = msg.clientContent;
      // A line comes as clientContent (2.x) or as realtimeInput.text (3.x, the default).
      const line: string | undefined = msg.realtimeInput?.text;
      if ((turn?.turnComplete || line !== undefined) && streaming) {
        // New input cuts the audio being echoed, as the service does: `interrupted` ends
        // that generation (else a gateway would see one endless reply nobody asked for).
        streaming = false;
        send({ serverContent: { interrupted: true } });
        send({ serverContent: { turnComplete: true } });
      }
      if (turn?.turnComplete || line !== undefined) {
        const text: string =
          line ??
          (turn.turns ?? [])
            .flatMap((t: { parts?: { text?: string }[] }) => t.parts ?? [])
            .map((p: { text?: string }) => p.text ?? "")
            .join("");
        if (text.includes("tool")) {
          waiting = `bench-call-${++calls}`;
          send({
            toolCall: {
              functionCalls: [{ id: waiting, name: "lookup_faq", args: { question: "hours?" } }],
            },
          });
          return;
        }
        return reply(`echo ${text}`);
      }
      if (msg.toolResponse && waiting !== null) {
        waiting = null;
        return reply("the tool said so");
      }
      if (msg.realtimeInput?.audioStreamEnd) {
        streaming = false;
        send({ serverContent: { inputTranscription: { text: "", finished: true } } });
        send({ serverContent: { generationComplete: true } });
        send({ serverContent: { turnComplete: true } });
        return;
      }
      const audio = msg.realtimeInput?.audio ?? msg.realtimeInput?.mediaChunks?.[0];
      if (audio) {
        streaming = true;
        send({ serverContent: { inputTranscription: { text: "." } } });
        // The chunk's first 6 bytes (8 base64 characters) come back first in the echo: the
        // bench pairs each echo with its chunk by the id it wrote there.
        const data = `${String(audio.data ?? "").slice(0, 8)}${AUDIO_OUT.slice(8)}`;
        send({
          serverContent: {
            modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data } }] },
          },
        });
      }
    });
    return new Response(null, { status: 101, webSocket: client });
  }
}

/**
 * A relay's two sockets: the probe model's (opened) and the client's (accepted), each closing
 * the other; null when the probe cannot be reached.
 */
async function relaySockets(
  env: BenchEnv,
): Promise<{ upstream: WebSocket; server: WebSocket; client: WebSocket } | null> {
  const res = await fetch(env.GEMINI_LIVE_URL, { headers: { Upgrade: "websocket" } });
  const upstream = res.webSocket;
  if (!upstream) return null;
  upstream.accept();
  upstream.binaryType = "arraybuffer";
  const { 0: client, 1: server } = new WebSocketPair();
  server.accept();
  server.binaryType = "arraybuffer";
  server.addEventListener("close", () => upstream.close());
  upstream.addEventListener("close", () => server.close());
  return { upstream, server, client };
}

const NO_UPSTREAM = () => new Response("no upstream", { status: 502 });

export class RelayObject extends DurableObject<BenchEnv> {
  override async fetch(): Promise<Response> {
    const sockets = await relaySockets(this.env);
    if (!sockets) return NO_UPSTREAM();
    const { upstream, server, client } = sockets;
    server.addEventListener("message", (e) => upstream.send(e.data));
    upstream.addEventListener("message", (e) => server.send(e.data));
    return new Response(null, { status: 101, webSocket: client });
  }
}

interface GeminiServerMessage {
  setupComplete?: unknown;
  serverContent?: {
    modelTurn?: { parts?: { text?: string; inlineData?: { data: string } }[] };
    turnComplete?: boolean;
  };
  toolCall?: { functionCalls: { id: string; name: string }[] };
}

/** A client frame of liveline's protocol, as a transcoding relay sends it on (Gemini wire). */
function clientToModel(data: string | ArrayBuffer, up: (m: unknown) => void): void {
  if (typeof data !== "string") {
    const audio = bytesToBase64(new Uint8Array(data));
    up({ realtimeInput: { audio: { mimeType: "audio/pcm;rate=16000", data: audio } } });
    return;
  }
  const frame = JSON.parse(data) as { type: string; text?: string };
  if (frame.type === "text") {
    up({
      clientContent: {
        turns: [{ role: "user", parts: [{ text: frame.text ?? "" }] }],
        turnComplete: true,
      },
    });
  } else if (frame.type === "audio_end") {
    up({ realtimeInput: { audioStreamEnd: true } });
  }
}

/** The probe model's frames, as a transcoding relay gives them to its client. */
function modelToClient(upstream: WebSocket, server: WebSocket, up: (m: unknown) => void): void {
  const down = (m: unknown) => server.send(JSON.stringify(m));
  upstream.addEventListener("message", (e) => {
    const m = JSON.parse(
      typeof e.data === "string" ? e.data : dec.decode(e.data as ArrayBuffer),
    ) as GeminiServerMessage;
    if (m.setupComplete !== undefined) {
      down({ type: "ready", sessionId: "transcode", lastSeq: 0, resumed: false });
      return;
    }
    // A tool call is answered by the relay itself (the probe waits for it).
    for (const call of m.toolCall?.functionCalls ?? []) {
      up({
        toolResponse: { functionResponses: [{ id: call.id, name: call.name, response: {} }] },
      });
    }
    for (const part of m.serverContent?.modelTurn?.parts ?? []) {
      if (part.inlineData) server.send(base64ToBytes(part.inlineData.data));
      else if (part.text !== undefined) down({ type: "text", text: part.text });
    }
    if (m.serverContent?.turnComplete) down({ type: "turn_complete" });
  });
}

export class TranscodingRelayObject extends DurableObject<BenchEnv> {
  override async fetch(): Promise<Response> {
    const sockets = await relaySockets(this.env);
    if (!sockets) return NO_UPSTREAM();
    const { upstream, server, client } = sockets;
    const up = (m: unknown) => upstream.send(enc.encode(JSON.stringify(m)));
    up({ setup: { model: "models/probe" } });
    server.addEventListener("message", (e) => clientToModel(e.data as string | ArrayBuffer, up));
    modelToClient(upstream, server, up);
    return new Response(null, { status: 101, webSocket: client });
  }
}

/**
 * The transcoding relay with the client's socket on the Hibernation API: each client message
 * is an event of its own (`webSocketMessage`), as on liveline with CLIENT_SOCKETS=hibernatable.
 */
export class HibernatingRelayObject extends DurableObject<BenchEnv> {
  private up: ((m: unknown) => void) | null = null;
  private upstream: WebSocket | null = null;

  override async fetch(): Promise<Response> {
    const res = await fetch(this.env.GEMINI_LIVE_URL, { headers: { Upgrade: "websocket" } });
    const upstream = res.webSocket;
    if (!upstream) return NO_UPSTREAM();
    upstream.accept();
    upstream.binaryType = "arraybuffer";
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    const up = (m: unknown) => upstream.send(enc.encode(JSON.stringify(m)));
    this.up = up;
    this.upstream = upstream;
    up({ setup: { model: "models/probe" } });
    modelToClient(upstream, server, up);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(_ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    if (this.up !== null) clientToModel(data, this.up);
  }

  override async webSocketClose(): Promise<void> {
    this.upstream?.close();
  }
}

/** A carrier's stream message, as far as the phone relay reads one (every carrier's fields). */
interface LineMessage {
  event?: string;
  streamSid?: string;
  stream_id?: string;
  streamId?: string;
  start?: { streamId?: string; media_format?: { encoding?: string } };
  media?: { payload: string };
}

/** The carriers the phone relay speaks, each by its own messages and codec. */
type RelayCarrier = "twilio" | "telnyx" | "plivo" | "vonage";

/**
 * A plain transcoding relay for one carrier's stream: its audio (μ-law or A-law 8 kHz, or
 * 16 kHz linear PCM) → PCM16 16 kHz → base64 to the probe model, and the probe's PCM16 24 kHz
 * back → the line's codec in the carrier's message, with the very functions liveline's call
 * path uses (src/audio), no mark, no log, no guard, no webhook: the arm each
 * carrier's call path is held to.
 */
export class PhoneRelayObject extends DurableObject<BenchEnv> {
  override async fetch(request: Request): Promise<Response> {
    const carrier = (new URL(request.url).searchParams.get("carrier") ?? "twilio") as RelayCarrier;
    const sockets = await relaySockets(this.env);
    if (!sockets) return NO_UPSTREAM();
    const { upstream, server, client } = sockets;
    const up = (m: unknown) => upstream.send(enc.encode(JSON.stringify(m)));
    const toModel = (pcm16k: Uint8Array) =>
      up({
        realtimeInput: { audio: { mimeType: "audio/pcm;rate=16000", data: bytesToBase64(pcm16k) } },
      });
    const linear = carrier === "vonage";
    const inbound = createResampler(8000, 16000);
    const outbound = createResampler(24000, linear ? 16000 : 8000);
    let alaw = false;
    let streamId: string | null = null;
    up({ setup: { model: "models/probe" } });
    server.addEventListener("message", (e) => {
      if (typeof e.data !== "string") {
        // Vonage: the caller's 16 kHz PCM, as the model takes it.
        if (streamId !== null) toModel(new Uint8Array(e.data as ArrayBuffer));
        return;
      }
      const m = JSON.parse(e.data) as LineMessage;
      if (m.event === "start") {
        streamId = m.streamSid ?? m.stream_id ?? m.start?.streamId ?? null;
        alaw = m.start?.media_format?.encoding === "PCMA";
      } else if (m.event === "websocket:connected") streamId = "vonage";
      else if (m.event === "media" && m.media) {
        const line = base64ToBytes(m.media.payload);
        toModel(pcm16ToBytes(inbound.push(alaw ? alawToPcm16(line) : mulawToPcm16(line))));
      } else if (m.event === "stop") server.close(1000, "call ended");
    });
    upstream.addEventListener("message", (e) => {
      const m = JSON.parse(
        typeof e.data === "string" ? e.data : dec.decode(e.data as ArrayBuffer),
      ) as GeminiServerMessage;
      for (const part of m.serverContent?.modelTurn?.parts ?? []) {
        if (!part.inlineData || streamId === null) continue;
        const pcm = outbound.push(pcm16FromBytes(base64ToBytes(part.inlineData.data)));
        if (pcm.length === 0) continue;
        if (linear) {
          const bytes = pcm16ToBytes(pcm);
          for (let at = 0; at < bytes.length; at += 640) server.send(bytes.slice(at, at + 640));
          continue;
        }
        const payload = bytesToBase64(alaw ? pcm16ToAlaw(pcm) : pcm16ToMulaw(pcm));
        server.send(
          JSON.stringify(
            carrier === "plivo"
              ? {
                  event: "playAudio",
                  media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload },
                }
              : carrier === "telnyx"
                ? { event: "media", media: { payload } }
                : { event: "media", streamSid: streamId, media: { payload } },
          ),
        );
      }
    });
    return new Response(null, { status: 101, webSocket: client });
  }
}

export default {
  fetch(request: Request, env: BenchEnv, ctx: ExecutionContext) {
    const path = new URL(request.url).pathname;
    if (path === "/bench/model") {
      const ns = env.BENCH_MODEL;
      return ns.get(ns.newUniqueId()).fetch(request);
    }
    if (path === "/bench/relay") {
      const ns = env.BENCH_RELAY;
      return ns.get(ns.newUniqueId()).fetch(request);
    }
    if (path === "/bench/phone-relay") {
      const ns = env.BENCH_PHONE_RELAY;
      return ns.get(ns.newUniqueId()).fetch(request);
    }
    if (path === "/bench/hibernating") {
      const ns = env.BENCH_HIBERNATING;
      return ns.get(ns.newUniqueId()).fetch(request);
    }
    if (path === "/bench/transcode") {
      const ns = env.BENCH_TRANSCODE;
      return ns.get(ns.newUniqueId()).fetch(request);
    }
    // biome-ignore lint/suspicious/noExplicitAny: the production handler's env type
    return worker.fetch(request as any, env as any, ctx);
  },
};
