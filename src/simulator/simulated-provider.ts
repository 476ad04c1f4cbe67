/**
 * The built-in simulator as a provider: liveline's sessions reach the Gemini Live stand-in
 * (src/simulator) internally, on the Gemini wire, with the session's knobs.
 */

import { z } from "zod";
import type { Provider, WireArm } from "../providers/contract.js";
import { capabilitiesFor } from "../providers/gemini/capabilities.js";
import {
  compressionSetting,
  geminiCompression,
  geminiWireSession,
} from "../providers/gemini/provider.js";
import {
  GPT_LIVE_CAPABILITIES,
  GptLiveAdapter,
  type GptLiveAdapterOptions,
} from "../providers/gpt-live/adapter.js";
import {
  OpenAIRealtimeAdapter,
  type OpenAIRealtimeAdapterOptions,
} from "../providers/openai/adapter.js";
import {
  AZURE_VOICE_LIVE,
  OPENAI_REALTIME,
  type RealtimeService,
  XAI_REALTIME,
} from "../providers/openai/services.js";
import { acceptUpgrade, openWebSocket } from "../providers/websocket.js";
import { checkedString } from "../var-schemas.js";
import type { RebuiltContext } from "../vocabulary/model.js";
import type { ProviderAdapter } from "../vocabulary/provider-adapter.js";
import { DEFAULT_KNOBS, KnobError, parseKnobs } from "./knobs.js";
import { handleSimulatorRequest, type SimulatorEnv } from "./object.js";
import { GPT_LIVE_PATH } from "./route.js";
import { simulatedDirectCalls, simulatedSipCalls } from "./simulated-calls.js";

/**
 * How a measurement arm speaks each wire the simulator serves, in place of liveline (the
 * naive relay of scripts/measurement, on sessions created with `metadata.naive: true`): the
 * seed of a rebuilt context on Gemini Live, the adapter on the OpenAI Realtime family and on
 * GPT-Live. The provider contract carries it opaque (`WireArm`); the simulator reads it.
 */
export interface SimulatedWireArm {
  /** Gemini Live: the frame that seeds a fresh connection with a rebuilt context. */
  geminiSeed(ctx: RebuiltContext): unknown;
  /** The OpenAI Realtime family: the adapter the arm runs in place of liveline's. */
  openaiAdapter(opts: OpenAIRealtimeAdapterOptions): ProviderAdapter;
  /** GPT-Live: the adapter the arm runs in place of liveline's. */
  gptLiveAdapter(opts: GptLiveAdapterOptions): ProviderAdapter;
}

/** A session's measurement arm as the simulator speaks it; one it cannot speak is refused loudly. */
function simulatedWireArm(arm: WireArm | null): SimulatedWireArm | null {
  if (arm === null) return null;
  if (isSimulatedWireArm(arm)) return arm;
  throw new Error("simulator: this measurement arm does not say how to speak the simulated wires");
}

function isSimulatedWireArm(arm: object): arm is SimulatedWireArm {
  return ["geminiSeed", "openaiAdapter", "gptLiveAdapter"].every(
    (name) => typeof (arm as Record<string, unknown>)[name] === "function",
  );
}

