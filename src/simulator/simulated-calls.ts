/**
 * Direct calls on the simulator's GPT-Live face: a simulated session's WebRTC calls are
 * created, and their sidebands attached, through the face's own routes (internally, as its
 * WebSocket connections are), by the same code as the real service's (gpt-live/webrtc-calls).
 */
import { gptLiveCalls } from "../providers/gpt-live/webrtc-calls.js";
import { acceptUpgrade } from "../providers/websocket.js";
import type { DirectCalls, ProviderAdapter } from "../vocabulary/provider-adapter.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./object.js";
import { GPT_LIVE_PATH, simulatorUrl } from "./route.js";

export function simulatedDirectCalls(
  bindings: SimulatorEnv,
  knobs: URLSearchParams,
  sessionId: string,
  adapter: () => ProviderAdapter,
): DirectCalls {
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
