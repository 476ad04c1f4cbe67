/**
 * Where a Gemini Live session connects and how it authenticates: the Developer API (an API
 * key in `?key=`) or Vertex AI (an OAuth access token in the Authorization header, a model
 * given as a resource path, the LlmBidiService URL). What differs between the two on the
 * wire is decided here and in the capability table (see docs/MODELS.md's comparison table).
 */
import { DEFAULT_GEMINI_LIVE_URL, geminiUrl } from "./capabilities.js";
import { CURRENT_GEMINI_LIVE_MODEL } from "./lifecycle.js";

/** A current model (lifecycle.ts): the 2.5 previews were shut down in October 2026. */
const DEFAULT_DEVELOPER_MODEL = CURRENT_GEMINI_LIVE_MODEL;
/** GA on Vertex (cloud.google.com Live API overview, supported models). */
const DEFAULT_VERTEX_MODEL = "gemini-live-2.5-flash-native-audio";
const DEFAULT_VERTEX_LOCATION = "us-central1";

export type GeminiEndpointKind = "developer" | "vertex";

export interface GeminiEndpointSettings {
  endpoint: GeminiEndpointKind;
  /** Overrides the endpoint's URL (a regional or private endpoint). */
  url?: string | undefined;
  model?: string | undefined;
  apiKey?: string | undefined;
  vertexProject?: string | undefined;
  vertexLocation?: string | undefined;
  vertexAccessToken?: string | undefined;
}

interface GeminiConnection {
  /** The URL to open, credentials included where the endpoint wants them there. Never log it. */
  url: string;
  /** Extra request headers (Vertex: the access token). Never log them. */
  headers: Record<string, string>;
  /** The model as the setup names it. */
  model: string;
  /** What the adapter and the capability table read to tell the endpoints apart. */
  endpointLabel: string;
}

/** The model these settings ask for when a session names none. */
export function defaultGeminiModel(s: GeminiEndpointSettings): string {
  return s.model ?? (s.endpoint === "developer" ? DEFAULT_DEVELOPER_MODEL : DEFAULT_VERTEX_MODEL);
}

/** Why these settings cannot connect, or null when they can. */
export function geminiEndpointProblem(s: GeminiEndpointSettings): string | null {
  if (s.endpoint === "developer") {
    return s.apiKey ? null : "the gemini provider needs the GEMINI_API_KEY secret";
  }
  const missing = [
    ...(s.vertexAccessToken ? [] : ["the VERTEX_ACCESS_TOKEN secret"]),
    ...(s.vertexProject || s.model?.startsWith("projects/") ? [] : ["VERTEX_PROJECT"]),
  ];
  return missing.length === 0 ? null : `Gemini on Vertex AI needs ${missing.join(" and ")}`;
}

export function geminiConnection(s: GeminiEndpointSettings): GeminiConnection {
  const problem = geminiEndpointProblem(s);
  if (problem !== null) throw new Error(problem);
  if (s.endpoint === "developer") {
    const model = s.model ?? DEFAULT_DEVELOPER_MODEL;
    const base = s.url ?? DEFAULT_GEMINI_LIVE_URL;
    return { url: geminiUrl(base, s.apiKey!), headers: {}, model, endpointLabel: base };
  }
  const location = s.vertexLocation ?? DEFAULT_VERTEX_LOCATION;
  const bare = s.model ?? DEFAULT_VERTEX_MODEL;
  // Vertex names the model by its full resource path (as the SDKs' Vertex converters do).
  const model = bare.startsWith("projects/")
    ? bare
    : `projects/${s.vertexProject}/locations/${location}/publishers/google/models/${bare}`;
  const url =
    s.url ??
    `wss://${location}-aiplatform.googleapis.com/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent`;
  return {
    url,
    headers: { Authorization: `Bearer ${s.vertexAccessToken}` },
    model,
    endpointLabel: "vertex",
  };
}