/** The Worker vars a simulated session reads (its binding: the simulator's namespace). */
const SimulatorVars = z.object({
  /** Default knobs, as a query string (e.g. "timeScale=0"). */
  SIMULATOR_KNOBS: checkedString(
    "a query string of simulator knobs (src/simulator/README.md), e.g. timeScale=0&race=1",
    (v) => {
      // Names only: the value of a setting is never shown.
      const bad = [...new URLSearchParams(v)].filter(
        ([name, value]) =>
          simulatorKnobsProblem(new URLSearchParams([[name, value]]).toString(), {}) !== null,
      );
      if (bad.length > 0)
        throw new Error(`unknown or out-of-range knobs: ${bad.map(([n]) => n).join(", ")}`);
    },
  ),
  /** As for Gemini: the simulator's Gemini face compresses as the service does. */
  GEMINI_COMPRESSION_TRIGGER_TOKENS: compressionSetting(),
});

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
  const { simulator, naive } = metadata;
  const isObject = typeof simulator === "object" && simulator !== null && !Array.isArray(simulator);
  if (simulator !== undefined && typeof simulator !== "string" && !isObject)
    return "metadata.simulator must be an object of knobs or a query string";
  if (naive !== undefined && typeof naive !== "boolean")
    return "metadata.naive must be true or false";
  const knobs = simulatorKnobs(envDefault, metadata);
  const known = new Set([...Object.keys(DEFAULT_KNOBS), "modality", "wire", "endpoint", "replay"]);
  const unknown = [...knobs.keys()].filter((name) => !known.has(name));
  if (unknown.length > 0)
    return `unknown simulator knob${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`;
  const modality = knobs.get("modality");
  if (modality !== null && modality !== "AUDIO" && modality !== "TEXT")
    return `modality must be "AUDIO" or "TEXT", got "${modality}"`;
  knobs.delete("modality");
  const wire = knobs.get("wire");
  if (wire !== null && !SIMULATED_WIRES.includes(wire))
    return `wire must be one of ${SIMULATED_WIRES.map((w) => `"${w}"`).join(", ")}, got "${wire}"`;
  knobs.delete("wire");
  const endpoint = knobs.get("endpoint");
  if (endpoint !== null && endpoint !== "developer" && endpoint !== "vertex")
    return `endpoint must be "developer" or "vertex", got "${endpoint}"`;
  knobs.delete("endpoint");
  const replay = knobs.get("replay");
  if (replay !== null && !isLoopbackSocketUrl(replay))
    return `replay must be a ws:// URL on this machine (127.0.0.1 or localhost), got "${replay}"`;
  knobs.delete("replay");
  try {
    parseKnobs(knobs);
    return null;
  } catch (err) {
    if (err instanceof KnobError) return err.message;
    throw err;
  }
}

/**
 * The OpenAI Realtime family's wires the simulator speaks: each service's face (its path, see
 * src/simulator/route.ts) and the service's data the one adapter is set up with. `azure` is
 * Azure Voice Live (Azure OpenAI Realtime's wire is OpenAI's, at another URL).
 */
const FAMILY_WIRES: Record<string, { path: string; service: RealtimeService; model: string }> = {
  openai: { path: "/simulator/openai", service: OPENAI_REALTIME, model: "gpt-realtime" },
  xai: { path: "/simulator/xai", service: XAI_REALTIME, model: "grok-voice-latest" },
  azure: { path: "/simulator/voice-live", service: AZURE_VOICE_LIVE, model: "gpt-realtime" },
};

/** The wires a simulated session may speak (`wire` knob). */
const SIMULATED_WIRES = ["gemini", "gpt-live", ...Object.keys(FAMILY_WIRES)];

/** A WebSocket URL on this machine: where `npm run replay`'s scripted model listens. */
function isLoopbackSocketUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "ws:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost");
  } catch {
    return false;
  }
}

