/**
 * Direct calls on the simulator's GPT-Live face: a simulated session's WebRTC calls are
 * created, and their sidebands attached, through the face's own routes (internally, as its
 * WebSocket connections are), by the same code as the real service's (gpt-live/webrtc-calls).
 */
import { gptLiveCalls } from "../providers/gpt-live/webrtc-calls.js";
import { openaiSipCalls } from "../providers/openai/sip-calls.js";
import { acceptUpgrade, fetchableUrl } from "../providers/websocket.js";
import type { DirectCallService, ProviderAdapter } from "../vocabulary/provider-adapter.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./object.js";
import { GPT_LIVE_PATH, simulatorUrl } from "./route.js";

export function simulatedDirectCalls(
  bindings: SimulatorEnv,
  knobs: URLSearchParams,
  sessionId: string,
  adapter: () => ProviderAdapter,
): DirectCallService {
  // The session's calls are made on one simulator object of their own (its knobs apply).
  const query = new URLSearchParams(knobs);
  query.set("session", `${sessionId}-webrtc`);
  return gptLiveCalls({
    liveUrl: `https://liveline.internal${GPT_LIVE_PATH}?${query}`,
    headers: {},
    fetch: (request) => handleSimulatorRequest(request, bindings),
    openSocket: (url) => {
      // A sideband goes to the object its call's id names (as on the public route).
      const target = simulatorUrl(new URL(url)) ?? new URL(url);
      return acceptUpgrade(
        handleSimulatorRequest(
          new Request(target, { headers: { Upgrade: "websocket" } }),
          bindings,
        ),
      );
    },
    adapter,
  });
}

/**
 * SIP calls on the simulator's OpenAI SIP stand-in (openai-sip/stand-in.ts): a simulated
 * session accepts, transfers and hangs up its call, and attaches its sideband, through the
 * stand-in's routes on the object the call's id names, by the same code as the real
 * service's (openai/sip-calls).
 */
export function simulatedSipCalls(
  bindings: SimulatorEnv,
  adapter: () => ProviderAdapter,
): DirectCallService {
  /** The stand-in's request for `url` (the simulator's own form of the service's path). */
  const routed = (url: string) => {
    const fetchable = new URL(fetchableUrl(url));
    return simulatorUrl(fetchable) ?? fetchable;
  };
  return openaiSipCalls({
    realtimeUrl: "wss://liveline.internal/v1/realtime",
    headers: {},
    fetch: (request) => handleSimulatorRequest(new Request(routed(request.url), request), bindings),
    openSocket: (url) =>
      acceptUpgrade(
        handleSimulatorRequest(
          new Request(routed(url), { headers: { Upgrade: "websocket" } }),
          bindings,
        ),
      ),
    adapter,
  });
}
