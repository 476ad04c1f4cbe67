/**
 * OpenAI Realtime (GA) as a provider: `OPENAI_API_KEY` (a secret), `OPENAI_MODEL`,
 * `OPENAI_REALTIME_URL`; its SIP calls' webhooks are signed with `OPENAI_WEBHOOK_SECRET` (a
 * secret, src/http/routes/openai-sip.ts).
 */
import { z } from "zod";
import { checkedString, optionalString, optionalUrl, varsReader } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { openWebSocket } from "../websocket.js";
import { OpenAIRealtimeAdapter } from "./adapter.js";
import { familySession, withModel } from "./family.js";
import { OPENAI_REALTIME } from "./services.js";
import { openaiSipCalls } from "./sip-calls.js";
import { webhookKey } from "./webhook-signature.js";

const OPENAI_REALTIME_URL = "wss://api.openai.com/v1/realtime";
const OPENAI_DEFAULT_MODEL = "gpt-realtime";

/** The Worker vars OpenAI Realtime reads. Secret: OPENAI_API_KEY. */
const OpenAIVars = z.object({
  OPENAI_API_KEY: optionalString,
  OPENAI_REALTIME_URL: optionalUrl,
  /** Default gpt-realtime. */
  OPENAI_MODEL: optionalString,
  /** The project webhook's signing secret (`whsec_…`): SIP calls' `realtime.call.incoming`. */
  OPENAI_WEBHOOK_SECRET: checkedString("a webhook signing secret (whsec_ then base64)", (v) => {
    if (v !== v.trim()) throw new Error("has surrounding whitespace (a paste error?)");
    if (webhookKey(v) === null) throw new Error("starts with whsec_ but no base64 follows");
  }),
});
type OpenAIVars = z.output<typeof OpenAIVars>;

const openaiVarsOf = varsReader(OpenAIVars);

/** The secret OpenAI signs its webhooks with (a Worker env's), or undefined when unset. */
export function openaiWebhookSecret(env: object): string | undefined {
  return openaiVarsOf(env).OPENAI_WEBHOOK_SECRET;
}

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
    const session = familySession({
      service: OPENAI_REALTIME,
      endpoint: { url, headers },
      model,
      agent,
      audio,
    });
    return {
      ...session,
      // A phone call that reached the service by SIP: accepted as this agent, this session its
      // sideband; transferred and hung up through the service.
      directCallService: openaiSipCalls({
        realtimeUrl: config.OPENAI_REALTIME_URL ?? OPENAI_REALTIME_URL,
        headers,
        fetch: (request) => fetch(request),
        openSocket: (sideband) => openWebSocket(sideband, headers),
        adapter: () => new OpenAIRealtimeAdapter({ model, agent, audio, service: OPENAI_REALTIME }),
      }),
    };
  },
};
