/** Gemini Live (Developer API or Vertex AI) as a provider. */
import { z } from "zod";
import { checkedString, oneOf, optionalString, optionalUrl } from "../../var-schemas.js";
import type { ModelCapabilities, RebuiltContext } from "../../vocabulary/model.js";
import type { AgentSpec, ModelRoute } from "../../vocabulary/provider-adapter.js";
import { callIdPrefix, type Provider } from "../contract.js";
import { openWebSocket } from "../websocket.js";
import { GeminiLiveAdapter } from "./adapter.js";
import { capabilitiesFor } from "./capabilities.js";
import {
  defaultGeminiModel,
  type GeminiEndpointSettings,
  geminiConnection,
  geminiEndpointProblem,
} from "./endpoint.js";
import { shutdownWarning } from "./lifecycle.js";
import { toolDeclaration } from "./tool-declaration.js";

/** The Worker vars Gemini Live reads. Secrets: GEMINI_API_KEY, VERTEX_ACCESS_TOKEN. */
export const GeminiVars = z.object({
  GEMINI_API_KEY: optionalString,
  GEMINI_LIVE_URL: optionalUrl,
  GEMINI_MODEL: optionalString,
  /** "developer" (the Gemini API, an API key) or "vertex" (Vertex AI, an access token). */
  GEMINI_ENDPOINT: oneOf(["developer", "vertex"], "developer"),
  VERTEX_PROJECT: optionalString,
  /** Default "us-central1". */
  VERTEX_LOCATION: optionalString,
  /** An OAuth access token for Vertex AI (minted outside liveline). */
  VERTEX_ACCESS_TOKEN: optionalString,
  /** JSON object overriding the model's capability record, e.g. {"silentHonoured":false}. */
  GEMINI_CAPABILITIES: checkedString(
    'a JSON object of booleans, e.g. {"silentHonoured":false}',
    (v) => capabilityOverrides(v),
  ),
  /** Context compression: unset = a sliding window at the service's defaults; N; "off". */
  GEMINI_COMPRESSION_TRIGGER_TOKENS: compressionSetting(),
});
type GeminiVars = z.output<typeof GeminiVars>;

/** The Gemini endpoint settings of these vars. */
export function geminiSettings(config: GeminiVars): GeminiEndpointSettings {
  return {
    endpoint: config.GEMINI_ENDPOINT,
    url: config.GEMINI_LIVE_URL,
    model: config.GEMINI_MODEL,
    apiKey: config.GEMINI_API_KEY,
    vertexProject: config.VERTEX_PROJECT,
    vertexLocation: config.VERTEX_LOCATION,
    vertexAccessToken: config.VERTEX_ACCESS_TOKEN,
  };
}

/** `GEMINI_CAPABILITIES`: a JSON object overriding the capability table for the model. */
const CapabilityOverrides = z
  .object({
    nonBlockingCalls: z.boolean(),
    resultScheduling: z.boolean(),
    turnCompleteWaitsForResults: z.boolean(),
    silentHonoured: z.boolean(),
  })
  .partial()
  .strict();

export function capabilityOverrides(raw: string | undefined): Partial<ModelCapabilities> {
  if (raw === undefined || raw.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error("GEMINI_CAPABILITIES must be a JSON object");
  }
  const parsed = CapabilityOverrides.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `GEMINI_CAPABILITIES: ${issue?.code === "unrecognized_keys" ? `unknown key ${issue.keys.join(", ")}` : `${issue?.path.join(".") ?? "value"} must be true or false`}`,
    );
  }
  return parsed.data;
}

/** The GEMINI_COMPRESSION_TRIGGER_TOKENS setting, checked with the rest of the settings. */
export function compressionSetting() {
  return checkedString('a positive whole number of tokens, or "off"', (v) => geminiCompression(v));
}

/**
 * `GEMINI_COMPRESSION_TRIGGER_TOKENS`: unset, a sliding window at the service's defaults
 * (sized for the model: the trigger is a share of its context window); a number, the
 * trigger in tokens; "off", no compression (the service's 15-minute audio limit applies).
 */
export function geminiCompression(raw: string | undefined): { triggerTokens?: number } | undefined {
  const value = raw?.trim() ?? "";
  if (value === "") return {};
  if (value === "off") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) {
    throw new Error('GEMINI_COMPRESSION_TRIGGER_TOKENS must be a positive integer or "off"');
  }
  return { triggerTokens: n };
}

/**
 * A session on a Gemini Live wire (the real service, or the simulator): one adapter per
 * connection, each with the agent's setup. Silent tools go NON_BLOCKING where the model can:
 * their results then carry SILENT.
 */
export function geminiWireSession(opts: {
  model: string;
  endpoint: string;
  capabilities: ModelCapabilities;
  agent: AgentSpec;
  modality: "AUDIO" | "TEXT";
  compression: { triggerTokens?: number } | undefined;
  /** How a fresh connection is seeded with a rebuilt context, where not liveline's way (a measurement arm's). */
  seed?: ((ctx: RebuiltContext) => unknown) | undefined;
  connect: (attempt: number) => Promise<WebSocket>;
}): ModelRoute {
  const { model, endpoint, capabilities, agent } = opts;
  const instance = crypto.randomUUID().slice(0, 8);
  const declarations = agent.tools.map((t) =>
    toolDeclaration(
      t.name,
      t.description,
      t.args,
      t.followUp === "silent" && capabilities.nonBlockingCalls ? "NON_BLOCKING" : "BLOCKING",
      t.inputSchema,
    ),
  );
  return {
    model,
    capabilities,
    // Gemini Live takes PCM16 only: a call's audio is converted on the way.
    audio: "pcm16",
    connect: opts.connect,
    adapter: (attempt) =>
      new GeminiLiveAdapter({
        model,
        endpoint,
        capabilities,
        callIdPrefix: callIdPrefix(attempt, instance),
        seed: opts.seed,
        setup: {
          systemInstruction: agent.systemInstruction,
          voiceName: agent.voice,
          languageCode: agent.language,
          declarations,
          responseModality: opts.modality,
          contextWindowCompression: opts.compression,
        },
      }),
  };
}

export const geminiProvider: Provider<typeof GeminiVars.shape> = {
  vars: GeminiVars,
  unavailable: (vars) => geminiEndpointProblem(geminiSettings(vars)),
  modelWarning(vars, model, now) {
    const settings = geminiSettings(vars);
    return shutdownWarning(model ?? defaultGeminiModel(settings), now);
  },
  session({ vars, agent }) {
    const settings = geminiSettings(vars);
    // A session's own model (an agent's, or its creator's where the agent allows it) wins.
    const connection = geminiConnection({ ...settings, model: agent.model ?? settings.model });
    const capabilities = capabilitiesFor(
      connection.model,
      connection.endpointLabel,
      capabilityOverrides(vars.GEMINI_CAPABILITIES),
    );
    return geminiWireSession({
      model: connection.model,
      endpoint: connection.endpointLabel,
      capabilities,
      agent,
      modality: "AUDIO",
      compression: geminiCompression(vars.GEMINI_COMPRESSION_TRIGGER_TOKENS),
      // Credentials ride in the URL (Developer API) or a header (Vertex); neither is logged.
      connect: () => openWebSocket(connection.url, connection.headers),
    });
  },
};
