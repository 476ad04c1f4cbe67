/**
 * A session on a service of the OpenAI Realtime family: where it connects (its URL, with the
 * model where the service wants it), with what credential (a header), and the one adapter set
 * up with the service's data (./services.ts). Each provider of the family (openai, xai, azure)
 * reads its own vars into this.
 */
import type { AgentSpec, AudioEncoding, ModelRoute } from "../../vocabulary/provider-adapter.js";
import { openWebSocket } from "../websocket.js";
import { OpenAIRealtimeAdapter } from "./adapter.js";
import type { RealtimeService } from "./services.js";

export interface FamilyEndpoint {
  /** The WebSocket URL, the model (or deployment) already in its query where it belongs. */
  url: string;
  /** The credential, as the service takes it (`Authorization: Bearer …`, Azure's `api-key`). */
  headers: Record<string, string>;
}

export interface FamilySessionRequest {
  service: RealtimeService;
  endpoint: FamilyEndpoint;
  /** The model as the service names it (a deployment's name on Azure OpenAI). */
  model: string;
  agent: AgentSpec;
  audio: AudioEncoding;
}

/** `url` with `?model=` set (the query the family's services read the model from). */
export function withModel(url: string, model: string): string {
  const out = new URL(url);
  out.searchParams.set("model", model);
  return out.toString();
}

export function familySession(request: FamilySessionRequest): ModelRoute {
  const { service, endpoint, model, agent, audio } = request;
  return {
    model,
    capabilities: service.capabilities,
    // The family takes G.711 μ-law natively: a call's audio passes untouched.
    audio,
    // The credential rides in a header; it is never logged nor sent to clients.
    connect: () => openWebSocket(endpoint.url, endpoint.headers),
    adapter: () => new OpenAIRealtimeAdapter({ model, agent, audio, service }),
    // Agents on one model and voice hand off in place (session.update), see updateAgent.
    sharedConnectionKey: `${endpoint.url} ${agent.voice ?? ""}`,
  };
}
