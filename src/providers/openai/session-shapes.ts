/**
 * `session.update` in each shape of the family (./services.ts, `SessionShape`): a connection's
 * setup and a handoff's update, for an agent. Every frame is checked against its shape's
 * strict schema before it leaves.
 */
import type { AgentSpec } from "../../vocabulary/provider-adapter.js";
import { parametersOf } from "../function-tools.js";
import { FlatSessionUpdate, XaiSessionUpdate } from "./dialect-schemas.js";
import { ClientEvent } from "./schemas.js";
import type { RealtimeService } from "./services.js";

/** What a connection's session is set up from (the adapter's options, resolved). */
export interface SessionSettings {
  service: RealtimeService;
  model: string;
  /** "audio" (with a transcript) or "text" (where the service can write only). */
  modality: "audio" | "text";
  /** G.711 μ-law both ways (a phone call's), else PCM. */
  mulaw: boolean;
  /** The model that transcribes the user's speech (the services that take one). */
  transcriptionModel: string;
}

/** OpenAI's and Voice Live's function tools; xAI's are the same objects. */
function functionTools(agent: AgentSpec) {
  return agent.tools.map((tool) => ({
    type: "function" as const,
    name: tool.name,
    description: tool.description,
    parameters: parametersOf(tool),
  }));
}

/** The agent's language's ISO-639-1 part (BCP-47 `pt-BR` → `pt`), where there is one. */
function languageOf(agent: AgentSpec): string | undefined {
  const language = agent.language;
  return language === undefined ? undefined : (language.split("-")[0] ?? language);
}

/** The first frame of a connection: the whole session as the agent needs it. */
export function setupSession(settings: SessionSettings, agent: AgentSpec): string {
  switch (settings.service.sessionShape) {
    case "ga":
      return gaSetup(settings, agent);
    case "xai":
      return xaiSetup(settings, agent);
    case "flat":
      return flatSetup(settings, agent);
    default: {
      const unreachable: never = settings.service.sessionShape;
      throw new Error(`unknown session shape ${String(unreachable)}`);
    }
  }
}

/**
 * A handoff on a live connection: the new agent's instructions, tools and transcription
 * language. The voice and audio formats stay as the connection was set up.
 */
export function agentUpdate(settings: SessionSettings, agent: AgentSpec): string {
  switch (settings.service.sessionShape) {
    case "ga":
      return ga({
        type: "session.update",
        session: {
          ...gaAgent(agent),
          audio: { input: { transcription: gaTranscription(settings, agent) } },
        },
      });
    case "xai": {
      const transcription = xaiTranscription(agent);
      return xai({
        type: "session.update",
        session: {
          instructions: agent.systemInstruction,
          tools: functionTools(agent),
          ...(transcription === undefined ? {} : { audio: { input: { transcription } } }),
        },
      });
    }
    case "flat":
      return flat({
        type: "session.update",
        session: {
          ...flatAgent(agent),
          input_audio_transcription: flatTranscription(settings, agent),
        },
      });
    default: {
      const unreachable: never = settings.service.sessionShape;
      throw new Error(`unknown session shape ${String(unreachable)}`);
    }
  }
}

// --- OpenAI GA -------------------------------------------------------------------------

const PCM16_24K = { type: "audio/pcm", rate: 24000 } as const;
/** G.711 μ-law at 8 kHz (the rate is implied). */
const PCMU = { type: "audio/pcmu" } as const;

function ga(event: ClientEvent): string {
  return JSON.stringify(ClientEvent.parse(event));
}

function gaAgent(agent: AgentSpec) {
  return {
    type: "realtime" as const,
    instructions: agent.systemInstruction,
    tools: functionTools(agent),
    tool_choice: "auto" as const,
  };
}

function gaTranscription(settings: SessionSettings, agent: AgentSpec) {
  const language = languageOf(agent);
  return {
    model: settings.transcriptionModel,
    ...(language === undefined ? {} : { language }),
  };
}

function gaSetup(settings: SessionSettings, agent: AgentSpec): string {
  const format = settings.mulaw ? PCMU : PCM16_24K;
  const voice = agent.voice;
  return ga({
    type: "session.update",
    session: {
      ...gaAgent(agent),
      ...(settings.service.modelInSession ? { model: settings.model } : {}),
      output_modalities: [settings.modality],
      audio: {
        input: {
          format,
          transcription: gaTranscription(settings, agent),
          turn_detection: { type: "server_vad", create_response: true, interrupt_response: true },
        },
        output: voice === undefined ? { format } : { format, voice },
      },
    },
  });
}

// --- xAI -------------------------------------------------------------------------------

function xai(event: XaiSessionUpdate): string {
  return JSON.stringify(XaiSessionUpdate.parse(event));
}

/** xAI biases its transcription by a language hint (BCP-47 as the agent gives it). */
function xaiTranscription(agent: AgentSpec) {
  return agent.language === undefined ? undefined : { language_hint: agent.language };
}

function xaiSetup(settings: SessionSettings, agent: AgentSpec): string {
  const rate = (r: 16000 | 24000) => ({ type: "audio/pcm" as const, rate: r });
  // Client audio goes at the rate clients send (16 kHz); model audio comes at 24 kHz, as
  // `ready` says for every PCM session.
  const input = settings.mulaw ? PCMU : rate(settings.service.inputRate);
  const output = settings.mulaw ? PCMU : rate(24000);
  const transcription = xaiTranscription(agent);
  return xai({
    type: "session.update",
    session: {
      instructions: agent.systemInstruction,
      ...(agent.voice === undefined ? {} : { voice: agent.voice }),
      tools: functionTools(agent),
      turn_detection: { type: "server_vad" },
      audio: {
        input: { format: input, ...(transcription === undefined ? {} : { transcription }) },
        output: { format: output },
      },
    },
  });
}

// --- Azure Voice Live (flat) -----------------------------------------------------------

function flat(event: FlatSessionUpdate): string {
  return JSON.stringify(FlatSessionUpdate.parse(event));
}

function flatAgent(agent: AgentSpec) {
  return {
    instructions: agent.systemInstruction,
    tools: functionTools(agent),
    tool_choice: "auto" as const,
  };
}

function flatTranscription(settings: SessionSettings, agent: AgentSpec) {
  const language = languageOf(agent);
  return { model: settings.transcriptionModel, ...(language === undefined ? {} : { language }) };
}

/**
 * A Voice Live voice: an Azure neural voice is named with its locale (`en-US-Ava:…`), the
 * model's own voices are not (`alloy`).
 */
function flatVoice(name: string) {
  return /^[a-z]{2,3}-[A-Z]{2}-/.test(name)
    ? { type: "azure-standard" as const, name }
    : { type: "openai" as const, name };
}

function flatSetup(settings: SessionSettings, agent: AgentSpec): string {
  const format = settings.mulaw ? ("g711_ulaw" as const) : ("pcm16" as const);
  return flat({
    type: "session.update",
    session: {
      ...flatAgent(agent),
      modalities: settings.modality === "audio" ? ["text", "audio"] : ["text"],
      ...(agent.voice === undefined ? {} : { voice: flatVoice(agent.voice) }),
      input_audio_format: format,
      ...(settings.mulaw ? {} : { input_audio_sampling_rate: settings.service.inputRate }),
      output_audio_format: format,
      turn_detection: { type: "server_vad", create_response: true, interrupt_response: true },
      input_audio_transcription: flatTranscription(settings, agent),
    },
  });
}
