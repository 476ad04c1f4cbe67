/** OpenAI Realtime (GA) as a provider: `OPENAI_API_KEY` (a secret), `OPENAI_MODEL`, `OPENAI_REALTIME_URL`. */
import { z } from "zod";
import { optionalString, optionalUrl } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { familySession, withModel } from "./family.js";
import { OPENAI_REALTIME } from "./services.js";

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
function openaiUrl(config: OpenAIVars, model: string): string {
  return withModel(config.OPENAI_REALTIME_URL ?? OPENAI_REALTIME_URL, model);
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
    const headers = { Authorization: `Bearer ${config.OPENAI_API_KEY ?? ""}` };
    return familySession({
      service: OPENAI_REALTIME,
      endpoint: { url, headers },
      model,
      agent,
      audio,
    });
  },
};
