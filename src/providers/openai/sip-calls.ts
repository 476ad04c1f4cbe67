/**
 * OpenAI Realtime SIP calls: a call that reached the service through a SIP trunk, announced
 * to the app by a `realtime.call.incoming` webhook (src/http/routes/openai-sip.ts). liveline
 * accepts it as the session's agent, attaches to it as its sideband (the same WebSocket
 * endpoint with `?call_id=`, the same key), transfers it with a SIP REFER and hangs it up
 * (OpenAI's "Realtime API with SIP" and "Webhooks and server-side controls" guides; the
 * `openai` package's `realtime.calls` methods).
 */
import type { DirectCallService, ProviderAdapter } from "../../vocabulary/provider-adapter.js";
import { DirectCallRefused, refusalOf } from "../direct-call-refused.js";
import { fetchableUrl, redact, refusalReason } from "../websocket.js";
import { CallAcceptParams, CallReferParams } from "./sip-schemas.js";

/** `{realtime URL without its query}/calls/{id}/{action}`, over HTTP(S). */
export function callControlUrl(realtimeUrl: string, sipCallId: string, action: string): string {
  const url = new URL(fetchableUrl(realtimeUrl));
  url.search = "";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/calls/${encodeURIComponent(sipCallId)}/${action}`;
  return url.toString();
}

/** The call's sideband: the Realtime WebSocket URL with `?call_id=` (and no model). */
export function sidebandUrl(realtimeUrl: string, sipCallId: string): string {
  const url = new URL(realtimeUrl);
  url.search = "";
  url.searchParams.set("call_id", sipCallId);
  return url.toString();
}

/** A call's session as the adapter sets up a WebSocket's, without the audio formats. */
export function acceptParamsOf(setupFrame: string): CallAcceptParams {
  const { session } = JSON.parse(setupFrame) as {
    session: Record<string, unknown> & { audio?: { input?: object; output?: object } };
  };
  const { audio, ...rest } = session;
  const { format: _in, ...input } = (audio?.input ?? {}) as Record<string, unknown>;
  const { format: _out, ...output } = (audio?.output ?? {}) as Record<string, unknown>;
  return CallAcceptParams.parse({ ...rest, audio: { input, output } });
}

export interface SipCallsOptions {
  /** The Realtime WebSocket URL (OPENAI_REALTIME_URL): control and sideband are beside it. */
  realtimeUrl: string;
  /** The credentials of every request (the server's key): never logged, never in an answer. */
  headers: Record<string, string>;
  fetch(request: Request): Promise<Response>;
  /** Opens a sideband's WebSocket at `url` with the same credentials. */
  openSocket(url: string): Promise<WebSocket>;
  /** A fresh codec of the session's agent: a call is accepted as its session.update sets up. */
  adapter(): ProviderAdapter;
}

export function openaiSipCalls(opts: SipCallsOptions): DirectCallService {
  const secrets = Object.values(opts.headers).flatMap((v) => [v, v.replace(/^Bearer\s+/i, "")]);
  const post = async (sipCallId: string, action: string, body: unknown): Promise<Response> => {
    try {
      return await opts.fetch(
        new Request(callControlUrl(opts.realtimeUrl, sipCallId, action), {
          method: "POST",
          headers: { ...opts.headers, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
    } catch (err) {
      throw new DirectCallRefused(0, redact(err instanceof Error ? err.message : "", secrets));
    }
  };
  return {
    // A SIP call's conversation begins with the call: nothing of the session's log is seeded
    // (the accept has no place for it).
    async accept(sipCallId: string) {
      const params = acceptParamsOf(opts.adapter().setupFrame({ seeded: false }));
      const res = await post(sipCallId, "accept", params);
      if (!res.ok) throw await refusalOf(res, secrets);
    },
    attach: (sipCallId) => opts.openSocket(sidebandUrl(opts.realtimeUrl, sipCallId)),
    async refer(sipCallId: string, targetUri: string) {
      const body = CallReferParams.parse({ target_uri: targetUri });
      try {
        const res = await post(sipCallId, "refer", body);
        if (res.ok) return { ok: true as const };
        return {
          ok: false as const,
          problem: `the service refused the transfer (HTTP ${res.status}): ${redact(await refusalReason(res), secrets)}`,
        };
      } catch (err) {
        return { ok: false as const, problem: err instanceof Error ? err.message : String(err) };
      }
    },
    async hangUp(sipCallId: string) {
      const res = await post(sipCallId, "hangup", {});
      if (!res.ok) throw await refusalOf(res, secrets);
    },
  };
}
