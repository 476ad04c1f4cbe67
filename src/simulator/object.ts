/**
 * The simulator's Durable Object: a thin shell around the pure machine. It turns WebSocket
 * frames and timers into inputs, and carries out the machine's effects (send, close, save or
 * look up a resumption handle). One object per simulated session; each connection on it has
 * its own machine.
 */
import { DurableObject } from "cloudflare:workers";
import { jsonError } from "../vocabulary/http-error.js";
import type { SimulatorApi } from "./api.js";
import {
  closeQuietly,
  type Face,
  type FaceEnd,
  FaceSocket,
  frameText,
  listen,
  socketEnd,
} from "./face-socket.js";
import {
  createSimulator,
  handleSession,
  type ResumeContext,
  type SimEffect,
  type SimInput,
  type SimState,
  simStep,
} from "./gemini/machine.js";
import {
  createGptLiveSimulator,
  type LiveSimEffect,
  type LiveSimInput,
  type LiveSimState,
  liveStep,
} from "./gpt-live/machine.js";
import { invalidEventMessage, LiveCreateParams } from "./gpt-live/strict-schemas.js";
import { KnobError, parseKnobs, type SimulatorKnobs } from "./knobs.js";
import {
  createOpenAISimulator,
  type OaiSimEffect,
  type OaiSimInput,
  type OaiSimState,
  oaiStep,
} from "./openai/machine.js";
import { RingRequest, SipCallStandIn } from "./openai-sip/stand-in.js";
import {
  familyFaceOf,
  GPT_LIVE_PATH,
  liveSessionId,
  liveSessionPath,
  type SipPath,
  sipCallId,
  sipPath,
} from "./route.js";
import { liveHttpError, offersAudio, PeerSlot, standInAnswer } from "./webrtc-stand-in.js";

export interface SimulatorEnv {
  GEMINI_SIMULATOR: DurableObjectNamespace<SimulatorApi & Rpc.DurableObjectBranded>;
}

const HANDLE_PREFIX = "handle:";
const encoder = new TextEncoder();

