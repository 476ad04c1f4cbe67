/**
 * GPT-Live calls a device places directly (WebRTC): the server creates the call with its key
 * (`POST /v1/live/sessions {session, transport: {type: "webrtc", sdp}}`: the SDK's
 * `client.live.create`), and liveline attaches to it as its sideband
 * (`/v1/live/sessions/{id}/attach`, the same auth; nothing is set up there).
 */
import type { RebuiltContext } from "../../vocabulary/model.js";
import type { ProviderAdapter, WebRtcCalls } from "../../vocabulary/provider-adapter.js";
import { DirectCallRefused, refusalOf } from "../direct-call-refused.js";
import { fetchableUrl, redact } from "../websocket.js";
import { SessionStartEvent } from "./schemas.js";
import { LiveCreateParams, LiveCreateResponse, type MediaSessionConfig } from "./webrtc-schemas.js";

/**
 * A creation not answered by then is given up (its request aborted): an endpoint that never
 * answers would hold one of the invocation's six connections (src/outbound.ts).
 */
const CREATE_DEADLINE_MS = 15_000;

/**
 * Where a call is created: the WebSocket's own path over HTTP(S) (the SDK opens its
 * WebSocket at `{baseURL}/live/sessions` and posts a creation to the same path).
 */
export function createUrl(liveUrl: string): string {
  return fetchableUrl(liveUrl);
}

/** A call's sideband: `{the sessions path}/{id}/attach`, the id encoded as the SDK does. */
export function attachUrl(liveUrl: string, serviceSessionId: string): string {
  const url = new URL(liveUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${encodeURIComponent(serviceSessionId)}/attach`;
  return url.toString();
}

/**
 * A call's session as the adapter sets up a WebSocket session (instructions, voice, the
 * delegated tools, the seed), without the audio format: a call's media negotiates its own.
 */
export function mediaSessionOf(setupFrame: string): MediaSessionConfig {
  const { session } = SessionStartEvent.parse(JSON.parse(setupFrame));
  const { audio, ...rest } = session;
  return audio?.output === undefined ? rest : { ...rest, audio: { output: audio.output } };
}

export interface GptLiveCallsOptions {
  /** The WebSocket URL of `/v1/live/sessions` (GPT_LIVE_URL). */
  liveUrl: string;
  /** The credentials of every request (the server's key): never logged, never in an answer. */
  headers: Record<string, string>;
  fetch(request: Request): Promise<Response>;
  /** Opens a sideband's WebSocket at `url` with the same credentials. */
  openSocket(url: string): Promise<WebSocket>;
  /** A fresh codec of the session's agent: a call is set up as its session.start would be. */
  adapter(): ProviderAdapter;
}

export function gptLiveCalls(opts: GptLiveCallsOptions): WebRtcCalls {
  const secrets = Object.values(opts.headers).flatMap((v) => [v, v.replace(/^Bearer\s+/i, "")]);
  return {
    async create(offer: string, context: RebuiltContext) {
      const adapter = opts.adapter();
      // The seed rides in the session's `input` (encodeContext keeps it for setupFrame).
      const seed = adapter.encodeContext(context);
      const session = mediaSessionOf(adapter.setupFrame({ seeded: seed.length > 0 }));
      const body = LiveCreateParams.parse({ session, transport: { type: "webrtc", sdp: offer } });
      let res: Response;
      try {
        res = await opts.fetch(
          new Request(createUrl(opts.liveUrl), {
            method: "POST",
            headers: { ...opts.headers, "Content-Type": "application/json" },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(CREATE_DEADLINE_MS),
          }),
        );
      } catch (err) {
        throw new DirectCallRefused(0, redact(err instanceof Error ? err.message : "", secrets));
      }
      if (!res.ok) throw await refusalOf(res, secrets);
      const answer = LiveCreateResponse.safeParse(await res.json().catch(() => null));
      if (!answer.success)
        throw new DirectCallRefused(res.status, "its answer is not a WebRTC session's");
      return { serviceSessionId: answer.data.session.id, sdp: answer.data.transport.sdp };
    },
    attach: (serviceSessionId) => opts.openSocket(attachUrl(opts.liveUrl, serviceSessionId)),
  };
}