export const simulatorProvider: Provider<typeof SimulatorVars.shape, SimulatorEnv> = {
  vars: SimulatorVars,
  unavailable: () => null,
  metadataProblem(vars, metadata) {
    const problem = simulatorKnobsProblem(vars.SIMULATOR_KNOBS, metadata);
    return problem === null
      ? null
      : `simulator knobs (SIMULATOR_KNOBS, metadata.simulator): ${problem}`;
  },
  session({ vars, bindings, sessionId, agent, metadata, audio, wireArm: arm }) {
    const wireArm = simulatedWireArm(arm);
    const knobs = simulatorKnobs(vars.SIMULATOR_KNOBS, metadata);
    const modality = knobs.get("modality") === "AUDIO" ? "AUDIO" : "TEXT";
    knobs.delete("modality");
    const wire = knobs.get("wire") ?? "gemini";
    knobs.delete("wire");
    // The Gemini face declared as Vertex AI serves it (GEMINI_ENDPOINT=vertex): liveline reads
    // Vertex's record (every call BLOCKING, no scheduling) and encodes for it.
    const endpoint = knobs.get("endpoint") === "vertex" ? "vertex" : "simulator";
    knobs.delete("endpoint");
    // A recorded model wire played back (`npm run replay`): the scripted model at that URL
    // speaks this wire in place of the simulator.
    const replay = knobs.get("replay");
    knobs.delete("replay");
    const connectTo = (path: string, attempt: number) => {
      if (replay !== null)
        return openWebSocket(
          `${replay.replace(/\/+$/, "")}/${wire}?session=${sessionId}-${attempt}`,
        );
      const q = new URLSearchParams(knobs);
      q.set("session", `${sessionId}-${attempt}`);
      const request = new Request(`https://liveline.internal${path}?${q}`, {
        headers: { Upgrade: "websocket" },
      });
      return acceptUpgrade(handleSimulatorRequest(request, bindings));
    };
    const face = Object.hasOwn(FAMILY_WIRES, wire) ? FAMILY_WIRES[wire] : undefined;
    if (face !== undefined) {
      // The family's face for the service: the same knobs where they apply (src/simulator/README.md).
      const model = agent.model ?? face.model;
      const outputModality = modality === "AUDIO" ? "audio" : "text";
      const { service } = face;
      return {
        model,
        capabilities: service.capabilities,
        audio,
        connect: (attempt) => connectTo(face.path, attempt),
        adapter: () => {
          const opts = { model, agent, modality: outputModality, audio, service } as const;
          return wireArm?.openaiAdapter(opts) ?? new OpenAIRealtimeAdapter(opts);
        },
        sharedConnectionKey: `${wire} ${model} ${agent.voice ?? ""}`,
        // OpenAI's SIP calls, on the stand-in (src/simulator/openai-sip).
        ...(wire === "openai"
          ? {
              directCallService: simulatedSipCalls(
                bindings,
                () => new OpenAIRealtimeAdapter({ model, agent, audio, service }),
              ),
            }
          : {}),
      };
    }
    if (wire === "gpt-live") {
      // The GPT-Live face, at the service's own path (src/simulator/gpt-live).
      const model = agent.model ?? "gpt-live-1";
      return {
        model,
        capabilities: GPT_LIVE_CAPABILITIES,
        audio,
        connect: (attempt) => connectTo(GPT_LIVE_PATH, attempt),
        adapter: () => {
          const opts = { model, backendModel: "gpt-5-mini", agent, audio } as const;
          return wireArm?.gptLiveAdapter(opts) ?? new GptLiveAdapter(opts);
        },
        // A browser's WebRTC call, on the face (its browser a stand-in); the session its sideband.
        directCallService: simulatedDirectCalls(bindings, knobs, sessionId, () => {
          return new GptLiveAdapter({ model, backendModel: "gpt-5-mini", agent, audio });
        }),
      };
    }
    // The session's own model (its agent's or its creator's) picks the family it is served as.
    const model = agent.model ?? simulatorModel(knobs);
    const family = capabilitiesFor(model, endpoint);
    return geminiWireSession({
      model,
      endpoint,
      // The simulator honours SILENT where the family takes it (unless `ignoreSilent=1` plays a
      // model that does not while its record says so): the record says what it does, so the
      // SILENT path is exercised.
      capabilities: {
        ...family,
        silentHonoured: family.nonBlockingCalls && family.resultScheduling,
      },
      agent,
      modality,
      compression: geminiCompression(vars.GEMINI_COMPRESSION_TRIGGER_TOKENS),
      seed: wireArm?.geminiSeed,
      connect: (attempt) => connectTo("/simulator/gemini", attempt),
    });
  },
};