export class GeminiSimulatorObject extends DurableObject<SimulatorEnv> implements SimulatorApi {
  /** GPT-Live sessions running on this object, by session id: where a sideband attaches. */
  private readonly live = new Map<string, LiveSession>();
  private liveSessions = 0;
  /** SIP calls of the OpenAI SIP stand-in on this object, by call id. */
  private readonly sipCalls = new Map<string, SipCallStandIn>();

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    let knobs: SimulatorKnobs;
    try {
      knobs = parseKnobs(url.searchParams);
    } catch (err) {
      if (err instanceof KnobError) return jsonError(400, "bad_request", err.message);
      throw err;
    }
    const sessionName = url.searchParams.get("session") ?? "";
    const sip = sipPath(url);
    if (sip !== null) return this.sip(sip, request, knobs, sessionName);
    if (request.method === "POST") return this.createWebRtc(request, knobs, sessionName);
    const path = liveSessionPath(url.pathname);
    const running = path === null ? undefined : this.live.get(path.id);
    if (path !== null && running === undefined) {
      return jsonError(404, "not_found", `no running session ${path.id}`);
    }
    const peer = path?.kind === "peer" ? running?.peer : undefined;
    if (path?.kind === "peer" && peer?.open !== true) {
      return jsonError(409, "conflict", `session ${path.id} takes no (further) stand-in browser`);
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    server.accept();
    // Without this, workerd hands binary client frames over as Blobs, which the UTF-8
    // decoder refuses: every binary frame (the README says both kinds are taken) closed 1007.
    server.binaryType = "arraybuffer";
    if (running !== undefined && peer !== undefined) {
      joinPeer(server, running, peer);
    } else if (running !== undefined) {
      running.sidebands.add(server);
      server.addEventListener("message", (event) =>
        running.socket.feed({ type: "sideband_frame", text: frameText(event.data) }),
      );
      server.addEventListener("close", () => running.sidebands.delete(server));
    } else if (url.pathname === GPT_LIVE_PATH) {
      const live = this.startLive(socketEnd(server), knobs, sessionName);
      listen(server, live.socket);
      server.addEventListener("close", () => live.end());
    } else if (familyFaceOf(url.pathname) !== null) {
      const dialect = familyFaceOf(url.pathname) ?? "openai";
      const state = createOpenAISimulator(knobs, dialect);
      listen(server, new FaceSocket(socketEnd(server), state, OPENAI_FACE));
    } else {
      const state = createSimulator({
        knobs,
        sessionName,
        connectionId: crypto.randomUUID().slice(0, 8),
      });
      listen(server, new FaceSocket(socketEnd(server), state, geminiFace(this, knobs)));
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /** The OpenAI SIP stand-in (openai-sip/stand-in.ts): a call rung, controlled, attached to. */
  private async sip(
    path: SipPath,
    request: Request,
    knobs: SimulatorKnobs,
    sessionName: string,
  ): Promise<Response> {
    if (path.kind === "ring") {
      let json: unknown;
      try {
        json = await request.json();
      } catch {
        return jsonError(400, "bad_request", "the body is not JSON");
      }
      const ring = RingRequest.safeParse(json);
      if (!ring.success)
        return jsonError(400, "bad_request", ring.error.issues[0]?.message ?? "invalid");
      const id = sipCallId(sessionName, this.sipCalls.size + 1);
      const call = new SipCallStandIn(id, ring.data.from, ring.data.to, knobs);
      this.sipCalls.set(id, call);
      return Response.json({
        call_id: id,
        webhook: await call.webhook(ring.data.secret, Date.now()),
      });
    }
    const call = this.sipCalls.get(path.id);
    if (call === undefined)
      return liveHttpError(404, "call_not_found", `No call with id ${path.id}.`);
    switch (path.kind) {
      case "describe":
        return Response.json(call.describe());
      case "sideband":
        return call.sideband();
      case "control":
        return path.action === "phone" ? call.joinPhone() : call.control(path.action, request);
      default: {
        const unreachable: never = path;
        throw new Error(`unknown SIP path ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * A GPT-Live session whose primary is `primary` (a WebSocket, or a WebRTC session's
   * stand-in browser), its id naming this object (a sideband finds it here).
   */
  private startLive(
    primary: FaceEnd,
    knobs: SimulatorKnobs,
    sessionName: string,
    peer?: PeerSlot,
  ): LiveSession {
    const id = liveSessionId(sessionName, ++this.liveSessions);
    const sidebands = new Set<WebSocket>();
    const end = () => {
      this.live.delete(id);
      for (const sideband of sidebands) closeQuietly(sideband, 1000, "session closed");
      sidebands.clear();
    };
    const socket = new FaceSocket(
      primary,
      createGptLiveSimulator(knobs, id),
      gptLiveFace(sidebands, end),
    );
    const live = { id, socket, sidebands, end, ...(peer === undefined ? {} : { peer }) };
    this.live.set(id, live);
    return live;
  }

  /**
   * `POST /v1/live/sessions` (SDK `client.live.create`): a GPT-Live session for a browser's
   * WebRTC offer, started by the creation itself; the answer is its id and a stand-in SDP.
   * Its browser side is the stand-in peer (`/peer`), its sidebands attach as to any session.
   */
  private async createWebRtc(
    request: Request,
    knobs: SimulatorKnobs,
    sessionName: string,
  ): Promise<Response> {
    let json: unknown;
    try {
      json = await request.json();
    } catch {
      return liveHttpError(400, "invalid_json", "The body is not valid JSON.");
    }
    const parsed = LiveCreateParams.safeParse(json);
    if (!parsed.success) {
      const { code, message, param } = invalidEventMessage(parsed.error, json);
      return liveHttpError(400, code, message, param);
    }
    if (!offersAudio(parsed.data.transport.sdp)) {
      return liveHttpError(
        400,
        "invalid_offer",
        "The SDP offer has no audio media section.",
        "transport.sdp",
      );
    }
    const peer = new PeerSlot();
    const live = this.startLive(peer, knobs, sessionName, peer);
    const effects = live.socket.take({ type: "media_start", session: parsed.data.session });
    // A config the machine refuses (a delegation it does not simulate) makes no session.
    const refused = effects.find((e) => e.type === "send" && e.message.type === "error");
    if (refused?.type === "send") {
      live.end();
      live.socket.close(1000, "refused");
      return Response.json({ error: refused.message.error }, { status: 400 });
    }
    return Response.json({
      session: { id: live.id },
      transport: { type: "webrtc", sdp: standInAnswer(live.id) },
    });
  }

  /** RPC: a resumption context saved by a connection of this session, or null. */
  async loadHandle(handle: string): Promise<ResumeContext | null> {
    return (await this.ctx.storage.get<ResumeContext>(HANDLE_PREFIX + handle)) ?? null;
  }

  /** @internal for the Gemini face */
  saveHandle(handle: string, context: ResumeContext): Promise<void> {
    return this.ctx.storage.put(HANDLE_PREFIX + handle, context);
  }

  /** @internal for the Gemini face: the context behind a handle of any session. */
  lookup(handle: string): Promise<ResumeContext | null> {
    const session = handleSession(handle);
    if (session === null) return Promise.resolve(null);
    const ns = this.env.GEMINI_SIMULATOR;
    return ns.get(ns.idFromName(session)).loadHandle(handle);
  }
}

/**
 * The stand-in browser of a WebRTC session joins: it gets what waited for it, its messages
 * are the primary's client events, and its leaving ends the session as a primary's closing
 * does (its sidebands are closed).
 */
function joinPeer(ws: WebSocket, live: LiveSession, peer: PeerSlot): void {
  peer.join(ws);
  listen(ws, live.socket);
  ws.addEventListener("close", () => live.end());
  ws.addEventListener("error", () => live.end());
}

/** The Gemini Live face: binary frames (unless frames=text), resumption handles in storage. */
function geminiFace(
  owner: GeminiSimulatorObject,
  knobs: SimulatorKnobs,
): Face<SimState, SimInput, SimEffect> {
  return {
    step: simStep,
    carryOut(effect, socket) {
      switch (effect.type) {
        case "send": {
          // Pretty-printed like the real service; binary frames unless frames=text (O4).
          const json = JSON.stringify(effect.message, null, 2);
          socket.end.send(knobs.frames === "text" ? json : encoder.encode(json));
          return;
        }
        case "close":
          socket.close(effect.code, effect.reason);
          return;
        case "save_handle":
          // The output gate holds later frames until the write is durable.
          void owner.saveHandle(effect.handle, effect.context);
          return;
        case "lookup_handle":
          owner.lookup(effect.handle).then(
            (context) => socket.feed({ type: "resume_context", handle: effect.handle, context }),
            () => socket.feed({ type: "resume_context", handle: effect.handle, context: null }),
          );
          return;
      }
    },
  };
}

/**
 * A GPT-Live session: its primary connection (a WebRTC session's: its stand-in browser, in
 * `peer`) and the sidebands attached to it; `end` forgets it and closes its sidebands.
 */
interface LiveSession {
  id: string;
  socket: FaceSocket<LiveSimState, LiveSimInput, LiveSimEffect>;
  sidebands: Set<WebSocket>;
  end(): void;
  peer?: PeerSlot;
}

/**
 * The GPT-Live face: text frames; each event goes to the primary socket, the session's
 * sidebands, or both, as the machine says; the session's end closes its sidebands too.
 */
function gptLiveFace(
  sidebands: Set<WebSocket>,
  end: () => void,
): Face<LiveSimState, LiveSimInput, LiveSimEffect> {
  return {
    step: liveStep,
    carryOut(effect, socket) {
      switch (effect.type) {
        case "send": {
          const json = JSON.stringify(effect.message);
          if (effect.to !== "sideband") socket.end.send(json);
          if (effect.to === "primary") return;
          for (const sideband of sidebands) {
            try {
              sideband.send(json);
            } catch {
              // a sideband going away misses what it would have seen
            }
          }
          return;
        }
        case "close":
          end();
          socket.close(effect.code, effect.reason);
          return;
      }
    },
  };
}

/** The OpenAI Realtime face: text frames, no handles. */
const OPENAI_FACE: Face<OaiSimState, OaiSimInput, OaiSimEffect> = {
  step: oaiStep,
  carryOut(effect, socket) {
    if (effect.type === "send") socket.end.send(JSON.stringify(effect.message));
    else socket.close(effect.code, effect.reason);
  },
};

/**
 * `GET /simulator/gemini` (WebSocket upgrade): a new simulated session per connection, named
 * by `?session=` or at random. Resumed connections may land anywhere: the handle names the
 * session whose object holds its context.
 */
export async function handleSimulatorRequest(
  request: Request,
  env: SimulatorEnv,
): Promise<Response> {
  const url = new URL(request.url);
  // GPT-Live's WebRTC creation, and the SIP stand-in's rings, control and descriptions, are the
  // HTTP requests a face takes (at the service's paths).
  const sip = sipPath(url);
  const sipHttp =
    sip !== null &&
    ((request.method === "POST" &&
      (sip.kind === "ring" || (sip.kind === "control" && sip.action !== "phone"))) ||
      (request.method === "GET" && sip.kind === "describe"));
  const creation = (request.method === "POST" && url.pathname === GPT_LIVE_PATH) || sipHttp;
  if (request.method !== "GET" && !creation) {
    const allow = url.pathname === GPT_LIVE_PATH ? "GET, POST" : "GET";
    return jsonError(405, "method_not_allowed", `use ${allow}`, { Allow: allow });
  }
  if (!creation && request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
    return jsonError(426, "upgrade_required", "the simulator speaks WebSocket only");
  }
  let knobs: SimulatorKnobs;
  try {
    knobs = parseKnobs(url.searchParams);
  } catch (err) {
    if (err instanceof KnobError) return jsonError(400, "bad_request", err.message);
    throw err;
  }
  if (knobs.refuseUpgrade > 0 && !creation) return refusedUpgrade(knobs.refuseUpgrade);
  const session = url.searchParams.get("session") ?? crypto.randomUUID();
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(session)) {
    return jsonError(400, "bad_request", "session must be 1-64 of A-Z a-z 0-9 _ -");
  }
  url.searchParams.set("session", session);
  const ns = env.GEMINI_SIMULATOR;
  return ns.get(ns.idFromName(session)).fetch(new Request(url, request));
}

/**
 * The service's refusal of an upgrade (a bad key, an unknown model): an HTTP error with
 * Google's error body (google.rpc.Status as JSON), never a WebSocket.
 */
function refusedUpgrade(status: number): Response {
  const [message, code] =
    status === 400 || status === 401 || status === 403
      ? ["API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"]
      : status === 404
        ? ["models/unknown is not found for API version v1beta.", "NOT_FOUND"]
        : ["The service is currently unavailable.", "UNAVAILABLE"];
  return new Response(JSON.stringify({ error: { code: status, message, status: code } }), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}
