/**
 * The model of a session this gateway can no longer reach: its provider is not configured
 * any more (its key was removed, say). The session's record stays readable; a connection to
 * the model is refused for good, with the reason (never a credential), and nothing retries it.
 */
import type { ModelCapabilities } from "../vocabulary/model.js";
import type { ModelRoute, ProviderAdapter } from "../vocabulary/provider-adapter.js";
import { UpstreamRefused } from "./websocket.js";

/** Refused before any request: the gateway has no way to the session's model. */
export class ModelUnreachable extends UpstreamRefused {
  constructor(problem: string) {
    super(0, problem);
    this.message = `this gateway cannot reach the session's model: ${problem}`;
    this.name = "ModelUnreachable";
  }
}

/** No marker is claimed: nothing is ever sent. */
const NOTHING_CLAIMED: ModelCapabilities = {
  nonBlockingCalls: false,
  resultScheduling: false,
  turnCompleteWaitsForResults: true,
  silentHonoured: false,
  responsesOnRequest: false,
};

export function unreachableModel(problem: string): ModelRoute {
  // A codec for a connection that never opens.
  const adapter: ProviderAdapter = {
    capabilities: NOTHING_CLAIMED,
    setupFrame: () => "",
    decode: () => ({ ok: false, error: { code: "protocol_error", message: problem } }),
    encode: () => [],
    encodeContext: () => [],
    classifyClose: () => "fatal",
  };
  return {
    model: "",
    audio: "pcm16",
    capabilities: NOTHING_CLAIMED,
    connect: () => Promise.reject(new ModelUnreachable(problem)),
    adapter: () => adapter,
  };
}
