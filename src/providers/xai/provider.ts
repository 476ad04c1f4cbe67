/**
 * xAI's Grok voice agent API as a provider: `XAI_API_KEY` (a secret), `XAI_MODEL`,
 * `XAI_REALTIME_URL`. It speaks OpenAI Realtime's GA events (the family's one adapter, with
 * xAI's data: src/providers/openai/services.ts) at its own URL, the model named only there.
 */
import { z } from "zod";
import { optionalString, optionalUrl, secret } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { type FamilyEndpoint, familySession, withModel } from "../openai/family.js";
import { XAI_REALTIME } from "../openai/services.js";

const XAI_URL = "wss://api.x.ai/v1/realtime";
/** xAI's alias of its newest voice model (its voice agent guide connects with it). */
const XAI_DEFAULT_MODEL = "grok-voice-latest";

/** The Worker vars xAI reads. Secret: XAI_API_KEY. */
const XaiVars = z.object({
  XAI_API_KEY: secret(8),
  XAI_REALTIME_URL: optionalUrl,
  /** Default grok-voice-latest. */
  XAI_MODEL: optionalString,
});

/** Where a session on `model` connects: the model rides in the query only (none in session.update). */
export function xaiEndpoint(config: z.output<typeof XaiVars>, model: string): FamilyEndpoint {
  return {
    url: withModel(config.XAI_REALTIME_URL ?? XAI_URL, model),
    headers: { Authorization: `Bearer ${config.XAI_API_KEY ?? ""}` },
  };
}

export const xaiProvider: Provider<typeof XaiVars.shape> = {
  vars: XaiVars,
  unavailable: (config) =>
    config.XAI_API_KEY === undefined
      ? "the xai provider needs the XAI_API_KEY secret (wrangler secret put XAI_API_KEY)"
      : null,
  session({ vars: config, agent, audio }) {
    // A session's own model (an agent's, or its creator's where the agent allows it) wins.
    const model = agent.model ?? config.XAI_MODEL ?? XAI_DEFAULT_MODEL;
    return familySession({
      service: XAI_REALTIME,
      endpoint: xaiEndpoint(config, model),
      model,
      agent,
      audio,
    });
  },
};
