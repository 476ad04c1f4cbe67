/**
 * OpenAI GPT-Live as a provider: `OPENAI_API_KEY` (a secret, shared with OpenAI Realtime),
 * `GPT_LIVE_MODEL`, `GPT_LIVE_BACKEND_MODEL` (the Responses model its delegations run on),
 * `GPT_LIVE_URL`.
 */
import { z } from "zod";
import { optionalString, optionalUrl } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { openWebSocket } from "../websocket.js";
import { GPT_LIVE_CAPABILITIES, GptLiveAdapter } from "./adapter.js";
import { gptLiveCalls } from "./webrtc-calls.js";

const GPT_LIVE_URL = "wss://api.openai.com/v1/live/sessions";
const GPT_LIVE_DEFAULT_MODEL = "gpt-live-1";
/** The service requires one and names no default: a small Responses model (a setting). */
const GPT_LIVE_DEFAULT_BACKEND_MODEL = "gpt-5-mini";

/** The Worker vars GPT-Live reads. Secret: OPENAI_API_KEY. */
const GptLiveVars = z.object({
  OPENAI_API_KEY: optionalString,
  GPT_LIVE_URL: optionalUrl,
  /** Default gpt-live-1. */
  GPT_LIVE_MODEL: optionalString,
  /** Default gpt-5-mini. */
  GPT_LIVE_BACKEND_MODEL: optionalString,
});

export const gptLiveProvider: Provider<typeof GptLiveVars.shape> = {
  vars: GptLiveVars,
  unavailable: (config) =>
    config.OPENAI_API_KEY === undefined
      ? "the gpt-live provider needs the OPENAI_API_KEY secret (wrangler secret put OPENAI_API_KEY)"
      : null,
  session({ vars: config, agent, audio }) {
    // The model is named in session.start, not the URL.
    const model = agent.model ?? config.GPT_LIVE_MODEL ?? GPT_LIVE_DEFAULT_MODEL;
    const backendModel = config.GPT_LIVE_BACKEND_MODEL ?? GPT_LIVE_DEFAULT_BACKEND_MODEL;
    const url = config.GPT_LIVE_URL ?? GPT_LIVE_URL;
    // The key rides in a header; it is never logged nor sent to clients.
    const headers = { Authorization: `Bearer ${config.OPENAI_API_KEY ?? ""}` };
    return {
      model,
      capabilities: GPT_LIVE_CAPABILITIES,
      // GPT-Live takes G.711 μ-law natively (audio/pcmu at 8000): a call's audio passes untouched.
      audio,
      connect: () => openWebSocket(url, headers),
      adapter: () => new GptLiveAdapter({ model, backendModel, agent, audio }),
      // A browser's WebRTC call, created with the server's key; this session its sideband.
      directCallService: gptLiveCalls({
        liveUrl: url,
        headers,
        fetch: (request) => fetch(request),
        openSocket: (attachUrl) => openWebSocket(attachUrl, headers),
        adapter: () => new GptLiveAdapter({ model, backendModel, agent, audio }),
      }),
      // No sharedConnectionKey: instructions and voice are fixed once a session has started, so a
      // handoff is a new session, seeded from the log.
    };
  },
};
