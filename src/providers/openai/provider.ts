/** OpenAI Realtime (GA) as a provider: `OPENAI_API_KEY` (a secret), `OPENAI_MODEL`, `OPENAI_REALTIME_URL`. */
import { z } from "zod";
import { optionalString, optionalUrl } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { openWebSocket } from "../websocket.js";
import { OPENAI_CAPABILITIES, OpenAIRealtimeAdapter } from "./adapter.js";

const OPENAI_REALTIME_URL = "wss://api.openai.com/v1/realtime";
const OPENAI_DEFAULT_MODEL = "gpt-realtime";

/** The Worker vars OpenAI Realtime reads. Secret: OPENAI_API_KEY. */
const OpenAIVars = z.object({
  OPENAI_API_KEY: optionalString,
  OPENAI_REALTIME_URL: optionalUrl,
  /** Default gpt-realtime. */
  OPENAI_MODEL: optionalString,
});
type OpenAIVars = z.output<typeof OpenAIVars>;

/** The connect URL: the model rides in the query, as the service expects it. */
function openaiUrl(config: OpenAIVars, model?: string): string {
  const url = new URL(config.OPENAI_REALTIME_URL ?? OPENAI_REALTIME_URL);
  url.searchParams.set("model", model ?? config.OPENAI_MODEL ?? OPENAI_DEFAULT_MODEL);
  return url.toString();
}

export const openaiProvider: Provider<typeof OpenAIVars.shape> = {
  vars: OpenAIVars,
  unavailable: (config) =>
    config.OPENAI_API_KEY === undefined
      ? "the openai provider needs the OPENAI_API_KEY secret (wrangler secret put OPENAI_API_KEY)"
      : null,
  session({ vars: config, agent, audio }) {
    // A session's own model (an agent's, or its creator's where the agent allows it) wins.
    const model = agent.model ?? config.OPENAI_MODEL ?? OPENAI_DEFAULT_MODEL;
    const url = openaiUrl(config, model);
    // The key rides in a header; it is never logged nor sent to clients.
    const headers = { Authorization: `Bearer ${config.OPENAI_API_KEY ?? ""}` };
    return {
      model,
      capabilities: OPENAI_CAPABILITIES,
      // OpenAI Realtime takes G.711 μ-law natively (audio/pcmu): a call's audio passes untouched.
      audio,
      connect: () => openWebSocket(url, headers),
      adapter: () => new OpenAIRealtimeAdapter({ model, agent, audio }),
      // Agents on one model and voice hand off in place (session.update), see updateAgent.
      sharedLinkKey: `${url} ${agent.voice ?? ""}`,
    };
  },
};
