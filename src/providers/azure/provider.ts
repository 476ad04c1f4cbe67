/**
 * Azure's realtime voice services as a provider: Azure OpenAI Realtime (GA, `AZURE_ENDPOINT`
 * openai, the default) or Azure Voice Live (`voice-live`). Both speak OpenAI Realtime's events
 * (the family's one adapter, with each one's data: src/providers/openai/services.ts) at an
 * Azure URL, with the resource's key in an `api-key` header.
 *
 * Vars: `AZURE_API_KEY` (a secret), `AZURE_RESOURCE` (the resource's name, which its URLs are
 * made of) or `AZURE_REALTIME_URL` (the URL itself, e.g. a custom domain), `AZURE_MODEL` (the
 * deployment on Azure OpenAI, the model on Voice Live), `AZURE_API_VERSION` (Voice Live's).
 */
import { z } from "zod";
import { checkedString, oneOf, optionalString, optionalUrl, secret } from "../../var-schemas.js";
import type { Provider } from "../contract.js";
import { type FamilyEndpoint, familySession, withModel } from "../openai/family.js";
import {
  AZURE_OPENAI_REALTIME,
  AZURE_VOICE_LIVE,
  type RealtimeService,
} from "../openai/services.js";

/** A deployment named after its model is the portal's default; Voice Live's model too. */
const AZURE_DEFAULT_MODEL = "gpt-realtime";
/** Voice Live's generally available API version (Microsoft Learn, voice-live-how-to). */
const VOICE_LIVE_API_VERSION = "2025-10-01";

/** The Worker vars Azure reads. Secret: AZURE_API_KEY. */
const AzureVars = z.object({
  AZURE_API_KEY: secret(8),
  /** "openai" (Azure OpenAI Realtime, GA) or "voice-live" (Azure Voice Live). */
  AZURE_ENDPOINT: oneOf(["openai", "voice-live"], "openai"),
  /** The resource's name: `{name}.openai.azure.com`, `{name}.services.ai.azure.com`. */
  AZURE_RESOURCE: checkedString("an Azure resource name (letters, digits, hyphens)", (v) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/.test(v))
      throw new Error("is not a resource name (letters, digits and hyphens, at most 63)");
  }),
  /** The WebSocket URL itself, without the model (it overrides AZURE_RESOURCE's). */
  AZURE_REALTIME_URL: optionalUrl,
  /** The deployment (Azure OpenAI) or the model (Voice Live); default gpt-realtime. */
  AZURE_MODEL: optionalString,
  /** Voice Live's `api-version`; default 2025-10-01. */
  AZURE_API_VERSION: checkedString("an API version, e.g. 2025-10-01", (v) => {
    if (!/^\d{4}-\d{2}-\d{2}(-preview)?$/.test(v))
      throw new Error("is not an API version (YYYY-MM-DD, or YYYY-MM-DD-preview)");
  }),
});
export type AzureVars = z.output<typeof AzureVars>;

/** The endpoint's URL without the model, or null when neither setting names one. */
export function azureUrl(config: AzureVars): string | null {
  if (config.AZURE_REALTIME_URL !== undefined) return config.AZURE_REALTIME_URL;
  const resource = config.AZURE_RESOURCE;
  if (resource === undefined) return null;
  if (config.AZURE_ENDPOINT === "openai")
    return `wss://${resource}.openai.azure.com/openai/v1/realtime`;
  const url = new URL(`wss://${resource}.services.ai.azure.com/voice-live/realtime`);
  url.searchParams.set("api-version", config.AZURE_API_VERSION ?? VOICE_LIVE_API_VERSION);
  return url.toString();
}

/**
 * A session on `model`: the service the endpoint speaks, and where it connects (both name
 * the model, a deployment on Azure OpenAI, in the query; the key rides in `api-key`).
 */
export function azureEndpoint(
  config: AzureVars,
  model: string,
): { service: RealtimeService; endpoint: FamilyEndpoint } {
  const base = azureUrl(config) ?? "wss://azure-resource-unset.invalid/";
  return {
    service: config.AZURE_ENDPOINT === "openai" ? AZURE_OPENAI_REALTIME : AZURE_VOICE_LIVE,
    endpoint: { url: withModel(base, model), headers: { "api-key": config.AZURE_API_KEY ?? "" } },
  };
}

export const azureProvider: Provider<typeof AzureVars.shape> = {
  vars: AzureVars,
  unavailable(config) {
    if (config.AZURE_API_KEY === undefined)
      return "the azure provider needs the AZURE_API_KEY secret (wrangler secret put AZURE_API_KEY)";
    if (azureUrl(config) === null)
      return "the azure provider needs AZURE_RESOURCE (the resource's name) or AZURE_REALTIME_URL";
    return null;
  },
  session({ vars: config, agent, audio }) {
    const model = agent.model ?? config.AZURE_MODEL ?? AZURE_DEFAULT_MODEL;
    return familySession({ ...azureEndpoint(config, model), model, agent, audio });
  },
};
