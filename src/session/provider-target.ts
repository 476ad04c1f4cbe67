import { z } from "zod";
import { type Config, geminiSettings, type ProviderName } from "../config.js";
import type { UpstreamOpen } from "../core/effects.js";
import type { Env } from "../env.js";
import { GeminiLiveAdapter } from "../providers/gemini/adapter.js";
import { capabilitiesFor } from "../providers/gemini/capabilities.js";
import { geminiConnection } from "../providers/gemini/endpoint.js";
import { toolDeclaration } from "../providers/gemini/tool-declaration.js";
import { DEFAULT_KNOBS, KnobError, parseKnobs } from "../simulator/knobs.js";
import { handleSimulatorRequest } from "../simulator/object.js";
import type { AgentDefinition } from "../tools/define.js";
import type { ModelCapabilities } from "../vocabulary/model.js";
import { acceptUpgrade, type UpstreamTarget } from "./upstream-link.js";

/**
 * The model a simulated session asks for: the simulator serves each family as the service
 * does (2.x: turnComplete never waits for results; 3.1: every call blocks, text as
 * realtimeInput), and liveline reads the family's capabilities from the same table as for
 * the real service. `syncOnly=1` asks for 3.1. (`ignoreSilent=1` plays a model whose capability
 * record is wrong: liveline is not told, and its regeneration guard must catch the repeat.)
 */
function simulatorModel(knobs: URLSearchParams): string {
  const on = (name: string) => ["1", "true"].includes(knobs.get(name) ?? "");
  return on("syncOnly") ? "gemini-3.1-flash-live-preview" : "gemini-2.5-flash-live-preview";
}

/**
 * Simulator knobs for a session: `SIMULATOR_KNOBS` (a query string) as the default, then the
 * session's `metadata.simulator` (a query string or an object of knob values) on top.
 */
export function simulatorKnobs(
  envDefault: string | undefined,
  metadata: Record<string, unknown>,
): URLSearchParams {
  const knobs = new URLSearchParams(envDefault ?? "");
  const fromSession = metadata.simulator;
  if (typeof fromSession === "string") {
    for (const [k, v] of new URLSearchParams(fromSession)) knobs.set(k, v);
  } else if (fromSession && typeof fromSession === "object") {
    for (const [k, v] of Object.entries(fromSession)) knobs.set(k, String(v));
  }
  return knobs;
}

/**
 * Why a session's simulator knobs cannot be served (unknown names, values out of range), or
 * null: checked when the session is created, so that it is refused with the cause instead of
 * failing later on its model connection.
 */
export function simulatorKnobsProblem(
  envDefault: string | undefined,
  metadata: Record<string, unknown>,
): string | null {
  const knobs = simulatorKnobs(envDefault, metadata);
  const known = new Set([...Object.keys(DEFAULT_KNOBS), "modality"]);
  const unknown = [...knobs.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0)
    return `unknown simulator knob${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`;
  const modality = knobs.get("modality");
  if (modality !== null && modality !== "AUDIO" && modality !== "TEXT")
    return `modality must be "AUDIO" or "TEXT", got "${modality}"`;
  knobs.delete("modality");
  try {
    parseKnobs(knobs);
    return null;
  } catch (err) {
    if (err instanceof KnobError) return err.message;
    throw err;
  }
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
  if (!parsed.success)
    throw new Error(`GEMINI_CAPABILITIES: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
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
 * workerd opens an outbound WebSocket with a fetch carrying `Upgrade: websocket`, and its
 * fetch takes only http(s) URLs: wss:// becomes https://, ws:// becomes http://.
 */
export function fetchableUrl(url: string): string {
  return url.replace(/^wss:/i, "https:").replace(/^ws:/i, "http:");
}

export interface ProviderSetup {
  model: string;
  target: UpstreamTarget;
  capabilities: ModelCapabilities;
}

/** How a session reaches its model: the built-in simulator or Gemini Live. */
export function providerTarget(opts: {
  provider: ProviderName;
  config: Config;
  env: Env;
  sessionId: string;
  agent: AgentDefinition;
  metadata: Record<string, unknown>;
  /** The naive relay (a measurement arm): seeds a rebuild the way frameworks did. */
  naive?: boolean | undefined;
}): ProviderSetup {
  const { provider, config, env, sessionId, agent } = opts;
  let model: string;
  let endpoint: string;
  let capabilities: ModelCapabilities | undefined;
  let connect: (attempt: number) => Promise<WebSocket>;
  let modality: "AUDIO" | "TEXT";
  // Sliding-window compression on by default: without it audio sessions end after ~15 min.
  const compression = geminiCompression(env.GEMINI_COMPRESSION_TRIGGER_TOKENS);
  switch (provider) {
    case "simulator": {
      const knobs = simulatorKnobs(env.SIMULATOR_KNOBS, opts.metadata);
      model = simulatorModel(knobs);
      endpoint = "simulator";
      capabilities = capabilitiesFor(model, endpoint);
      modality = knobs.get("modality") === "AUDIO" ? "AUDIO" : "TEXT";
      knobs.delete("modality");
      connect = (attempt) => {
        const q = new URLSearchParams(knobs);
        q.set("session", `${sessionId}-${attempt}`);
        const request = new Request(`https://liveline.internal/simulator/gemini?${q}`, {
          headers: { Upgrade: "websocket" },
        });
        return acceptUpgrade(handleSimulatorRequest(request, env));
      };
      break;
    }
    case "gemini": {
      const connection = geminiConnection(geminiSettings(config));
      model = connection.model;
      endpoint = connection.endpointLabel;
      capabilities = capabilitiesFor(model, endpoint, capabilityOverrides(env.GEMINI_CAPABILITIES));
      modality = "AUDIO";
      // Credentials ride in the URL (Developer API) or a header (Vertex); neither is logged.
      connect = () =>
        acceptUpgrade(
          fetch(fetchableUrl(connection.url), {
            headers: { Upgrade: "websocket", ...connection.headers },
          }),
        );
      break;
    }
    case "openai":
      throw new Error("the openai provider is not available yet");
  }
  // Ids made up for calls that came without one must never repeat in the session's log,
  // also across restarts of the object: a random part per instance, a number per connection.
  const instance = crypto.randomUUID().slice(0, 8);
  const makeAdapter = (attempt: number) =>
    new GeminiLiveAdapter({
      model,
      endpoint,
      capabilities,
      callIdPrefix: `c${instance}-${attempt}`,
      seedAsToolParts: opts.naive === true,
    });
  const caps = makeAdapter(0).capabilities;
  return {
    model,
    capabilities: caps,
    target: {
      connect,
      adapter: makeAdapter,
      setupFrame(adapter: GeminiLiveAdapter, open: UpstreamOpen, seeded: boolean): string {
        return adapter.setupMessage({
          systemInstruction: agent.systemInstruction,
          declarations: agent.tools.map((t) =>
            toolDeclaration(
              t.name,
              t.description,
              t.args,
              // Silent tools go NON_BLOCKING where the model can: their results then carry SILENT.
              t.followUp === "silent" && caps.nonBlockingCalls ? "NON_BLOCKING" : "BLOCKING",
            ),
          ),
          responseModality: modality,
          contextWindowCompression: compression,
          resumptionHandle: open.mode === "resume" ? open.handle : undefined,
          initialHistoryInClientContent: seeded,
        });
      },
    },
  };
}
